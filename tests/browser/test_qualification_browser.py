"""Practice and qualification in a real Chromium: a Prolific participant arrives by the study
link, answers a practice item wrongly and sees what was expected and why, tries again and gets
it right, fails the first qualification attempt and reads the feedback on every item, passes the
second (the two responses swapped) and reaches the queue; the pages run no inline script and
raise no error (screenshots in tests/artifacts/)."""

from django.urls import reverse

from prb_annotate.campaigns.qualification.rules import position_for
from prb_annotate.models import Annotation, Membership, QualificationItem, QualificationRecord
from tests.browser import test_browser_annotate
from tests.browser.test_browser_annotate import answer_with_keys, submit_with_keyboard
from tests.support.browser import ARTIFACTS, watch_for_problems
from tests.support.qualification import screening_campaign

pytestmark = test_browser_annotate.pytestmark
PID = "60a1b2c3d4e5f60718293a4b"


def answer(page, *, side: str, right: bool) -> None:
    """Rate both responses, then name ``side`` (or the other one) and the difference."""
    other = "b" if side == "A" else "a"
    fit, differentiator = (side.lower(), "p") if right else (other, "q")
    answer_with_keys(page, f"554443{fit}{differentiator}h")
    submit_with_keyboard(page)


def test_it_walks_a_participant_through_practice_and_two_attempts(
    live_server, browser, dataset
) -> None:
    campaign = screening_campaign(dataset, practice=("p0000",))
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = watch_for_problems(page)
    study = f"?PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=run1"
    page.goto(live_server.url + reverse("join", args=[campaign.invite_token]) + study)
    with page.expect_navigation():
        page.click("#join button[type=submit]")
    assert page.url.endswith(reverse("qualification", args=[campaign.pk]))
    user = Membership.objects.get(campaign=campaign, participant_id=PID).user
    items: dict[str, list[QualificationItem]] = {"practice": [], "qualification": []}
    for item in QualificationItem.objects.filter(campaign=campaign).order_by("position"):
        items[item.phase].append(item)
    (practice,) = items["practice"]
    side = position_for(campaign.seed, user.pk, practice.pk)

    # Practice: wrong, then the feedback, a retry, right.
    assert page.get_attribute("#qualification-note", "data-phase") == "practice"
    page.screenshot(path=str(ARTIFACTS / "qualification_practice.png"))
    answer(page, side=side, right=False)
    assert page.get_attribute("#practice-feedback", "data-correct") == "no"
    fit_row = page.locator("tr[data-question=rubric_fit]")
    assert fit_row.get_attribute("data-correct") == "no"
    assert f"Response {side}" in fit_row.inner_text()
    assert "The chosen one follows the rubric." in fit_row.inner_text()
    page.screenshot(path=str(ARTIFACTS / "qualification_practice_feedback.png"))
    with page.expect_navigation():
        page.click("#practice-retry")
    assert "try 2" in page.inner_text("#qualification-note")
    answer(page, side=side, right=True)
    assert page.get_attribute("#practice-feedback", "data-correct") == "yes"
    with page.expect_navigation():
        page.click("#practice-next")

    # First attempt: every item wrong; the result names what each expected.
    for item in items["qualification"]:
        assert page.get_attribute("#qualification-note", "data-phase") == "qualification"
        assert "attempt 1 of 2" in page.inner_text("#qualification-note")
        answer(page, side=position_for(campaign.seed, user.pk, item.pk), right=False)
    assert page.get_attribute("#qualification-result", "data-attempt") == "1"
    assert "Not passed yet: 0 of 3 right" in page.inner_text("h1")
    assert page.locator(".feedback-table").count() == 3
    page.screenshot(path=str(ARTIFACTS / "qualification_first_attempt.png"), full_page=True)
    with page.expect_navigation():
        page.click("#second-attempt")

    # Second attempt, the sides swapped: passed, and on to the queue.
    for item in items["qualification"]:
        assert "attempt 2 of 2" in page.inner_text("#qualification-note")
        answer(page, side=position_for(campaign.seed, user.pk, item.pk, flipped=True), right=True)
    assert page.get_attribute("#qualification-result", "data-outcome") == "passed"
    with page.expect_navigation():
        page.click("#start-annotating")
    action = page.get_attribute("#annotation-form", "action")
    assert action is not None
    assert "/a/" in action
    assert page.locator("#qualification-note").count() == 0

    record = QualificationRecord.objects.get(membership__user=user)
    assert (record.outcome, [a["right"] for a in record.attempts]) == ("passed", [0, 3])
    assert not Annotation.objects.filter(assignment__annotator=user).exists()
    assert problems == []
