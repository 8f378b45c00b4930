"""Markdown for untrusted model text: parsed without raw HTML, then sanitized.

Two layers on purpose: markdown-it with ``html=False`` escapes inline HTML, and nh3 (ammonia)
removes whatever a Markdown construct could still smuggle in (``javascript:`` links, event
handlers), so neither layer alone decides what reaches the browser.

Images are never loaded (a model's image address may point anywhere, and would be fetched by
every annotator's browser): an image becomes text naming its alt text and its address, so the
reader knows an image was there and what it claimed to show.
"""

from collections.abc import Sequence
from functools import lru_cache

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

ALLOWED_TAGS = {
    "a",
    "blockquote",
    "br",
    "code",
    "del",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "ol",
    "p",
    "pre",
    "strong",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
}
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}}
# The one class our own image rule writes; nh3 drops every other class value.
ALLOWED_CLASSES = {"em": {"md-image"}}
ALLOWED_URL_SCHEMES = {"http", "https", "mailto"}


def _image_as_text(
    renderer: RendererHTML,
    tokens: Sequence[Token],
    idx: int,
    options: OptionsDict,
    env: EnvType,
) -> str:
    """``![alt](address)`` as "[image: alt — address]", escaped like any other text."""
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env).strip()
    address = str(token.attrGet("src") or "")
    parts = [part for part in (alt, address) if part]
    text = "[image" + (": " + " — ".join(parts) if parts else "") + "]"
    return f'<em class="md-image">{escapeHtml(text)}</em>'


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    md.add_render_rule("image", _image_as_text)
    return md


def render_markdown(text: str) -> SafeString:
    html = _markdown().render(text or "")
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        allowed_classes=ALLOWED_CLASSES,
        url_schemes=ALLOWED_URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)  # noqa: S308 - sanitized by nh3 just above
