"""The audit page's prediction-powered estimate in a real Chromium at 1366 px wide: the table
shows beside the humans-only estimate, reached from the dashboard's planned-sample note, and
nothing scrolls sideways out of sight (screenshot in tests/artifacts/)."""

from typing import Any

import pytest
from django.contrib.auth.models import User

from prb_annotate.campaigns.lifecycle import add_member, create_campaign
from prb_annotate.models import Campaign
from prb_annotate.simulation.model_annotator import simulate_model_annotator
from tests.browser.test_browser_audit_layout import overflowing
from tests.support.audit import annotate
from tests.support.browser import ARTIFACTS, log_in
from tests.support.sampling import TARGETS, planned_dataset, truth

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def planned(manager: User) -> Campaign:
    dataset = planned_dataset()
    campaign = create_campaign(dataset, "pilot", k=1, sample_targets=TARGETS, seed=5)
    add_member(campaign, manager, role="manager")
    user = User.objects.create_user("careful")
    answers = truth(dataset)
    for item in campaign.items.select_related("pair"):
        fit, differentiator = answers[item.pair.external_id]
        annotate(item, user, fit=fit, differentiator=differentiator)
    simulate_model_annotator(campaign, answers, accuracy=0.9, seed=1)
    return campaign


def test_the_audit_shows_the_estimate_with_the_model(
    live_server: Any, browser: Any, planned: Campaign, manager: User
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    log_in(page, live_server.url, manager.username)
    page.goto(f"{live_server.url}/campaigns/{planned.pk}/")
    page.locator("#sample-plan a[href$='#ppi']").click()
    assert page.locator("#ppi-table").is_visible()
    assert "simulated" in page.locator("#ppi").inner_text()
    assert "%" in page.locator("#ppi-share").inner_text()
    assert page.locator("#ppi-planning").is_visible()
    page.locator("#ppi").screenshot(path=str(ARTIFACTS / "audit-ppi-1366.png"))
    assert overflowing(page) == []
    page.close()
