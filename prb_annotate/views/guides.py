"""The project's guides (the Markdown files in ``docs/``) served as pages, so that a page which
names a method's documentation links to it instead of citing a file in the repository.

Only the files found in ``docs/`` are served, by name (no path reaches the file system from the
URL); they are rendered through the same sanitising Markdown as untrusted text, with links
between guides pointing at their pages and HTML comments (the README test's markers) dropped.
"""

import re
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path, reverse
from django.utils.safestring import SafeString

from prb_annotate.web.rendering import render_markdown

GUIDES_DIR = Path(settings.BASE_DIR) / "docs"
COMMENT = re.compile(r"<!--.*?-->", re.S)
GUIDE_LINK = re.compile(r"\]\((?:\./)?([a-z0-9-]+)\.md(#[^)\s]*)?\)")
TITLE = re.compile(r"^#\s+(.+)$", re.M)


def guide_names() -> list[str]:
    """The guides there are, by file name without ``.md``, sorted."""
    return sorted(p.stem for p in GUIDES_DIR.glob("*.md"))


def guide_title(text: str, name: str) -> str:
    found = TITLE.search(text)
    return found.group(1).strip() if found else name


def linked(text: str) -> str:
    """The guide's Markdown with its links to other guides pointing at their pages."""

    def page(match: re.Match[str]) -> str:
        return f"]({reverse('guide', args=[match.group(1)])}{match.group(2) or ''})"

    return GUIDE_LINK.sub(page, COMMENT.sub("", text))


@lru_cache(maxsize=64)
def rendered(name: str, modified: float) -> tuple[str, SafeString]:
    """(title, HTML) of one guide; ``modified`` keys the cache to the file's version."""
    text = (GUIDES_DIR / f"{name}.md").read_text(encoding="utf-8")
    return guide_title(text, name), render_markdown(linked(text))


@login_required
def guide(request: HttpRequest, name: str) -> HttpResponse:
    if name not in guide_names():
        raise Http404("No such guide.")
    title, body = rendered(name, (GUIDES_DIR / f"{name}.md").stat().st_mtime)
    return render(request, "prb_annotate/guide.html", {"title": title, "body": body})


@login_required
def guide_index(request: HttpRequest) -> HttpResponse:
    guides = []
    for name in guide_names():
        text = (GUIDES_DIR / f"{name}.md").read_text(encoding="utf-8")
        guides.append((name, guide_title(text, name)))
    return render(request, "prb_annotate/guide_index.html", {"guides": guides})


urlpatterns = [
    path("guides/", guide_index, name="guide_index"),
    path("guides/<slug:name>/", guide, name="guide"),
]
