"""Submitting answers: form parsing into dataset orientation, idempotent submits, revisions,
late submits on expired reservations, skips, and refusals that change nothing."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from prb_annotate.campaigns.annotating import (
    Answers,
    SubmitError,
    answers_from_form,
    form_values,
    parse_submission,
    skip,
    submit,
)
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import set_status
from prb_annotate.models import Annotation, Assignment, Dataset
from tests.support.campaigns import active_campaign, annotators, form_data, submit_form

NOW = timezone.now()


def reserved(dataset: Dataset, *, k: int = 3, **options):
    campaign = active_campaign(dataset, k=k, **options)
    users = annotators(campaign, 3)
    assignment = next_assignment(campaign, users[0], now=NOW)
    assert assignment is not None
    return campaign, users, assignment


def test_it_turns_the_ab_form_into_dataset_orientation(dataset: Dataset) -> None:
    _, _, assignment = reserved(dataset)
    for chosen_position, fit, expected_fit in [
        ("A", "A", "chosen"),
        ("A", "B", "rejected"),
        ("B", "A", "rejected"),
        ("B", "B", "chosen"),
        ("B", "tie", "tie"),
    ]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(assignment, "chosen_position", chosen_position)
            answers = answers_from_form(
                form_data(assignment.campaign, rubric_fit=fit), assignment=assignment
            )
        assert answers.rubric_fit == expected_fit, (chosen_position, fit)
        # The form rates A 5 and B 4 on every criterion.
        chosen_rating = 5 if chosen_position == "A" else 4
        assert set(answers.quality_chosen.values()) == {chosen_rating}
        assert set(answers.quality_rejected.values()) == {9 - chosen_rating}
        assert set(answers.quality_chosen) == {"correctness", "relevance", "helpfulness"}


def test_it_reads_form_values_back_in_ab_orientation(dataset: Dataset) -> None:
    _, _, assignment = reserved(dataset)
    result = submit_form(assignment, now=NOW, rubric_fit="B", comment="fine", flagged="on")
    values = form_values(result.annotation, assignment)
    assert values["rubric_fit"] == "B"
    assert values["quality_A_relevance"] == "5"
    assert values["quality_B_relevance"] == "4"
    assert values["comment"] == "fine"
    assert values["flagged"] == "on"


def test_it_names_every_bad_field(dataset: Dataset) -> None:
    _, _, assignment = reserved(dataset)
    data = form_data(assignment.campaign)
    data.update(
        quality_A_correctness="6",
        quality_B_relevance="",
        rubric_fit="C",
        differentiator="taste",
        confidence="sure",
        flagged="maybe",
        client_token="x" * 65,
        time_on_task_ms="-3",
    )
    del data["quality_B_helpfulness"]
    with pytest.raises(SubmitError) as caught:
        answers_from_form(data, assignment=assignment)
    assert set(caught.value.field_errors) == {
        "quality_A_correctness",
        "quality_B_relevance",
        "quality_B_helpfulness",
        "rubric_fit",
        "differentiator",
        "confidence",
        "flagged",
        "client_token",
        "time_on_task_ms",
    }


def test_it_accepts_json_types_and_form_strings(dataset: Dataset) -> None:
    _, _, assignment = reserved(dataset)
    data = form_data(assignment.campaign, flagged=True, time_on_task_ms=1499.6)
    data.update({key: int(value) for key, value in data.items() if key.startswith("quality_")})
    submission = parse_submission(data, assignment=assignment)
    assert submission.answers.flagged is True
    assert submission.time_on_task_ms == 1500
    whole = form_data(assignment.campaign, quality_A_relevance=4.0)
    assert parse_submission(whole, assignment=assignment).answers is not None
    for bad in [4.5, "4.0", "9" * 5000, float("nan"), "٣", [4], None]:
        with pytest.raises(SubmitError) as caught:
            parse_submission(
                form_data(assignment.campaign, quality_A_relevance=bad), assignment=assignment
            )
        assert list(caught.value.field_errors) == ["quality_A_relevance"], bad
    without_time = form_data(assignment.campaign)
    del without_time["time_on_task_ms"]
    del without_time["comment"]
    assert parse_submission(without_time, assignment=assignment).time_on_task_ms is None


def test_it_makes_one_annotation_for_a_resent_submit(dataset: Dataset) -> None:
    _, _, assignment = reserved(dataset)
    first = submit_form(assignment, now=NOW, token="same-token")
    again = submit_form(assignment, now=NOW + timedelta(seconds=1), token="same-token")
    assert first.created
    assert not again.created
    assert again.annotation.pk == first.annotation.pk
    assert Annotation.objects.count() == 1
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED


def test_it_refuses_a_token_used_for_another_assignment(dataset: Dataset) -> None:
    campaign, users, assignment = reserved(dataset)
    submit_form(assignment, now=NOW, token="shared")
    other = next_assignment(campaign, users[0], now=NOW)
    assert other is not None
    with pytest.raises(SubmitError) as caught:
        submit_form(other, now=NOW, token="shared")
    assert "client_token" in caught.value.field_errors
    other.refresh_from_db()
    assert other.status == Assignment.Status.RESERVED


def test_it_keeps_earlier_revisions(dataset: Dataset) -> None:
    _, _, assignment = reserved(dataset)
    submit_form(assignment, now=NOW, rubric_fit="A")
    revised = submit_form(assignment, now=NOW, rubric_fit="tie")
    assert revised.created
    assert revised.annotation.revision == 2
    rows = list(Annotation.objects.filter(assignment=assignment).order_by("revision"))
    assert [(row.revision, row.is_current) for row in rows] == [(1, False), (2, True)]
    assert rows[1].rubric_fit == "tie"
    assert rows[0].rubric_fit in {"chosen", "rejected"}


def test_it_counts_a_late_submit_when_the_pair_has_room(dataset: Dataset) -> None:
    _, _, assignment = reserved(dataset, k=2)
    late = NOW + timedelta(hours=3)
    result = submit_form(assignment, now=late)
    assert result.created
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.submitted_at == late


def test_it_refuses_a_late_submit_when_the_pair_is_full(dataset: Dataset) -> None:
    campaign, (_alice, bob, carol), assignment = reserved(dataset, k=2)
    later = NOW + timedelta(hours=1)
    # Alice's reservation lapsed; Bob and Carol fill the pair meanwhile.
    for user in (bob, carol):
        taken = next_assignment(campaign, user, now=later)
        assert taken is not None
        assert taken.item_id == assignment.item_id
        submit_form(taken, now=later)
    with pytest.raises(SubmitError) as caught:
        submit_form(assignment, now=later)
    assert caught.value.code == "full"
    assert "not recorded" in caught.value.message
    assert not Annotation.objects.filter(assignment=assignment).exists()
    assignment.refresh_from_db()
    assert assignment.status != Assignment.Status.SUBMITTED


def test_it_refuses_a_late_submit_while_others_hold_the_slots(dataset: Dataset) -> None:
    campaign, (_alice, bob, carol), assignment = reserved(dataset, k=2)
    later = NOW + timedelta(hours=1)
    for user in (bob, carol):
        assert next_assignment(campaign, user, now=later) is not None
    with pytest.raises(SubmitError):
        submit_form(assignment, now=later)


def test_it_hides_other_annotators_assignments(dataset: Dataset, outsider: User) -> None:
    _, (_alice, bob, _), assignment = reserved(dataset)
    data = form_data(assignment.campaign)
    answers = answers_from_form(data, assignment=assignment)
    for stranger in (bob, outsider):
        with pytest.raises(Assignment.DoesNotExist):
            submit(assignment.pk, stranger, answers, client_token="t-1", now=NOW)
        with pytest.raises(Assignment.DoesNotExist):
            skip(assignment.pk, stranger, reason="")
    assert not Annotation.objects.exists()


def test_it_refuses_answers_unless_the_campaign_is_active(dataset: Dataset) -> None:
    campaign, _, assignment = reserved(dataset)
    set_status(campaign, "paused")
    with pytest.raises(SubmitError) as caught:
        submit_form(assignment, now=NOW)
    assert caught.value.code == "inactive"
    set_status(campaign, "active")
    done = submit_form(assignment, now=NOW, token="before-close")
    set_status(campaign, "closed")
    with pytest.raises(SubmitError):
        submit_form(assignment, now=NOW)  # no revisions once closed
    # A retry of an answer already saved is still harmless.
    assert submit_form(assignment, now=NOW, token="before-close").annotation == done.annotation


def test_it_checks_answers_built_in_code(dataset: Dataset) -> None:
    _, (alice, _, _), assignment = reserved(dataset)
    answers = Answers(
        quality_chosen={"correctness": 5},
        quality_rejected={"correctness": 9, "relevance": 1, "helpfulness": 1},
        rubric_fit="A",
        differentiator="preference",
        confidence="high",
    )
    with pytest.raises(SubmitError) as caught:
        submit(assignment.pk, alice, answers, client_token="t", now=NOW)
    assert set(caught.value.field_errors) == {"quality_chosen", "quality_rejected", "rubric_fit"}


def test_it_skips_and_refuses_to_skip_a_submitted_pair(dataset: Dataset) -> None:
    campaign, (alice, _, _), assignment = reserved(dataset)
    skipped = skip(assignment.pk, alice, reason="  I cannot judge this  ")
    assert skipped.status == Assignment.Status.SKIPPED
    assert skipped.skip_reason == "I cannot judge this"
    assert skip(assignment.pk, alice, reason="again").skip_reason == "I cannot judge this"
    following = next_assignment(campaign, alice, now=NOW)
    assert following is not None
    submit_form(following, now=NOW)
    with pytest.raises(SubmitError) as caught:
        skip(following.pk, alice, reason="")
    assert caught.value.code == "submitted"
