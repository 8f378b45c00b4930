"""Work resumes on another device: in a real Chromium, answers chosen and typed on one browser
context (a desktop) are saved as the item's draft a moment after the last change, and a second
context (a phone) logged in as the same annotator opens the same item with them filled in."""

import pytest
from django.urls import reverse

from prb_annotate.models import AnswerDraft
from tests.support.browser import log_in, shown_assignment_id
from tests.support.pages import active_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_unsaved_answers_follow_the_annotator_to_another_browser(
    live_server, browser, dataset, annotator
) -> None:
    campaign = active_campaign(dataset, annotator)
    desk = browser.new_context(viewport={"width": 1366, "height": 900})
    page = desk.new_page()
    log_in(page, live_server.url, annotator.username)
    page.goto(live_server.url + reverse("annotate", args=[campaign.pk]))
    held = shown_assignment_id(page)
    # The radio itself is drawn by its label: click it as the label does.
    page.locator("input[name=rubric_fit][value=B]").evaluate("input => input.click()")
    with page.expect_response(lambda r: "/draft/" in r.url and r.status == 204):
        page.keyboard.press("c")  # the comment box, as the page's key opens it
        page.keyboard.type("Response B uses the posts.")
    assert AnswerDraft.objects.get(assignment_id=held).values["comment"] == (
        "Response B uses the posts."
    )

    phone = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    other = phone.new_page()
    log_in(other, live_server.url, annotator.username)
    other.goto(live_server.url + reverse("annotate", args=[campaign.pk]))
    assert shown_assignment_id(other) == held
    assert other.input_value("#id_comment") == "Response B uses the posts."
    assert other.is_checked("input[name=rubric_fit][value=B]")
    desk.close()
    phone.close()
