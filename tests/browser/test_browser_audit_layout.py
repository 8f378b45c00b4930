"""The audit page and the campaign dashboard in a real Chromium at 1366 px wide: no table
scrolls sideways out of sight, and the dashboard's exclusion form works (screenshots in
tests/artifacts/)."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from prb_annotate.models import AnnotatorExclusion, Campaign, Dataset
from tests.support.audit import NAMES, long_named_campaign
from tests.support.browser import ARTIFACTS, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Elements wider than their box: (selector, scrollWidth, clientWidth).
OVERFLOWING = """() => Array.from(document.querySelectorAll('.table-scroll, .card, main'))
  .filter(el => el.scrollWidth > el.clientWidth + 1)
  .map(el => [el.id || el.className, el.scrollWidth, el.clientWidth])"""


@pytest.fixture
def audited(dataset: Dataset) -> Campaign:
    return long_named_campaign(dataset)


def overflowing(page: Any) -> list[Any]:
    return list(page.evaluate(OVERFLOWING))


def test_it_fits_the_audit_and_the_dashboard_in_1366_pixels(
    live_server: Any, browser: Any, audited: Campaign, manager: User
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    log_in(page, live_server.url, manager.username)

    page.goto(live_server.url + reverse("campaign_audit", args=[audited.pk]))
    assert page.locator("#annotator-table").is_visible()
    page.screenshot(path=str(ARTIFACTS / "audit-1366.png"), full_page=True)
    assert overflowing(page) == []

    page.goto(live_server.url + reverse("campaign_detail", args=[audited.pk]))
    assert page.locator("#quality-table").is_visible()
    page.screenshot(path=str(ARTIFACTS / "dashboard-1366.png"), full_page=True)
    assert overflowing(page) == []

    # Exclude the first annotator from the table's own form.
    row = page.locator(f"tr[data-annotator='{NAMES[0]}']")
    row.locator("summary").click()
    row.locator("input[name=reason]").fill("always answers within three seconds")
    with page.expect_navigation():
        row.locator("button[type=submit]").click()
    assert page.locator(f"tr[data-annotator='{NAMES[0]}'] >> text=Bring back").is_visible()
    assert AnnotatorExclusion.objects.filter(annotator__username=NAMES[0]).exists()
    page.close()
