"""Concurrent annotators through the JSON API (next, submit) on a real database: the same
invariants as the services' concurrency tests, with each request running as the API runs it
(on PostgreSQL one transaction per request, authentication included). Threads use real
connections of their own and close them when done."""

import json
import random
import threading

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from prb_annotate.models import Annotation, Assignment, Dataset
from tests.conftest import make_pairs
from tests.support.campaigns import active_campaign, annotators, form_data
from tests.support.concurrency import K, check_invariants, run_threads

THREADS = 8
CYCLES = 20


def token_client(user: User) -> Client:
    token, _ = Token.objects.get_or_create(user=user)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}")


def post(client: Client, url: str, data: dict[str, object] | None = None):
    return client.post(url, json.dumps(data or {}), content_type="application/json")


def clients(users: list[User]) -> list[Client]:
    # Tokens made here, before the threads start: each thread then only reads.
    return [token_client(user) for user in users]


@pytest.mark.django_db(transaction=True)
def test_the_api_keeps_every_invariant_under_concurrent_annotators() -> None:
    dataset = Dataset.objects.create(name="api-concurrent")
    make_pairs(dataset, 60)
    campaign = active_campaign(dataset, k=K, gold_pair_ids=["p0000", "p0001"], gold_rate=0.1)
    users = annotators(campaign, THREADS)
    browsers = clients(users)
    next_url = reverse("api_next", args=[campaign.pk])
    accepted: dict[str, int] = {}
    lock = threading.Lock()

    def annotate(index: int) -> None:
        client = browsers[index]
        rng = random.Random(index)
        for cycle in range(CYCLES):
            response = post(client, next_url)
            if response.status_code == 204:
                break
            assert response.status_code == 200, response.content
            assignment = response.json()["assignment"]
            if rng.random() < 0.2:  # a reload: the same reservation again
                assert post(client, next_url).json()["assignment"] == assignment
            token = f"api{index}-{cycle}"
            url = reverse("api_submit", args=[assignment])
            body = form_data(campaign, token=token, rubric_fit=rng.choice("AB"))
            first = post(client, url, body)
            assert first.status_code == 201, first.content
            with lock:
                accepted[token] = first.json()["annotation"]
            if rng.random() < 0.2:  # a resent submit: the same answer, stored once
                again = post(client, url, body)
                assert again.status_code == 200, again.content
                assert again.json()["annotation"] == first.json()["annotation"]

    errors = run_threads(THREADS, annotate)
    assert not errors, "\n".join(errors)
    assert len(accepted) > 60
    check_invariants(campaign, accepted)


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_next_clicks_through_the_api_reserves_one_item() -> None:
    dataset = Dataset.objects.create(name="api-clicks")
    make_pairs(dataset, 20)
    campaign = active_campaign(dataset, k=K)
    (alice,) = annotators(campaign, 1)
    (browser,) = clients([alice])
    got: list[int] = []
    lock = threading.Lock()

    def click(_: int) -> None:
        response = post(browser, reverse("api_next", args=[campaign.pk]))
        assert response.status_code == 200, response.content
        with lock:
            got.append(response.json()["assignment"])

    errors = run_threads(8, click)
    assert not errors, "\n".join(errors)
    assert len(set(got)) == 1
    assert Assignment.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_resent_submits_through_the_api_stores_one_answer() -> None:
    dataset = Dataset.objects.create(name="api-resend")
    make_pairs(dataset, 3)
    campaign = active_campaign(dataset, k=K)
    (alice,) = annotators(campaign, 1)
    (browser,) = clients([alice])
    assignment = post(browser, reverse("api_next", args=[campaign.pk])).json()["assignment"]
    body = form_data(campaign, token="one-token")
    results: list[tuple[int, int]] = []
    lock = threading.Lock()

    def resend(_: int) -> None:
        response = post(browser, reverse("api_submit", args=[assignment]), body)
        with lock:
            results.append((response.status_code, response.json()["annotation"]))

    errors = run_threads(8, resend)
    assert not errors, "\n".join(errors)
    assert sorted(status for status, _ in results) == [200] * 7 + [201]
    assert len({annotation for _, annotation in results}) == 1
    assert Annotation.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_one_token_sent_for_two_answers_at_once_through_the_api_changes_one() -> None:
    dataset = Dataset.objects.create(name="api-shared-token")
    make_pairs(dataset, 4)
    campaign = active_campaign(dataset, k=1)
    users = annotators(campaign, 2)
    browsers = clients(users)
    assignments = [
        post(browser, reverse("api_next", args=[campaign.pk])).json()["assignment"]
        for browser in browsers
    ]
    statuses: list[int] = []
    lock = threading.Lock()

    def send(index: int) -> None:
        url = reverse("api_submit", args=[assignments[index]])
        response = post(browsers[index], url, form_data(campaign, token="shared"))
        with lock:
            statuses.append(response.status_code)

    errors = run_threads(2, send)
    assert not errors, "\n".join(errors)
    assert sorted(statuses) == [201, 400]
    # The refused request changed nothing: its assignment is still a reservation.
    assert Annotation.objects.count() == 1
    assert Assignment.objects.filter(status="submitted").count() == 1
    assert Assignment.objects.filter(status="reserved").count() == 1
