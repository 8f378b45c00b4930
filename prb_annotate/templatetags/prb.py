from django import template
from django.contrib.auth.models import User
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from prb_annotate.campaigns.members import study_participant
from prb_annotate.campaigns.qualification.rules import QUESTION_LABELS
from prb_annotate.formats.reading import text_length
from prb_annotate.languages import texts
from prb_annotate.models import Campaign
from prb_annotate.web.rendering import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str) -> SafeString:
    """Render untrusted Markdown to sanitized HTML: ``{{ pair.chosen|markdown }}``."""
    return render_markdown(text)


@register.filter
def reading_length(text: str) -> str:
    """A text's length and time to read, in words or, in scripts without spaces between
    words, characters: ``{{ pair.chosen|reading_length }}`` (formats/reading.py)."""
    return text_length(text).reading_text()


@register.inclusion_tag("prb_annotate/_return_link.html", takes_context=True)
def study_return_link(context: template.Context) -> dict[str, object]:
    """The "return the study" link, on every page a study participant sees of their campaign."""
    user, campaign = context.get("user"), context.get("campaign")
    # Study accounts have no password: others are answered without a query.
    shown = (
        isinstance(user, User)
        and isinstance(campaign, Campaign)
        and not user.has_usable_password()
        and study_participant(campaign, user)
    )
    return {"campaign": campaign, "shown": shown}


@register.filter(name="question_label")
def question_label(code: str) -> str:
    """The question a code names, as annotators read it: ``{{ code|question_label }}``."""
    return gettext(QUESTION_LABELS.get(code, code))


@register.simple_tag
def campaign_text(campaign: Campaign, name: str) -> str:
    """The campaign's text ``name`` (guidelines, consent text) in the reader's language where
    the campaign has it written in that language, else as the campaign has it."""
    return texts.campaign_text(campaign, name)
