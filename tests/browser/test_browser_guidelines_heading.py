"""A `#` heading written in a campaign's guidelines renders smaller than the page's own title,
in a real Chromium, on the annotator's guidelines page and the dashboard."""

import pytest
from django.urls import reverse

from tests.support.browser import log_in
from tests.support.pages import active_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZE = "s => parseFloat(getComputedStyle(document.querySelector(s)).fontSize)"


def test_a_guidelines_heading_stays_below_the_pages_own(
    live_server, browser, dataset, annotator
) -> None:
    campaign = active_campaign(dataset, annotator, guidelines="# Read first\n\nBe careful.")
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    log_in(page, live_server.url, annotator.username)
    page.goto(live_server.url + reverse("annotate_guidelines", args=[campaign.pk]))
    own, written = page.evaluate(SIZE, "main h1:not(.md h1)"), page.evaluate(SIZE, ".md h1")
    assert written < own, (written, own)
    page.close()
