"""The annotator page in a real Chromium at 1366x900 and 390x844: the highlighted question's
answers stay on screen at load and after every answer (demo pairs, and a pair whose answers run
to 8,000 words), every key in the on-page list does what it says from any focus state and none
is listed twice, and going back reopens the previous item with its answers, where saving makes
a revision. Screenshots of both widths go to tests/artifacts/."""

import re
from collections.abc import Callable

import pytest
from django.urls import reverse

from prb_annotate.campaigns.annotating import parse_submission, submit
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.datasets.importing import import_path
from prb_annotate.management.commands.demo_setup import DEMO_FIXTURE
from prb_annotate.models import Annotation, Assignment, Campaign, Dataset, Pair
from tests.conftest import make_pairs
from tests.support.browser import ARTIFACTS, log_in, shown_assignment_id
from tests.support.pages import active_campaign, form_answers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = {"wide": (1366, 900), "phone": (390, 844)}
ANSWER_LETTERS = "abtpqonlmh"
# What the on-page list must name, each once: every one is exercised below.
LISTED = {
    "1\u20135",  # 1-5 with an en dash, as the page writes it
    "A",
    "B",
    "T",
    "P",
    "Q",
    "O",
    "N",
    "L",
    "M",
    "H",
    "Space",  # Space, Shift+Space, J and K: test_browser_reading.py
    "Shift+Space",
    "J",
    "K",
    "Tab",
    "Shift+Tab",
    "C",
    "Esc",
    "F",
    "Enter",
    "Ctrl+Enter",
    "R",
    "S",
    "G",
    "?",
}
# Where the focus may be when a key is pressed. The phone's compact bar shows only the
# highlighted question, so another question's answers cannot take the focus there.
FOCUS_STATES = {
    "nothing": "document.activeElement && document.activeElement.blur()",
    "an answer of the highlighted question": (
        "(document.querySelector('fieldset.is-active input')"
        " || document.getElementById('submit-button')).focus()"
    ),
    "a response text": "document.getElementById('response-B').focus()",
    "the submit button": "document.getElementById('submit-button').focus()",
    "the flag": "document.getElementById('id_flagged').focus()",
    "a link": "document.getElementById('guidelines-link').focus()",
}
WIDE_ONLY_STATES = {
    "an answer of another question": "document.querySelector('input[name=confidence]').focus()",
}


def focus_states(viewport: str) -> dict[str, str]:
    return {**FOCUS_STATES, **(WIDE_ONLY_STATES if viewport == "wide" else {})}


# The highlighted question's legend and every one of its options, or the submit button when
# every question is answered: each must lie inside the window and be the thing at its centre
# (nothing drawn over it).
IN_VIEW_JS = """() => {
  const group = document.querySelector('fieldset.is-active');
  const parts = group ? [group.querySelector('legend'), ...group.querySelectorAll('.opt span')]
                      : [document.getElementById('submit-button')];
  const problems = [];
  for (const part of parts) {
    const r = part.getBoundingClientRect();
    if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth
        || r.width === 0 || r.height === 0) {
      problems.push(`${part.textContent.trim()} at ${Math.round(r.top)}..${Math.round(r.bottom)}`);
      continue;
    }
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    if (!hit || !(part.contains(hit) || hit.contains(part))) {
      problems.push(`${part.textContent.trim()} covered by ${hit && hit.outerHTML.slice(0, 60)}`);
    }
  }
  return {name: group ? group.querySelector('input').name : 'submit', problems};
}"""


def assert_highlight_in_view(page, when: str) -> str:
    seen = page.evaluate(IN_VIEW_JS)
    assert seen["problems"] == [], f"{when}: {seen['name']}: {seen['problems']}"
    return str(seen["name"])


def eight_thousand_words(seed: int) -> str:
    words = ["plan", "the", "week", "around", "three", "runs", "and", "one", "long", "rest"]
    paragraphs = []
    for index in range(80):  # 80 paragraphs of 100 words
        body = " ".join(words[(index + seed + n) % len(words)] for n in range(100))
        paragraphs.append(body)
    return "\n\n".join(paragraphs)


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


def open_page(browser, live_server, viewport: str, username: str, url: str, **options):
    width, height = VIEWPORTS[viewport]
    page = browser.new_page(viewport={"width": width, "height": height}, **options)
    log_in(page, live_server.url, username)
    page.goto(live_server.url + url)
    return page


def answer_and_check(page, keys: list[str], label: str) -> None:
    """Press each key; after each one the highlighted question must still be on screen."""
    for index, key in enumerate(keys):
        page.keyboard.press(key)
        assert_highlight_in_view(page, f"{label}, after key {index + 1} ({key})")


FULL_ANSWER = list("543222aph")


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_it_keeps_the_highlighted_question_in_view(
    live_server, browser, demo_dataset, long_dataset, annotator, viewport
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    width = VIEWPORTS[viewport][0]
    demo = active_campaign(demo_dataset, annotator, name="demo")
    long = active_campaign(long_dataset, annotator, name="long", show_timer=True)

    page = open_page(browser, live_server, viewport, annotator.username, annotate_url(demo))
    for item in range(2):
        first = assert_highlight_in_view(page, f"demo item {item + 1} at load")
        assert first == f"quality_A_{demo.quality_criteria[0]}"
        if item == 0:
            page.screenshot(path=str(ARTIFACTS / f"annotator_{width}_demo.png"))
        # A letter for a later question first: the highlight stays where it was.
        page.keyboard.press("h")
        assert assert_highlight_in_view(page, "after H") == first
        answer_and_check(page, FULL_ANSWER[:-1], f"demo item {item + 1}")
        if item == 0:
            page.screenshot(path=str(ARTIFACTS / f"annotator_{width}_demo_answered.png"))
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")
    assert Annotation.objects.filter(assignment__campaign=demo).count() == 2
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.close()

    page = open_page(browser, live_server, viewport, annotator.username, annotate_url(long))
    assert_highlight_in_view(page, "8,000-word pair at load")
    for side in "AB":
        label = page.text_content(f'[data-length-of="response-{side}"]') or ""
        assert "8,000 words" in label
        # Bounded, never cut: the pane scrolls, and all of the text is in it.
        pane = page.locator(f"#response-{side}")
        assert pane.evaluate("p => p.scrollHeight > p.clientHeight + 100")
        assert pane.evaluate("p => p.textContent.trim().split(/\\s+/).length") == 8000
    # Scrolled to the end on every poll: on a busy machine the first scroll can come before
    # the pane's layout settles, and its scroll event then reaches no end.
    page.wait_for_function(
        "() => { const p = document.querySelector('#response-A');"
        " p.scrollTop = p.scrollHeight;"
        " return document.querySelector('[data-length-of=\"response-A\"]')"
        ".textContent.includes('read to the end'); }"
    )
    assert re.fullmatch(r"\d+:\d\d", page.text_content("#timer") or "")
    page.screenshot(path=str(ARTIFACTS / f"annotator_{width}_long.png"))
    answer_and_check(page, FULL_ANSWER, "8,000-word pair")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert_highlight_in_view(page, "second 8,000-word pair at load")
    if viewport == "phone":
        page.click("#panel-toggle")
        page.screenshot(path=str(ARTIFACTS / f"annotator_{width}_all_answers.png"))
        assert_highlight_in_view(page, "all answers shown")
    page.close()

    dark = open_page(
        browser, live_server, viewport, annotator.username, annotate_url(demo), color_scheme="dark"
    )
    background = dark.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(18, 22, 29)"
    dark.screenshot(path=str(ARTIFACTS / f"annotator_{width}_dark.png"))
    dark.close()


def annotate_url(campaign: Campaign) -> str:
    return reverse("annotate", args=[campaign.pk])


def submit_one(campaign: Campaign, user, token: str) -> Assignment:
    assignment = next_assignment(campaign, user)
    assert assignment is not None
    data = form_answers(campaign, client_token=token)
    submit(
        assignment.pk,
        user,
        parse_submission(data, assignment=assignment).answers,
        client_token=token,
    )
    return assignment


def listed_keys(page) -> list[str]:
    """Every key or key combination the shortcut list names, in order."""
    tokens: list[str] = []
    for text in page.locator("#shortcuts dt").all_inner_texts():
        tokens += [t for t in re.split(r"\s+|·|/", text) if t]
    return tokens


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_it_does_what_each_listed_key_says_from_any_focus_state(
    live_server, browser, dataset, annotator, viewport
) -> None:
    campaign = active_campaign(dataset, annotator)
    earlier = submit_one(campaign, annotator, "earlier")
    page = open_page(browser, live_server, viewport, annotator.username, annotate_url(campaign))
    # Each focus state below starts from the item's empty form: the script that saves drafts
    # (restored when the item is opened again; test_browser_drafts.py) is left out here.
    page.route("**/drafts.js", lambda route: route.fulfill(body="", content_type="text/javascript"))
    keys = listed_keys(page)
    assert len(keys) == len(set(keys)), keys
    assert set(keys) == LISTED
    back_url = reverse("annotate_assignment", args=[campaign.pk, earlier.pk])
    guidelines_url = reverse("annotate_guidelines", args=[campaign.pk])

    for state, focus in focus_states(viewport).items():
        page.goto(live_server.url + annotate_url(campaign))

        def at(state_js: str = focus) -> None:
            page.evaluate(state_js)

        check_digit(page, at, state)
        for letter in ANSWER_LETTERS:
            at()
            page.keyboard.press(letter)
            assert page.is_checked(f'input[data-key="{letter}"]'), (state, letter)
        check_page_keys(page, at, state, guidelines_url)
        at()
        with page.expect_navigation():
            page.keyboard.press("r")
        assert page.url.endswith(back_url), state
        assert page.locator("input[type=radio]:checked").count() == 9

    # Tab and Shift+Tab move between questions; the arrows change the answer within one.
    page.goto(live_server.url + annotate_url(campaign))
    first, second = (f"quality_A_{c}" for c in campaign.quality_criteria[:2])
    page.focus(f"input[name={first}]")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.name") == second
    assert page.evaluate("document.querySelector('fieldset.is-active input').name") == second
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.name") == first
    page.keyboard.press("ArrowRight")
    assert page.is_checked(f"input[name={first}][value='2']")
    assert page.evaluate("document.querySelector('fieldset.is-active input').name") == first

    # Enter elsewhere than on an answer says what it would take.
    page.evaluate(FOCUS_STATES["nothing"])
    page.keyboard.press("Enter")
    assert "Ctrl+Enter submits from anywhere" in (page.text_content("#key-message") or "")

    # Enter on an answer submits; Ctrl+Enter submits from every focus state, the comment too.
    comment = "document.getElementById('id_comment').focus()"
    states = [*focus_states(viewport).values(), comment]
    for index, focus in enumerate(states):
        page.goto(live_server.url + annotate_url(campaign))
        shown = shown_assignment_id(page)
        for key in FULL_ANSWER:
            page.keyboard.press(key)
        page.evaluate(focus)
        with page.expect_navigation():
            page.keyboard.press("Control+Enter")
        assert Assignment.objects.get(pk=shown).status == Assignment.Status.SUBMITTED, index
    shown = shown_assignment_id(page)
    for key in FULL_ANSWER:
        page.keyboard.press(key)
    page.focus("input[name=confidence][value=high]")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert Assignment.objects.get(pk=shown).status == Assignment.Status.SUBMITTED
    page.close()


def check_digit(page, at: Callable[[], None], state: str) -> None:
    """A digit rates the focused question, or else the highlighted one; a digit outside the
    scale says why it did nothing."""
    at()
    target = page.evaluate(
        "(document.activeElement.closest && document.activeElement.closest('[data-answer-group]')"
        " || document.querySelector('fieldset.is-active')).querySelector('input').name"
    )
    page.keyboard.press("2")
    assert (
        page.evaluate(f"[...document.getElementsByName('{target}')].findIndex(r => r.checked)") == 1
    ), (state, target)
    at()
    page.keyboard.press("9")
    message = page.text_content("#key-message") or ""
    assert ("no rating 9" in message) or ("has 3 answers" in message), (state, message)
    assert page.locator("#key-message").is_visible()
    at()
    page.keyboard.press("z")
    assert "not a shortcut" in (page.text_content("#key-message") or ""), state


def check_page_keys(page, at: Callable[[], None], state: str, guidelines_url: str) -> None:
    flagged = page.is_checked("#id_flagged")
    at()
    page.keyboard.press("f")
    assert page.is_checked("#id_flagged") is not flagged, state
    at()
    page.keyboard.press("f")
    assert page.is_checked("#id_flagged") is flagged, state

    at()
    page.keyboard.press("c")
    assert page.evaluate("document.activeElement.id") == "id_comment", state
    fit = page.evaluate("document.querySelector('input[name=rubric_fit]:checked').value")
    page.keyboard.type("ba")  # letters typed here are text, not answers
    assert page.input_value("#id_comment").endswith("ba")
    assert page.evaluate("document.querySelector('input[name=rubric_fit]:checked').value") == fit
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.id") != "id_comment", state

    at()
    page.keyboard.press("s")
    assert page.evaluate("document.activeElement.id") == "id_skip_reason", state
    assert page.locator("#id_skip_reason").is_visible()
    page.keyboard.press("Escape")
    assert page.evaluate("document.activeElement.id") != "id_skip_reason", state

    at()
    page.keyboard.press("?")
    assert page.evaluate("document.activeElement.id") == "shortcuts", state
    top = page.locator("#shortcuts").evaluate("e => e.getBoundingClientRect().top")
    assert -1 <= top < page.viewport_size["height"], (state, top)  # sub-pixel rounding

    at()
    with page.context.expect_page() as opened:
        page.keyboard.press("g")
    guidelines = opened.value
    guidelines.wait_for_load_state()
    assert guidelines.url.endswith(guidelines_url), state
    guidelines.close()


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_it_goes_back_to_the_previous_item_and_saves_a_revision(
    live_server, browser, dataset, annotator, viewport
) -> None:
    width = VIEWPORTS[viewport][0]
    campaign = active_campaign(dataset, annotator)
    criteria = campaign.quality_criteria
    page = open_page(browser, live_server, viewport, annotator.username, annotate_url(campaign))
    assert page.locator("#previous-item").count() == 0
    page.keyboard.press("r")
    assert "no earlier item" in (page.text_content("#key-message") or "")
    first = shown_assignment_id(page)
    for key in FULL_ANSWER:
        page.keyboard.press(key)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    second = shown_assignment_id(page)
    assert second != first
    recent = page.text_content("#recent") or ""
    assert "A 5·4·3, B 2·2·2; fits A; preference; high confidence" in recent

    # Back with the key on a wide screen, with the button on a phone.
    with page.expect_navigation():
        if viewport == "wide":
            page.keyboard.press("r")
        else:
            page.click("#previous-item")
    assert page.url.endswith(reverse("annotate_assignment", args=[campaign.pk, first]))
    assert shown_assignment_id(page) == first
    checked = dict(
        page.evaluate(
            "[...document.querySelectorAll('input[type=radio]:checked')]"
            ".map(r => [r.name, r.value])"
        )
    )
    assert checked == {
        **{f"quality_A_{c}": v for c, v in zip(criteria, "543", strict=True)},
        **{f"quality_B_{c}": "2" for c in criteria},
        "rubric_fit": "A",
        "differentiator": "preference",
        "confidence": "high",
    }
    assert page.text_content("#submit-button") == "Save revision"
    assert_highlight_in_view(page, "revision at load")
    page.screenshot(path=str(ARTIFACTS / f"annotator_{width}_revision.png"))
    # A submitted item cannot be skipped: the key says so instead of doing nothing.
    page.keyboard.press("s")
    assert "cannot be skipped" in (page.text_content("#key-message") or "")

    page.keyboard.press("b")
    page.keyboard.press("q")
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert shown_assignment_id(page) == second  # back to the item in hand
    current = Annotation.objects.get(assignment_id=first, is_current=True)
    position = Assignment.objects.get(pk=first).chosen_position
    assert current.revision == 2
    assert current.rubric_fit_as_position(position) == "B"
    assert current.differentiator == "quality"
    assert Annotation.objects.filter(assignment_id=first).count() == 2
    assert "fits B; quality" in (page.text_content("#recent") or "")
    page.close()


def test_it_tells_the_annotator_they_are_finished(live_server, browser, dataset, annotator) -> None:
    Pair.objects.filter(dataset=dataset).exclude(external_id="p0000").delete()
    campaign = active_campaign(dataset, annotator)
    page = open_page(browser, live_server, "phone", annotator.username, annotate_url(campaign))
    for key in FULL_ANSWER:
        page.keyboard.press(key)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")
    assert page.url.endswith(reverse("annotate_done", args=[campaign.pk]))
    assert page.text_content("h1") == "You're finished, thank you!"
    assert page.text_content(".progress-done") == "1"
    page.screenshot(path=str(ARTIFACTS / "annotator_390_finished.png"))
    with page.expect_navigation():
        page.click("#home-link")
    assert "1 done of" in (page.text_content(".home-progress") or "")
    page.close()
