"""A member's way through practice and qualification, on the real database: practice first with
feedback and retries, two attempts with the sides swapped, screened out after two failures (and
never handed a regular item, not even one reserved before), let in by a manager, and the pairs
set apart from the campaign's sample."""

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from prb_annotate.campaigns.annotating import SubmitError, submit
from prb_annotate.campaigns.assignment import QualificationFirst, next_assignment
from prb_annotate.campaigns.lifecycle import (
    CampaignSetupError,
    add_member,
    create_campaign,
)
from prb_annotate.campaigns.qualification import flow, setup
from prb_annotate.campaigns.qualification.gate import is_cleared
from prb_annotate.models import (
    Annotation,
    Assignment,
    CampaignItem,
    QualificationAnswer,
    QualificationItem,
    QualificationRecord,
)
from tests.support.campaigns import active_campaign, answers
from tests.support.concurrency import run_threads
from tests.support.qualification import (
    PRACTICE_IDS,
    QUALIFICATION_IDS,
    answer_current,
    current_task,
    do_practice,
    fail_twice,
    form_for,
    pass_first,
    screening_campaign,
    take_attempt,
)

Stage = flow.Stage


def test_it_sets_the_pairs_apart_from_the_regular_sample(dataset, annotator):
    """The five pairs chosen are items of their own, in order, and never campaign items."""
    campaign = screening_campaign(dataset, annotator)
    regular = set(campaign.items.values_list("pair__external_id", flat=True))
    assert regular == {f"p{index:04d}" for index in range(5, 12)}
    practice = setup.items_of(campaign, "practice")
    assert [item.pair.external_id for item in practice] == list(PRACTICE_IDS)
    assert [item.position for item in practice] == [0, 1]
    qualification = setup.items_of(campaign, "qualification")
    assert [item.pair.external_id for item in qualification] == list(QUALIFICATION_IDS)
    assert qualification[0].expected_answers == {
        "rubric_fit": "chosen",
        "differentiator": "preference",
    }


def test_it_refuses_pairs_that_cannot_be_set_apart(dataset):
    """A missing pair, a gold pair, a pair in both phases or a rule the items cannot meet: the
    campaign is not created, and the message names the pair or the rule."""
    cases: list[tuple[dict[str, Any], str]] = [
        ({"practice_pairs": ["nope"]}, "not in dataset"),
        ({"practice_pairs": ["p0000"], "gold_pair_ids": ["p0000"]}, "gold pairs cannot"),
        ({"practice_pairs": ["p0000"], "qualification_pairs": ["p0000"]}, "for practice and"),
        (
            {"qualification_pairs": ["p0000"], "qualification_rule": {"min_correct": 2}},
            "has 1 item",
        ),
        ({"practice_pairs": {"p0000": {"expected_answers": {"rubric_fit": "A"}}}}, "p0000"),
    ]
    for index, (options, message) in enumerate(cases):
        with pytest.raises(CampaignSetupError, match=message):
            create_campaign(dataset, f"refused-{index}", k=2, **options)
    assert not QualificationItem.objects.exists()


def test_it_hands_out_practice_then_qualification_then_the_queue(dataset, annotator):
    """The queue refuses until every practice item is answered and the qualification passed;
    then the member gets regular items."""
    campaign = screening_campaign(dataset, annotator)
    with pytest.raises(QualificationFirst):
        next_assignment(campaign, annotator)
    first = current_task(campaign, annotator)
    assert (first.phase, first.number, first.total) == (Stage.PRACTICE, 1, 2)
    do_practice(campaign, annotator)
    step = current_task(campaign, annotator)
    assert (step.phase, step.attempt) == (Stage.QUALIFICATION, 1)
    assert not is_cleared(campaign.pk, annotator.pk)
    with pytest.raises(QualificationFirst):
        next_assignment(campaign, annotator)
    result = take_attempt(campaign, annotator, right=2)
    assert (result.passed, result.right, result.total, result.outcome) == (True, 2, 3, "passed")
    assert is_cleared(campaign.pk, annotator.pk)
    assignment = next_assignment(campaign, annotator)
    assert assignment is not None
    assert assignment.item.kind == CampaignItem.Kind.REGULAR


def test_it_gives_practice_feedback_and_allows_a_retry(dataset, annotator):
    """A wrong practice answer comes back with what was expected (as the member saw it) and
    why; answering again adds a try and leaves the first."""
    campaign = screening_campaign(dataset, annotator)
    task = current_task(campaign, annotator)
    wrong = flow.submit(campaign.pk, annotator, task.item.pk, form_for(campaign, task, right=False))
    feedback = wrong.feedback
    assert feedback is not None
    assert not feedback.correct
    fit = {q.question: q for q in feedback.questions}["rubric_fit"]
    assert fit.expected == f"Response {task.chosen_position}"
    assert not fit.correct
    assert fit.explanation == "The chosen one follows the rubric."
    retry = flow.task_for(campaign, annotator, task.item.pk)
    assert retry is not None
    assert retry.attempt == 2
    assert retry.chosen_position == task.chosen_position
    right = flow.submit(campaign.pk, annotator, task.item.pk, form_for(campaign, retry, right=True))
    assert right.feedback is not None
    assert right.feedback.correct
    tries = QualificationAnswer.objects.filter(item=task.item, annotator=annotator)
    assert sorted(tries.values_list("attempt", flat=True)) == [1, 2]
    # Answered once, the item no longer holds the member back: the next practice item comes.
    assert current_task(campaign, annotator).number == 2


def test_it_gives_a_second_attempt_with_the_sides_swapped(dataset, annotator):
    """A failed first attempt keeps the member in progress; the second shows each pair with the
    chosen answer on the other side, and passing it opens the queue."""
    campaign = screening_campaign(dataset, annotator)
    do_practice(campaign, annotator)
    first_sides = {}
    result = None
    while result is None:
        task = current_task(campaign, annotator)
        first_sides[task.item.pk] = task.chosen_position
        result = answer_current(campaign, annotator, right=False).result
    assert result.outcome == "in_progress"
    feedback = flow.attempt_feedback(campaign, annotator, 1)
    assert [item.external_id for item in feedback] == list(QUALIFICATION_IDS)
    assert not any(item.correct for item in feedback)
    second = current_task(campaign, annotator)
    assert second.attempt == 2
    assert second.chosen_position != first_sides[second.item.pk]
    assert take_attempt(campaign, annotator, right=3).passed
    record = QualificationRecord.objects.get(membership__user=annotator)
    assert [a["right"] for a in record.attempts] == [0, 3]
    assert record.outcome == "passed"
    assert record.finished_at is not None


def test_it_screens_out_after_two_failures_and_never_hands_a_regular_item(dataset, annotator):
    """A reservation made before the qualification existed is not handed back, not answerable
    and expired; the queue refuses the member for good, and so does every later submit."""
    campaign = active_campaign(dataset, k=2)
    add_member(campaign, annotator)
    earlier = next_assignment(campaign, annotator)
    assert earlier is not None
    # A qualification added afterwards, over three pairs nobody was handed.
    for item in campaign.items.exclude(pk=earlier.item_id).order_by("order_key")[:3]:
        setup.choose_item(campaign, item.pair, "qualification", {"rubric_fit": "chosen"}, {})
    with pytest.raises(QualificationFirst):
        next_assignment(campaign, annotator)
    fail_twice_without_practice(campaign, annotator)
    record = QualificationRecord.objects.get(membership__user=annotator)
    assert (record.outcome, record.attempt, len(record.attempts)) == ("failed", 2, 2)
    assert flow.next_step(campaign, annotator).stage == Stage.SCREENED_OUT
    earlier.refresh_from_db()
    assert earlier.status == Assignment.Status.EXPIRED
    with pytest.raises(QualificationFirst):
        next_assignment(campaign, annotator)
    with pytest.raises(SubmitError) as refused:
        submit(earlier.pk, annotator, answers(earlier), client_token="late-answer")
    assert refused.value.code == "qualification"
    assert not Annotation.objects.filter(assignment__annotator=annotator).exists()
    task_item = QualificationItem.objects.filter(campaign=campaign).earliest("pk")
    with pytest.raises(SubmitError) as again:
        flow.submit(campaign.pk, annotator, task_item.pk, {"client_token": "more"})
    assert again.value.code == "screened_out"


def fail_twice_without_practice(campaign, user) -> None:
    take_attempt(campaign, user, right=0)
    take_attempt(campaign, user, right=0)


def test_it_refuses_answers_out_of_order_and_replays_a_token(dataset, annotator):
    """Qualification before practice, an item answered twice in an attempt: refused with
    nothing stored; the same client token again returns the stored answer."""
    campaign = screening_campaign(dataset, annotator)
    qualification_item = setup.items_of(campaign, "qualification")[0]
    with pytest.raises(SubmitError) as early:
        flow.submit(campaign.pk, annotator, qualification_item.pk, {"client_token": "early"})
    assert early.value.code == "order"
    do_practice(campaign, annotator)
    task = current_task(campaign, annotator)
    data = form_for(campaign, task, right=True)
    stored = flow.submit(campaign.pk, annotator, task.item.pk, data)
    replay = flow.submit(campaign.pk, annotator, task.item.pk, data)
    assert (stored.created, replay.created, replay.answer.pk) == (True, False, stored.answer.pk)
    with pytest.raises(SubmitError) as twice:
        flow.submit(campaign.pk, annotator, task.item.pk, form_for(campaign, task, right=True))
    assert twice.value.code == "order"
    following = current_task(campaign, annotator)
    with pytest.raises(SubmitError) as bad:
        flow.submit(campaign.pk, annotator, following.item.pk, {"client_token": "x"})
    assert bad.value.code == "invalid"
    assert "rubric_fit" in bad.value.field_errors
    assert QualificationAnswer.objects.filter(item=task.item).count() == 1
    assert not QualificationAnswer.objects.filter(item=following.item).exists()


def test_it_lets_a_member_who_failed_in_with_who_and_why(dataset, annotator, manager):
    """Only after a failure; the record keeps who, why and when, and the queue opens."""
    campaign = screening_campaign(dataset, annotator)
    with pytest.raises(Exception, match="Only an annotator who failed"):
        setup.admit(campaign, annotator, "too early", by=manager)
    fail_twice(campaign, annotator)
    with pytest.raises(Exception, match="Say why"):
        setup.admit(campaign, annotator, "  ", by=manager)
    record = setup.admit(campaign, annotator, "misread the first item", by=manager)
    assert (record.outcome, record.admitted_by, record.admit_reason) == (
        "admitted",
        manager,
        "misread the first item",
    )
    assert record.admitted_at is not None
    assert next_assignment(campaign, annotator) is not None
    row = setup.member_qualifications(campaign)[annotator.pk]
    assert (row.outcome, row.admitted_by, row.label) == (
        "admitted",
        "manager",
        "let in by a manager",
    )


def test_it_keeps_what_decides_outcomes_fixed_once_answered(dataset, annotator):
    """Once a member answered the qualification its items and rule stay; explanations can
    still change. Gold pairs and pairs handed out already cannot be chosen."""
    campaign = screening_campaign(dataset, annotator, gold_pair_ids=["p0011"])
    pair = setup.items_of(campaign, "qualification")[0].pair
    gold_pair = dataset.pairs.get(external_id="p0011")
    with pytest.raises(Exception, match="gold item"):
        setup.choose_item(campaign, gold_pair, "practice", {"rubric_fit": "chosen"}, {})
    do_practice(campaign, annotator)
    answer_current(campaign, annotator, right=True)
    with pytest.raises(Exception, match="rule stays"):
        setup.set_rule(campaign, min_correct=1, required_questions=[])
    with pytest.raises(Exception, match="only its explanations"):
        setup.choose_item(campaign, pair, "qualification", {"rubric_fit": "tie"}, {})
    item = setup.choose_item(
        campaign,
        pair,
        "qualification",
        {"rubric_fit": "chosen", "differentiator": "preference"},
        {"rubric_fit": "Clearer now."},
    )
    assert item.explanations == {"rubric_fit": "Clearer now."}
    new_pair = dataset.pairs.get(external_id="p0010")
    with pytest.raises(Exception, match="qualification, its items stay"):
        setup.choose_item(campaign, new_pair, "qualification", {"rubric_fit": "chosen"}, {})
    other = User.objects.create_user("zed")
    add_member(campaign, other)
    pass_first(campaign, other)
    handed = next_assignment(campaign, other)
    assert handed is not None
    with pytest.raises(Exception, match="handed this pair"):
        setup.choose_item(campaign, handed.item.pair, "practice", {"rubric_fit": "chosen"}, {})
    untouched = campaign.items.exclude(assignments__isnull=False).earliest("pk")
    setup.choose_item(campaign, untouched.pair, "practice", {"rubric_fit": "chosen"}, {})
    assert not campaign.items.filter(pk=untouched.pk).exists()


def test_it_blocks_a_passed_member_again_for_a_new_practice_item(dataset, annotator):
    """Practice added later comes before the member's next regular item."""
    campaign = screening_campaign(dataset, annotator)
    pass_first(campaign, annotator)
    assert next_assignment(campaign, annotator) is not None
    untouched = campaign.items.exclude(assignments__isnull=False).earliest("pk")
    setup.choose_item(campaign, untouched.pair, "practice", {"differentiator": "preference"}, {})
    with pytest.raises(QualificationFirst):
        next_assignment(campaign, annotator)
    assert current_task(campaign, annotator).item.pair == untouched.pair
    answer_current(campaign, annotator, right=True)
    assert next_assignment(campaign, annotator) is not None


def test_it_times_each_attempt(dataset, annotator):
    """The start (the first qualification item handed out), the end of each attempt and of the
    qualification, in the record, at the times the answers were given."""
    campaign = screening_campaign(dataset, annotator)
    do_practice(campaign, annotator)
    started = QualificationRecord.objects.get(membership__user=annotator).started_at
    times = [started + timedelta(minutes=minute) for minute in range(1, 7)]
    for index, when in enumerate(times):
        task = current_task(campaign, annotator)
        data = form_for(campaign, task, right=index >= 3)
        flow.submit(campaign.pk, annotator, task.item.pk, data, now=when)
    record = QualificationRecord.objects.get(membership__user=annotator)
    assert [a["finished_at"] for a in record.attempts] == [
        times[2].isoformat(),
        times[5].isoformat(),
    ]
    assert [a["passed"] for a in record.attempts] == [False, True]
    assert record.finished_at == times[5]


def race_first_answer_against_new_item(dataset, annotator, name: str) -> tuple[bool, int, list]:
    """The member's one qualification answer and the manager adding a qualification item,
    started together: (item added, qualification items now, totals of finished attempts)."""
    campaign = screening_campaign(
        dataset, annotator, name=name, qualification=("p0002",), rule={"min_correct": 1}
    )
    do_practice(campaign, annotator)
    task = current_task(campaign, annotator)
    form = form_for(campaign, task, right=True)
    new_pair = dataset.pairs.get(external_id="p0010")
    added: list[bool] = []

    def work(index: int) -> None:
        if index == 0:
            flow.submit(campaign.pk, annotator, task.item.pk, form)
            return
        try:
            setup.choose_item(campaign, new_pair, "qualification", {"rubric_fit": "chosen"}, {})
            added.append(True)
        except ValidationError:
            added.append(False)

    assert run_threads(2, work) == []
    items = QualificationItem.objects.filter(campaign=campaign, phase="qualification").count()
    record = QualificationRecord.objects.get(membership__campaign=campaign)
    return added == [True], items, [attempt["total"] for attempt in record.attempts]


@pytest.mark.django_db(transaction=True)
def test_a_first_answer_and_a_new_qualification_item_never_cross(dataset, annotator):
    """Ten races of the member's first (and only needed) qualification answer against the
    manager adding a qualification item: either the item is refused because the member
    answered, or it came first and the member's attempt waits for it; never a pass judged on
    fewer items than the campaign has. (SQLite writes one transaction at a time; PostgreSQL
    shows the race.)"""
    for round_ in range(10):
        added, items, finished = race_first_answer_against_new_item(
            dataset, annotator, f"race {round_}"
        )
        if added:
            assert (items, finished) == (2, []), round_
        else:
            assert (items, finished) == (1, [1]), round_
