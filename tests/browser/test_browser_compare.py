"""The leaderboard page in a real Chromium under the Content-Security-Policy: reached from the
campaign page by a link, subset tabs that are plain links, the run picker, and each run's card."""

import pytest
from django.urls import reverse

from prb_annotate.models import Dataset
from tests.browser.test_browser_csp import visit, watched_page
from tests.conftest import make_user
from tests.support.browser import log_in
from tests.views.test_compare_pages import leaderboard_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_ranks_the_runs_and_switches_subsets_without_a_script(
    live_server,
    browser,
    dataset: Dataset,
) -> None:
    manager = make_user("manager", staff=True)
    campaign = leaderboard_campaign(dataset)
    problems: list[str] = []
    page = watched_page(browser, problems)
    log_in(page, live_server.url, manager.username)
    visit(page, live_server.url + reverse("campaign_detail", args=[campaign.pk]), problems)
    page.get_by_role("link", name="Reward-model evaluations").click()
    page.wait_for_selector("#leaderboard-table")
    models = page.locator("#leaderboard-table tr.leaderboard-row").evaluate_all(
        "rows => rows.map(row => row.dataset.model)"
    )
    assert models == ["builtin:profile-overlap", "builtin:random", "builtin:length"]

    page.locator('.subset-tabs a[data-subset="excluded"]').click()
    page.wait_for_selector('#subset-title[data-subset="excluded"]')
    assert page.locator("#subset-title").inner_text().startswith("excluded: 4 pairs")

    page.select_option("#id_policy", "as-wrong")
    page.get_by_role("button", name="Show").click()
    page.wait_for_selector('#subset-title[data-subset="excluded"]')
    overlap = page.locator('#leaderboard-table tr[data-model="builtin:profile-overlap"]')
    assert overlap.locator("td.lb-ties-as-wrong").inner_text() == "25.0%"

    card = page.locator("details.run-card").first
    card.locator("summary").click()
    assert card.locator("dl.card-fields").is_visible()
    assert "built-in baseline" in card.inner_text()
    page.wait_for_load_state("load")
    problems.extend(page.evaluate("window.__violations"))
    assert not problems, "\n".join(problems)
