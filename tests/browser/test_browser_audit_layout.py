"""The audit page and the campaign dashboard in a real Chromium at 1366 px wide: no table
scrolls sideways out of sight, and the dashboard's exclusion form works (screenshots in
tests/artifacts/)."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import AnnotatorExclusion, Campaign, Dataset
from tests.support.audit import add_item, annotate
from tests.support.audit import make_campaign as make_audit_campaign
from tests.support.browser import ARTIFACTS, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Prolific participants get usernames of 33 characters: the widest names a table meets.
NAMES = [f"prolific-5f3c9a0b1e2d4c6a7b8c9d{index:02d}" for index in range(5)]

# Elements wider than their box: (selector, scrollWidth, clientWidth).
OVERFLOWING = """() => Array.from(document.querySelectorAll('.table-scroll, .card, main'))
  .filter(el => el.scrollWidth > el.clientWidth + 1)
  .map(el => [el.id || el.className, el.scrollWidth, el.clientWidth])"""


@pytest.fixture
def audited(dataset: Dataset) -> Campaign:
    """Twelve pairs, each annotated by three of five annotators with long names, some of the
    answers slow, some fast, one annotator always answering A."""
    campaign = make_audit_campaign(dataset, seed=3, status=Campaign.Status.ACTIVE)
    users = [User.objects.create_user(name) for name in NAMES]
    for user in users:
        add_member(campaign, user)
    for index, pair in enumerate(dataset.pairs.order_by("external_id")):
        item = add_item(campaign, pair)
        for offset in range(3):
            user = users[(index + offset) % len(users)]
            position = "A" if index % 2 else "B"
            fit = "chosen" if offset != 2 or index % 3 else "rejected"
            annotate(item, user, fit=fit, position=position, time_ms=3000 + 9000 * offset)
    return campaign


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
