"""A participant of a Korean campaign, in a real Chromium whose browser asks for English: the
join page, the consent, a practice item and its feedback, the qualification and an item of the
real task all read in Korean (the campaign's language, its Korean consent text and
explanations), the annotation script speaks Korean through the JavaScript catalogue, and the
pages raise no error and break no Content-Security-Policy (screenshots in tests/artifacts/)."""

from django.urls import reverse

from prb_annotate.campaigns.qualification.rules import position_for
from prb_annotate.models import Annotation, Membership, QualificationItem
from tests.browser import test_browser_annotate
from tests.browser.test_browser_annotate import answer_with_keys, submit_with_keyboard
from tests.support.browser import ARTIFACTS, watch_for_problems
from tests.support.qualification import screening_campaign

pytestmark = test_browser_annotate.pytestmark
PID = "70a1b2c3d4e5f60718293a4b"
KOREAN_TEXTS = {
    "ko": {
        "guidelines": "각 응답을 끝까지 읽고 평가하세요.",
        "consent_text": "답변은 연구 목적으로만 사용됩니다.",
        "explanations": {"p0000": {"rubric_fit": "선택된 응답이 루브릭을 따릅니다."}},
    }
}


def answer_right(page, campaign, user_id: int, item: QualificationItem) -> None:
    side = position_for(campaign.seed, user_id, item.pk).lower()
    answer_with_keys(page, f"554443{side}ph")
    submit_with_keyboard(page)


def test_it_walks_a_participant_through_a_korean_campaign(live_server, browser, dataset) -> None:
    campaign = screening_campaign(
        dataset,
        practice=("p0000",),
        qualification=("p0002",),
        rule={"min_correct": 1},
        language="ko",
        guidelines="Read each response to the end.",
        consent_text="Your answers serve research only.",
        translations=KOREAN_TEXTS,
    )
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    problems = watch_for_problems(page)

    # Join: the campaign's language, its Korean instructions and consent text.
    study = f"?PROLIFIC_PID={PID}&STUDY_ID=s1&SESSION_ID=run1"
    page.goto(live_server.url + reverse("join", args=[campaign.invite_token]) + study)
    assert page.get_attribute("html", "lang") == "ko"
    assert "각 응답을 끝까지 읽고 평가하세요." in page.inner_text("#join-instructions")
    assert page.inner_text("#consent-text").strip() == "답변은 연구 목적으로만 사용됩니다."
    assert page.inner_text("#start-button") == "시작"
    page.screenshot(path=str(ARTIFACTS / "korean_join.png"), full_page=True)
    page.check("#id_consent")
    with page.expect_navigation():
        page.click("#start-button")

    # Practice: the note, the questions and the script's own words in Korean.
    user = Membership.objects.get(campaign=campaign, participant_id=PID).user
    practice, qualification = QualificationItem.objects.filter(campaign=campaign).order_by(
        "position"
    )
    assert "연습" in page.inner_text("#qualification-note")
    assert "이 사용자의 루브릭과 프로필에 더 잘 맞는 응답은 무엇입니까?" in page.inner_text(
        "#answer-panel"
    )
    page.keyboard.press("x")
    assert "이 페이지의 단축키가 아닙니다" in page.inner_text("#key-message")
    page.screenshot(path=str(ARTIFACTS / "korean_practice.png"))
    answer_right(page, campaign, user.pk, practice)
    assert page.get_attribute("#practice-feedback", "data-correct") == "yes"
    assert "맞았습니다" in page.inner_text("h1")
    fit_row = page.locator("tr[data-question=rubric_fit]")
    assert "선택된 응답이 루브릭을 따릅니다." in fit_row.inner_text()
    page.screenshot(path=str(ARTIFACTS / "korean_practice_feedback.png"), full_page=True)
    with page.expect_navigation():
        page.click("#practice-next")

    # The qualification, passed; then an item of the real task.
    assert "자격 평가" in page.inner_text("#qualification-note")
    answer_right(page, campaign, user.pk, qualification)
    assert "자격 평가를 통과했습니다" in page.inner_text("h1")
    with page.expect_navigation():
        page.click("#start-annotating")
    assert page.get_attribute("html", "lang") == "ko"
    assert page.inner_text("#submit-button") == "제출하고 다음으로"
    assert "질문" in page.inner_text(".question h3")
    answer_with_keys(page, "5")
    assert "개 중 1개 답함" in page.inner_text("#answered-count")
    page.screenshot(path=str(ARTIFACTS / "korean_item.png"))
    answer_with_keys(page, "54322aph")
    submit_with_keyboard(page)
    assert "답변을 저장했습니다." in page.inner_text(".messages")
    assert Annotation.objects.filter(assignment__annotator=user).count() == 1
    page.screenshot(path=str(ARTIFACTS / "korean_next_item.png"))
    assert problems == []
    context.close()
