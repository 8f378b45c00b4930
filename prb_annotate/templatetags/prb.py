from django import template
from django.utils.safestring import SafeString

from prb_annotate.rendering import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    """Render untrusted Markdown to sanitized HTML: ``{{ pair.chosen|markdown }}``."""
    return render_markdown(text)
