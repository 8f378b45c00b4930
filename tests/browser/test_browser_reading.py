"""Reading before judging, in a real Chromium at 1366x900 and at 390x844 with touch: Space,
Shift+Space, J and K scroll the texts from every focus state (the comment box keeps Space as
text), both responses start in the upper half of the first screen and the question card is as
tall as its text, the optional reading check asks once before a submit of unread responses,
the phone's touch targets are at least 44 px, its key hints are hidden and the compact bar
stays within 15 % of the screen, and the join page's consent is required when set and kept with
its time. Screenshots go to tests/artifacts/."""

import pytest
from django.urls import reverse

from prb_annotate.datasets.importing import import_path
from prb_annotate.management.commands.demo_setup import DEMO_FIXTURE
from prb_annotate.models import Annotation, Assignment, Campaign, Dataset, Membership, Participant
from tests.browser.test_browser_annotator_page import (
    FOCUS_STATES,
    FULL_ANSWER,
    eight_thousand_words,
)
from tests.conftest import make_pairs
from tests.support.browser import ARTIFACTS, log_in, shown_assignment_id
from tests.support.pages import active_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE = {"viewport": {"width": 1366, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
VIEWPORTS = {"wide": WIDE, "phone": PHONE}
TOUCH_ONLY = "(hover: none) and (pointer: coarse)"

# The element whose scrolling shows more of the texts: their own pane on wide screens, the
# page itself on a phone.
SCROLLER_JS = (
    "(['auto', 'scroll'].includes(getComputedStyle(document.getElementById('texts')).overflowY)"
    " ? document.getElementById('texts') : document.scrollingElement)"
)
READING_STATES = {
    **FOCUS_STATES,
    "an answer of another question": "document.querySelector('input[name=confidence]').focus()",
    "the next-question button": "document.getElementById('next-question').focus()",
    "the skip button": "document.querySelector('#skip-form button').focus()",
}


@pytest.fixture
def demo_dataset(db: None) -> Dataset:
    import_path(DEMO_FIXTURE, "prb-demo")
    return Dataset.objects.get(name="prb-demo")


@pytest.fixture
def long_dataset(db: None) -> Dataset:
    dataset = Dataset.objects.create(name="long answers", source="tests")
    make_pairs(dataset, 3)
    for seed, pair in enumerate(dataset.pairs.all()):
        pair.chosen = eight_thousand_words(seed)
        pair.rejected = eight_thousand_words(seed + 5)
        pair.save(update_fields=["chosen", "rejected"])
    return dataset


def open_page(browser, live_server, viewport: str, username: str, url: str):
    page = browser.new_page(**VIEWPORTS[viewport])
    log_in(page, live_server.url, username)
    page.goto(live_server.url + url)
    return page


def annotate_url(campaign: Campaign) -> str:
    return reverse("annotate", args=[campaign.pk])


def scroll_top(page) -> float:
    return float(page.evaluate(f"{SCROLLER_JS}.scrollTop"))


def state_snapshot(page) -> dict:
    """What a scrolling key must leave alone: the answers, the flag, the page's address."""
    return {
        "checked": page.evaluate(
            "[...document.querySelectorAll('input[type=radio]:checked')].map(r => r.name + r.value)"
        ),
        "flagged": page.is_checked("#id_flagged"),
        "url": page.url,
    }


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_space_and_j_k_scroll_the_texts_from_every_focus_state(
    live_server, browser, demo_dataset, annotator, viewport
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    campaign = active_campaign(demo_dataset, annotator, name="reading")
    page = open_page(browser, live_server, viewport, annotator.username, annotate_url(campaign))
    page.keyboard.press("5")  # one answer given: the panel's own keys must not take over
    states = dict(READING_STATES)
    if viewport == "phone":
        # The compact bar shows the highlighted question alone (no submit button yet).
        for hidden in ("an answer of another question", "the skip button", "the submit button"):
            del states[hidden]
    else:
        del states["the next-question button"]
    for state, focus in states.items():
        page.evaluate(f"{SCROLLER_JS}.scrollTo(0, 0)")
        page.evaluate("document.getElementById('response-B').scrollTo(0, 0)")
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.evaluate(focus)
        before = state_snapshot(page)
        page.keyboard.press("Space")
        after_space = scroll_top(page)
        pane_moved = page.evaluate("document.getElementById('response-B').scrollTop") > 0
        assert after_space > 200 or (state == "a response text" and pane_moved), state
        assert state_snapshot(page) == before, state
        if state == "a response text" and pane_moved:
            continue  # a response that scrolls on its own takes the keys first, as a page does
        page.keyboard.press("Shift+Space")
        assert scroll_top(page) < after_space, state
        page.keyboard.press("j")
        down = scroll_top(page)
        assert down > 0, state
        page.keyboard.press("k")
        assert scroll_top(page) < down, state
        assert state_snapshot(page) == before, state
    # The comment box being typed in keeps Space (and the letters) as text.
    page.evaluate(f"{SCROLLER_JS}.scrollTo(0, 0)")
    page.keyboard.press("c")
    start = scroll_top(page)
    page.keyboard.type("a b j")
    assert page.input_value("#id_comment").endswith("a b j")
    assert scroll_top(page) == start
    page.keyboard.press("Escape")
    # Listed on the shortcuts card.
    listed = " ".join(page.locator("#shortcuts dt").all_inner_texts())
    for key in ("Space", "Shift+Space", "J", "K"):
        assert key in listed, key
    page.close()


def test_both_responses_start_in_the_upper_half_of_the_first_screen(
    live_server, browser, demo_dataset, annotator
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    campaign = active_campaign(demo_dataset, annotator, name="layout")
    page = open_page(browser, live_server, "wide", annotator.username, annotate_url(campaign))
    for item in range(3):
        tops = page.evaluate(
            "['A', 'B'].map(s => document.getElementById('response-' + s)"
            ".closest('.response').getBoundingClientRect().top)"
        )
        assert all(0 < top < 450 for top in tops), (item, tops)
        # The question card is as tall as what it holds, not stretched to the rubric's height.
        slack = page.evaluate(
            "(() => { const card = document.querySelector('.annotate-context .question');"
            " const range = document.createRange(); range.selectNodeContents(card);"
            " const text = range.getBoundingClientRect();"
            " return card.getBoundingClientRect().bottom - text.bottom"
            "   - parseFloat(getComputedStyle(card).paddingBottom); })()"
        )
        assert slack < 24, (item, slack)
        page.screenshot(path=str(ARTIFACTS / f"reading_1366_item{item + 1}.png"))
        for key in FULL_ANSWER:
            page.keyboard.press(key)
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")
    page.close()


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_the_reading_check_asks_once_before_unread_responses_are_submitted(
    live_server, browser, long_dataset, annotator, viewport
) -> None:
    checked = active_campaign(long_dataset, annotator, name="checked", reading_check=True)
    page = open_page(browser, live_server, viewport, annotator.username, annotate_url(checked))
    shown = shown_assignment_id(page)
    for key in FULL_ANSWER:
        page.keyboard.press(key)
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => document.getElementById('form-status').textContent.includes('Less than half')"
    )
    assert Assignment.objects.get(pk=shown).status == Assignment.Status.RESERVED
    page.screenshot(path=str(ARTIFACTS / f"reading_check_{viewport}.png"))
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")  # asked once: the second submit goes through
    assert Assignment.objects.get(pk=shown).status == Assignment.Status.SUBMITTED

    # Both responses read to their end: the first submit goes through.
    second = shown_assignment_id(page)
    for side in "AB":
        page.evaluate(f"document.getElementById('response-{side}').scrollIntoView()")
        page.wait_for_function(
            f"() => {{ const p = document.getElementById('response-{side}');"
            f" p.scrollTop = p.scrollHeight; return p.scrollTop > 0; }}"
        )
        page.evaluate(
            f"(() => {{ const p = document.getElementById('response-{side}');"
            f" for (let y = 0; y <= p.scrollHeight; y += p.clientHeight / 2) {{"
            f" p.scrollTop = y; p.dispatchEvent(new Event('scroll')); }} }})()"
        )
    seen = page.get_attribute("#texts", "data-seen") or ""
    assert all(int(share) >= 50 for share in seen.split(",")), seen
    for key in FULL_ANSWER:
        page.keyboard.press(key)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert Assignment.objects.get(pk=second).status == Assignment.Status.SUBMITTED
    page.close()

    # Off (the default): a complete answer is submitted at once, read or not.
    plain = active_campaign(long_dataset, annotator, name="plain")
    page = open_page(browser, live_server, viewport, annotator.username, annotate_url(plain))
    for key in FULL_ANSWER:
        page.keyboard.press(key)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert Annotation.objects.filter(assignment__campaign=plain).count() == 1
    page.close()


# Everything on the annotation page a finger may need to hit, as seen on screen.
TARGETS_JS = """() => {
  const selectors = ['button', 'a.button', '.annotate-links a', '.opt span', 'select',
                     'summary', '.finish .flag'];
  const small = [];
  for (const element of document.querySelectorAll(selectors.join(','))) {
    const r = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    if (r.width === 0 || r.height === 0 || style.visibility === 'hidden') continue;
    if (r.bottom < 0 || r.top > innerHeight) continue;
    if (r.height < 44 || r.width < 44) {
      small.push(`${element.tagName} ${element.textContent.trim().slice(0, 30)}: `
                 + `${Math.round(r.width)}x${Math.round(r.height)}`);
    }
  }
  return small;
}"""
VISIBLE_KEYS_JS = """() => [...document.querySelectorAll('.annotate-page kbd, .key-hint')]
  .filter(k => k.getClientRects().length > 0).map(k => k.textContent.trim())"""

ANSWERED_AND_MOVED_ON_JS = """(count) => {
  const active = document.querySelector('fieldset.is-active');
  return document.querySelectorAll('input[type=radio]:checked').length === count
    && !(active && active.querySelector('input[type=radio]:checked'));
}"""


def test_the_phone_has_touch_targets_no_key_hints_and_a_small_bar(
    live_server, browser, demo_dataset, annotator
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    campaign = active_campaign(demo_dataset, annotator, name="phone")
    page = open_page(browser, live_server, "phone", annotator.username, annotate_url(campaign))
    assert page.evaluate(f"matchMedia('{TOUCH_ONLY}').matches")
    limit = 0.15 * 844
    page.screenshot(path=str(ARTIFACTS / "reading_390_touch.png"))
    questions = len(FULL_ANSWER)
    for index in range(questions + 1):
        height = page.evaluate("document.getElementById('answer-panel').offsetHeight")
        assert height <= limit, (index, height)
        assert page.evaluate(TARGETS_JS) == [], index
        assert page.evaluate(VISIBLE_KEYS_JS) == [], index
        if index < questions:
            page.click("fieldset.is-active .opt:last-child span")
            # The highlight moves on a tick after the radio is checked: wait for it, or the
            # next click lands on the question just answered as the bar hides it.
            page.wait_for_function(ANSWERED_AND_MOVED_ON_JS, arg=index + 1)
    page.screenshot(path=str(ARTIFACTS / "reading_390_touch_answered.png"))
    # Every answer at once: the targets stay large, the hints stay hidden.
    page.click("#panel-toggle")
    page.evaluate("document.getElementById('answer-panel').scrollTo(0, 0)")
    assert page.evaluate(TARGETS_JS) == []
    assert page.evaluate(VISIBLE_KEYS_JS) == []
    page.screenshot(path=str(ARTIFACTS / "reading_390_touch_all.png"))
    page.close()


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_consent_is_required_when_set_and_kept_with_its_time(
    live_server, browser, dataset, annotator, viewport
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    consent = "You take part of your own will.\n\nYour answers are kept without your name."
    campaign = active_campaign(
        dataset,
        name="consented",
        consent_text=consent,
        quota_per_annotator=6,
        guidelines="Read **both** responses to the end.",
    )
    study = (
        live_server.url
        + reverse("join", args=[campaign.invite_token])
        + f"?PROLIFIC_PID=p-{viewport}&STUDY_ID=s1&SESSION_ID=one"
    )
    page = browser.new_page(**VIEWPORTS[viewport])
    page.goto(study)
    estimate = page.text_content("#time-estimate") or ""
    assert "about 15 minutes" in estimate, estimate
    assert "6 items" in estimate, estimate
    assert "both responses" in (page.text_content("#join-instructions") or "")
    assert "without your name" in (page.text_content("#consent-text") or "")
    page.screenshot(path=str(ARTIFACTS / f"join_consent_{viewport}.png"), full_page=True)
    # The browser will not start without the box ticked; nor will the server.
    page.click("#start-button")
    assert page.url == study
    page.evaluate("document.getElementById('id_consent').required = false")
    with page.expect_navigation():
        page.click("#start-button")
    assert "Tick the box" in (page.text_content("#consent-error") or "")
    assert not Participant.objects.filter(campaign=campaign).exists()
    page.check("#id_consent")
    with page.expect_navigation():
        page.click("#start-button")
    assert page.url.endswith(annotate_url(campaign))
    member = Membership.objects.get(campaign=campaign, participant_id=f"p-{viewport}")
    assert member.consent_given_at is not None
    page.close()

    # A member added by a manager accepts it on the consent page before the first item.
    Membership.objects.create(campaign=campaign, user=annotator)
    page = open_page(browser, live_server, viewport, annotator.username, annotate_url(campaign))
    assert page.url.endswith(reverse("annotate_consent", args=[campaign.pk]))
    assert page.locator("#annotation-form").count() == 0
    page.screenshot(path=str(ARTIFACTS / f"consent_page_{viewport}.png"))
    page.check("#id_consent")
    with page.expect_navigation():
        page.click("#start-button")
    assert page.locator("#annotation-form").count() == 1
    assert Membership.objects.get(campaign=campaign, user=annotator).consent_given_at is not None
    page.close()
