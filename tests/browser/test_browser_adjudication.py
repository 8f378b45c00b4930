"""From the audit to a decision in a real Chromium: a manager opens the audit, follows a failing
pair's id to its page, reads its annotations and the verdict explained, adjudicates it, and sees
the audit's counts change (screenshot in tests/artifacts/)."""

import pytest
from django.urls import reverse

from prb_annotate.models import Adjudication
from tests.support.audit import add_item, annotate_all, annotators, make_campaign
from tests.support.browser import ARTIFACTS, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_manager_adjudicates_a_failing_pair_from_the_audit(
    live_server,
    browser,
    dataset,
    manager,
) -> None:
    campaign = make_campaign(dataset)
    pairs = list(dataset.pairs.order_by("external_id"))
    raters = annotators(3)
    annotate_all(add_item(campaign, pairs[0]), raters, [{}] * 3)
    failing = add_item(campaign, pairs[1])
    annotate_all(
        failing,
        raters,
        [
            {"fit": "tie", "comment": "Both answers suit a busy runner."},
            {"fit": "tie"},
            {},
        ],
    )
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    log_in(page, live_server.url, manager.username)
    page.goto(live_server.url + reverse("campaign_audit", args=[campaign.pk]) + "?resamples=0")
    summary = page.text_content(".audit-summary") or ""
    assert "1 validated" in summary
    assert "1 excluded" in summary
    assert "adjudicated" not in summary

    with page.expect_navigation():
        page.click("#pairs a:text('p0001')")
    assert page.text_content("#verdict-value") == "excluded"
    # The reason in words, its code in the tooltip.
    reason = page.locator("#verdict-reasons [data-reason=label_tie]")
    assert reason.text_content() == "called a tie"
    assert (reason.get_attribute("title") or "").startswith("label_tie: ")
    assert "Both answers suit a busy runner." in (page.text_content("#annotation-table") or "")
    decisive = page.locator("#checks tr.decisive").all_text_contents()
    assert any("The chosen answer fits the user better" in row for row in decisive)

    # The answers and what differs sit beside the form, which offers no decision in advance.
    form = page.locator("#adjudication-form").bounding_box()
    for text in ("#chosen", "#rejected", "#answer-diff-text"):
        box = page.locator(text).bounding_box()
        assert form is not None
        assert box is not None
        assert box["x"] + box["width"] <= form["x"], text
    assert page.locator("#answer-diff-text del, #answer-diff-text ins").count() > 0
    assert page.input_value("#adjudication-form select[name=decision]") == ""
    page.locator("#adjudication").scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "campaign_pair_adjudication_panel.png"))
    page.select_option("#adjudication-form select[name=decision]", "validated")
    page.select_option("#adjudication-form select[name=reason]", "adjudicator_judgement")
    page.fill("#adjudication-form textarea[name=note]", "The rubric asks for brevity: A wins.")
    with page.expect_navigation():
        page.click("#adjudicate-button")
    assert page.text_content("#verdict-value") == "validated"
    assert page.is_visible("#adjudicated-tag")
    assert page.text_content("#annotators-verdict") == "excluded"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "campaign_pair_adjudicated.png"), full_page=True)
    assert Adjudication.objects.get().decided_by == manager

    page.goto(live_server.url + reverse("campaign_audit", args=[campaign.pk]) + "?resamples=0")
    summary = page.text_content(".audit-summary") or ""
    assert "2 validated" in summary
    assert "0 excluded" in summary
    assert "1 adjudicated" in summary
    assert "annotators alone: 1 validated, 1 excluded" in " ".join(summary.split())
    page.close()
