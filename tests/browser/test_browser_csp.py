"""The Content-Security-Policy in a real Chromium: the main pages (home, annotate, audit,
dashboard, API docs, the browsable API and the rest a visitor meets) load and work with no
policy violation, as a ``securitypolicyviolation`` event or a console message would report it.
"""

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Dataset
from tests.conftest import make_user
from tests.support.browser import log_in
from tests.support.exports import annotated_campaign, import_dataset
from tests.support.pages import active_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.__violations.push(event.violatedDirective + " " + event.blockedURI);
});
"""


def watched_page(browser, problems: list[str]):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.add_init_script(RECORD_VIOLATIONS)

    def on_console(message) -> None:
        if message.type == "error" or "Content Security Policy" in message.text:
            problems.append(f"{page.url}: console {message.type}: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: problems.append(f"{page.url}: {error}"))
    return page


def visit(page, url: str, problems: list[str], check: Callable[[], None] | None = None) -> None:
    response = page.goto(url)
    assert response is not None, url
    assert response.status == 200, url
    assert "script-src 'self'" in response.headers["content-security-policy"], url
    if check is not None:
        check()
    page.wait_for_load_state("load")
    problems.extend(f"{url}: {v}" for v in page.evaluate("window.__violations"))


def test_the_main_pages_work_under_the_policy(
    live_server,
    browser,
    dataset: Dataset,
) -> None:
    manager = make_user("manager", staff=True)
    annotator = make_user("alice")
    raters = [make_user(name) for name in ("r1", "r2", "r3")]
    audited = annotated_campaign(import_dataset(), raters)
    pilot = active_campaign(dataset, annotator)
    add_member(pilot, User.objects.get(username="r1"))
    base = live_server.url
    problems: list[str] = []

    visitor = watched_page(browser, problems)
    visit(visitor, base + reverse("login"), problems)
    join = reverse("join", args=[pilot.invite_token])
    visit(visitor, f"{base}{join}?PROLIFIC_PID=abc&STUDY_ID=s1&SESSION_ID=x1", problems)

    page = watched_page(browser, problems)
    log_in(page, base, annotator.username)
    visit(page, base + reverse("home"), problems)

    def annotate_page_runs_its_script() -> None:
        page.wait_for_selector("#annotation-form")
        page.keyboard.press("5")  # annotate.js: a digit rates the focused criterion
        assert page.locator("input[type=radio]:checked").count() == 1

    visit(
        page, base + reverse("annotate", args=[pilot.pk]), problems, annotate_page_runs_its_script
    )
    visit(page, base + reverse("annotate_guidelines", args=[pilot.pk]), problems)

    page = watched_page(browser, problems)
    log_in(page, base, manager.username)

    def audit_table_sorts() -> None:
        header = page.locator("table.sortable th").nth(1)
        header.click()  # audit.js
        assert header.get_attribute("data-order") == "asc"
        assert page.locator("svg.chart").count() > 0

    for url, check in [
        (reverse("home"), None),
        (reverse("dataset_list"), None),
        (reverse("campaign_list"), None),
        (reverse("campaign_detail", args=[audited.pk]), None),
        (reverse("campaign_audit", args=[audited.pk]) + "?resamples=50", audit_table_sorts),
        (reverse("campaign_export", args=[audited.pk]), None),
        ("/api/docs/", None),
        ("/api/", None),
        ("/api/campaigns/", None),
        (f"/api/campaigns/{audited.pk}/", None),
    ]:
        visit(page, base + url, problems, check)
    assert not problems, "\n".join(problems)
