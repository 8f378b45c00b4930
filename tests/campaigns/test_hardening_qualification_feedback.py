"""The feedback after a failed qualification attempt says which questions were right and why,
never the expected answers: the second attempt asks the same items with the sides swapped, so
"expected: Response B" answered it (a script passed 3 of 3 on attempt 2). Page and API."""

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.qualification import flow
from prb_annotate.models import Dataset
from tests.api.test_api_work import token_client
from tests.support.qualification import (
    QUALIFICATION_IDS,
    answer_current,
    do_practice,
    screening_campaign,
)


def test_the_feedback_between_attempts_gives_no_answer(dataset: Dataset, annotator: User) -> None:
    campaign = screening_campaign(dataset, annotator)
    do_practice(campaign, annotator)
    result = None
    while result is None:
        result = answer_current(campaign, annotator, right=False).result
    assert result.outcome == "in_progress"
    feedback = flow.attempt_feedback(campaign, annotator, 1)
    assert [item.external_id for item in feedback] == list(QUALIFICATION_IDS)
    for item in feedback:
        assert item.answers_shown is False
        assert all((q.given, q.expected) == ("", "") for q in item.questions)
        assert any(q.explanation for q in item.questions)  # the reason stays
        assert not all(q.correct for q in item.questions)
    client = Client()
    client.force_login(annotator)
    page = client.get(reverse("qualification_result", args=[campaign.pk])).content.decode()
    assert "Expected" not in page
    # The page says what it shows, and that the second attempt swaps the sides (rules.position_for).
    assert "whether each item was right, and why; the expected answers stay hidden." in page
    assert "with the two responses shown in the other order" in page
    assert "Response A" not in page
    assert "Response B" not in page
    mine = token_client(annotator).get(reverse("api_my_qualification", args=[campaign.pk]))
    for item in mine.json()["feedback"]:
        assert item["answers_shown"] is False
        assert {(q["given"], q["expected"]) for q in item["questions"]} == {("", "")}
    # Practice feedback, which no later attempt repeats, still shows the expected answers.
    practice_item = campaign.qualification_items.filter(phase="practice").first()
    assert practice_item is not None
    practice = flow.latest_practice_feedback(practice_item, annotator)
    assert practice is not None
    assert practice.answers_shown
    assert any(q.expected for q in practice.questions)
