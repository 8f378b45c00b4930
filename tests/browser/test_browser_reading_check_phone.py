"""The reading check's question on a phone and the shortcuts: the question is said once, beside
the Submit button and never over it, without Space on a touch screen; a revision is not asked
again; ? opens the shortcuts without moving the texts pane and Esc closes them."""

import pytest

from prb_annotate.models import Assignment, Dataset
from tests.browser.test_browser_annotator_page import FULL_ANSWER, eight_thousand_words
from tests.browser.test_browser_reading import annotate_url, open_page
from tests.conftest import make_pairs
from tests.support.browser import shown_assignment_id
from tests.support.pages import active_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def long_texts(db: None) -> Dataset:
    """Long responses, as the reading tests use: something to scroll and to leave unread."""
    dataset = Dataset.objects.create(name="long answers", source="tests")
    make_pairs(dataset, 3)
    for seed, pair in enumerate(dataset.pairs.all()):
        pair.chosen = eight_thousand_words(seed)
        pair.rejected = eight_thousand_words(seed + 5)
        pair.save(update_fields=["chosen", "rejected"])
    return dataset


def boxes_overlap(page, first: str, second: str) -> bool:
    return page.evaluate(
        "([a, b]) => { const p = document.querySelector(a).getBoundingClientRect();"
        " const q = document.querySelector(b).getBoundingClientRect();"
        " return p.width > 0 && q.width > 0 && p.left < q.right && q.left < p.right"
        " && p.top < q.bottom && q.top < p.bottom; }",
        [first, second],
    )


def test_the_phone_is_asked_once_beside_the_button_without_space(
    live_server, browser, long_texts, annotator
) -> None:
    campaign = active_campaign(long_texts, annotator, name="checked", reading_check=True)
    page = open_page(browser, live_server, "phone", annotator.username, annotate_url(campaign))
    shown = shown_assignment_id(page)
    for key in FULL_ANSWER:
        page.keyboard.press(key)
    page.locator("#submit-button").evaluate("button => button.click()")
    page.wait_for_function(
        "() => document.getElementById('form-status').textContent.includes('Less than half')"
    )
    status = page.text_content("#form-status") or ""
    assert "Space" not in status
    assert "scroll through the texts first" in status
    assert (page.text_content("#key-message") or "") == ""  # said once, not twice
    assert not boxes_overlap(page, "#key-message", "#submit-button")
    assert not boxes_overlap(page, "#form-status", "#submit-button")
    with page.expect_navigation():
        page.locator("#submit-button").evaluate("button => button.click()")
    assert Assignment.objects.get(pk=shown).status == Assignment.Status.SUBMITTED

    # Revising that answer is not asked again.
    page.goto(live_server.url + f"/c/{campaign.pk}/a/{shown}/")
    assert page.get_attribute("#annotation-form", "data-reading-check") is None
    page.close()


def test_question_mark_leaves_the_texts_where_they_were_and_esc_closes(
    live_server, browser, long_texts, annotator
) -> None:
    campaign = active_campaign(long_texts, annotator, name="plain")
    page = open_page(browser, live_server, "wide", annotator.username, annotate_url(campaign))
    page.evaluate("document.getElementById('texts').scrollTop = 300")
    before = page.evaluate("[document.getElementById('texts').scrollTop, window.scrollY]")
    page.keyboard.press("?")
    assert page.locator("#shortcuts").is_visible()
    assert page.evaluate("document.activeElement.id") == "shortcuts"
    assert page.evaluate("[document.getElementById('texts').scrollTop, window.scrollY]") == before
    page.keyboard.press("Escape")
    assert "is-open" not in (page.get_attribute("#shortcuts", "class") or "")
    assert page.evaluate("[document.getElementById('texts').scrollTop, window.scrollY]") == before
    page.close()
