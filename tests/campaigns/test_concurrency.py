"""Concurrent annotators on a real database (SQLite with immediate transactions, or
PostgreSQL with row locks): no pair gets more than k answers, nobody gets a pair twice, and
every accepted answer is stored exactly once, through expiries, skips, late and repeated
submits. Threads use real connections of their own and close them when done."""

import random
import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from prb_annotate.campaigns.annotating import SubmitError, answers_from_form, skip, submit
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.models import Annotation, Assignment, Campaign, Dataset
from tests.conftest import make_pairs
from tests.support.campaigns import active_campaign, annotators, form_data
from tests.support.concurrency import K, check_invariants, run_threads

THREADS = 16
CYCLES = 30


def submit_data(assignment: Assignment, campaign: Campaign, token: str):
    data = form_data(campaign, token=token, rubric_fit=random.choice("AB"))
    return answers_from_form(data, assignment=assignment), data


@pytest.mark.django_db(transaction=True)
def test_it_keeps_every_invariant_under_concurrent_annotators() -> None:
    dataset = Dataset.objects.create(name="concurrent")
    make_pairs(dataset, 150)
    campaign = active_campaign(
        dataset, k=K, gold_pair_ids=["p0000", "p0001", "p0002"], gold_rate=0.1
    )
    users = annotators(campaign, THREADS)
    base = timezone.now()
    accepted: dict[str, int] = {}
    refused: list[str] = []
    lock = threading.Lock()

    def annotate(index: int) -> None:
        user = User.objects.get(pk=users[index].pk)
        rng = random.Random(index)
        # Four annotators live two hours ahead: for them every other reservation has lapsed,
        # so they reclaim slots that their owners are still working on.
        offset = timedelta(hours=2) if index % 4 == 0 else timedelta(0)
        abandoned: list[Assignment] = []
        for cycle in range(CYCLES):
            now = base + offset + timedelta(seconds=cycle)
            assignment = next_assignment(campaign, user, now=now)
            if assignment is None:
                break
            roll = rng.random()
            if roll < 0.1:
                skip(assignment.pk, user, reason="cannot judge", now=now)
                continue
            if roll < 0.2:
                # Walk away: the reservation lapses. Asking again an hour later gives it back if
                # nobody took the slot (then the late answer below is a revision); otherwise
                # the late answer counts only if the pair still has room.
                abandoned.append(assignment)
                assignment = next_assignment(campaign, user, now=now + timedelta(hours=1))
                if assignment is None:
                    break
            token = f"t{index}-{cycle}"
            answers, _ = submit_data(assignment, campaign, token)
            attempts = 2 if roll > 0.9 else 1  # a double click now and then
            for _ in range(attempts):
                try:
                    result = submit(assignment.pk, user, answers, client_token=token, now=now)
                except SubmitError as error:
                    if error.code != "full":  # the one refusal a race may cause
                        raise
                    with lock:
                        refused.append(token)
                    break
                with lock:
                    if result.created:
                        assert token not in accepted
                        accepted[token] = result.annotation.pk
                    else:
                        assert accepted[token] == result.annotation.pk
        for number, late in enumerate(abandoned):
            token = f"late{index}-{number}"
            answers, _ = submit_data(late, campaign, token)
            try:
                result = submit(
                    late.pk, user, answers, client_token=token, now=base + timedelta(hours=3)
                )
            except SubmitError as error:
                if error.code != "full":
                    raise
                with lock:
                    refused.append(token)
            else:
                with lock:
                    accepted[token] = result.annotation.pk

    errors = run_threads(THREADS, annotate)
    assert not errors, "\n".join(errors)
    assert len(accepted) > 200
    check_invariants(campaign, accepted)


@pytest.mark.django_db(transaction=True)
def test_it_gives_the_last_slot_to_exactly_one_annotator() -> None:
    dataset = Dataset.objects.create(name="last-slot")
    make_pairs(dataset, 1)
    campaign = active_campaign(dataset, k=2)
    users = annotators(campaign, 12)
    got: list[int] = []
    lock = threading.Lock()

    def ask(index: int) -> None:
        assignment = next_assignment(campaign, User.objects.get(pk=users[index].pk))
        if assignment is not None:
            with lock:
                got.append(assignment.pk)

    errors = run_threads(12, ask)
    assert not errors, "\n".join(errors)
    assert len(got) == 2
    assert Assignment.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_it_reserves_one_item_for_a_burst_of_clicks() -> None:
    dataset = Dataset.objects.create(name="clicks")
    make_pairs(dataset, 20)
    campaign = active_campaign(dataset, k=3)
    (alice,) = annotators(campaign, 1)
    got: list[int] = []
    lock = threading.Lock()

    def click(_: int) -> None:
        assignment = next_assignment(campaign, User.objects.get(pk=alice.pk))
        assert assignment is not None
        with lock:
            got.append(assignment.pk)

    errors = run_threads(8, click)
    assert not errors, "\n".join(errors)
    assert len(set(got)) == 1
    assert Assignment.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_it_stores_one_answer_for_a_burst_of_resent_submits() -> None:
    dataset = Dataset.objects.create(name="resend")
    make_pairs(dataset, 3)
    campaign = active_campaign(dataset, k=3)
    (alice,) = annotators(campaign, 1)
    assignment = next_assignment(campaign, alice)
    assert assignment is not None
    answers, _ = submit_data(assignment, campaign, "one-token")
    results = []
    lock = threading.Lock()

    def resend(_: int) -> None:
        result = submit(
            assignment.pk, User.objects.get(pk=alice.pk), answers, client_token="one-token"
        )
        with lock:
            results.append((result.annotation.pk, result.created))

    errors = run_threads(8, resend)
    assert not errors, "\n".join(errors)
    assert len({pk for pk, _ in results}) == 1
    assert sum(created for _, created in results) == 1
    assert Annotation.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_it_refuses_one_token_for_two_answers_sent_at_once() -> None:
    dataset = Dataset.objects.create(name="shared-token")
    make_pairs(dataset, 4)
    campaign = active_campaign(dataset, k=1)
    users = annotators(campaign, 2)
    assignments = [next_assignment(campaign, user) for user in users]
    outcomes: list[str] = []
    lock = threading.Lock()

    def send(index: int) -> None:
        assignment = assignments[index]
        assert assignment is not None
        answers, _ = submit_data(assignment, campaign, "shared")
        try:
            submit(assignment.pk, users[index], answers, client_token="shared")
        except SubmitError as error:
            with lock:
                outcomes.append(next(iter(error.field_errors)))
        else:
            with lock:
                outcomes.append("saved")

    errors = run_threads(2, send)
    assert not errors, "\n".join(errors)
    assert sorted(outcomes) == ["client_token", "saved"]
    assert Annotation.objects.count() == 1
    assert Assignment.objects.filter(status="submitted").count() == 1
