"""The guides in docs/ are pages: each one is served to a logged-in user, its links to other
guides lead to pages that exist, and no page cites a repository file instead of linking."""

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.views.guides import guide_names

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "prb_annotate" / "templates"


@pytest.mark.django_db
def test_every_guide_is_a_page_and_its_links_to_guides_resolve(
    manager: User, login: Callable[[User], Client]
) -> None:
    client = login(manager)
    names = guide_names()
    assert {"ppi", "export", "statistics", "datasets"} <= set(names)
    index = client.get(reverse("guide_index")).content.decode()
    linked_pages: set[str] = set()
    for name in names:
        assert reverse("guide", args=[name]) in index
        page = client.get(reverse("guide", args=[name]))
        assert page.status_code == 200, name
        html = page.content.decode()
        title = (ROOT / "docs" / f"{name}.md").read_text().splitlines()[0].lstrip("# ").strip()
        assert title.split("`")[0].strip() in html
        # The README test's markers are comments for the test, not text for the reader.
        assert "readme-test" not in html, name
        linked_pages |= set(re.findall(r'href="(/guides/[^"#]+)', html))
    assert linked_pages, "the guides link to each other"
    for url in linked_pages:
        assert client.get(url).status_code == 200, url


@pytest.mark.django_db
def test_guides_need_a_login_and_serve_only_the_guides(
    client: Client, manager: User, login: Callable[[User], Client]
) -> None:
    assert client.get(reverse("guide", args=["ppi"])).status_code == 302
    staff = login(manager)
    assert staff.get("/guides/settings/").status_code == 404
    assert staff.get("/guides/..%2Fprb_annotate%2Fsettings/").status_code == 404


def test_no_page_cites_a_repository_guide_without_a_link() -> None:
    cited = []
    for template in TEMPLATES.rglob("*.html"):
        for line in template.read_text().splitlines():
            if "docs/" in line and ".md" in line and "standalone" not in line:
                cited.append(f"{template.name}: {line.strip()[:80]}")
    assert cited == []
