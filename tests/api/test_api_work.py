"""The annotator-work JSON API: next, submit, skip and my-progress, with token and session
auth; errors are 4xx with field messages, never 500; CSRF holds for browser sessions."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import set_status
from prb_annotate.models import Annotation, Assignment, Campaign, Dataset
from tests.support.campaigns import active_campaign, annotators, form_data


def token_client(user: User) -> Client:
    token, _ = Token.objects.get_or_create(user=user)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}")


@pytest.fixture
def campaign(dataset: Dataset) -> Campaign:
    return active_campaign(dataset, k=2, quota_per_annotator=3)


def post_json(client: Client, url: str, data=None):
    return client.post(url, data if data is not None else {}, content_type="application/json")


def next_url(campaign: Campaign) -> str:
    return reverse("api_next", args=[campaign.pk])


def test_it_serves_the_reservation_without_revealing_the_chosen_side(campaign: Campaign) -> None:
    (alice,) = annotators(campaign, 1)
    client = token_client(alice)
    response = post_json(client, next_url(campaign))
    assert response.status_code == 200
    body = response.json()
    assignment = Assignment.objects.get(pk=body["assignment"])
    pair = assignment.item.pair
    assert {body["response_a"], body["response_b"]} == {pair.chosen, pair.rejected}
    assert (body["response_a"] == pair.chosen) == (assignment.chosen_position == "A")
    assert body["question"] == pair.question
    assert body["profile"] == pair.profile
    assert body["rubric_aspects"] == pair.rubric_aspects
    assert body["narrative"] == pair.narrative
    assert body["criteria"] == ["correctness", "relevance", "helpfulness"]
    assert body["scale"] == {"min": 1, "max": 5}
    text = response.content.decode()
    assert "chosen" not in text
    assert "rejected" not in text
    assert "gold" not in text
    # Asking again gives the same reservation.
    assert post_json(client, next_url(campaign)).json()["assignment"] == body["assignment"]


def test_it_submits_and_replays(campaign: Campaign) -> None:
    (alice,) = annotators(campaign, 1)
    client = token_client(alice)
    assignment_id = post_json(client, next_url(campaign)).json()["assignment"]
    url = reverse("api_submit", args=[assignment_id])
    data = form_data(campaign, token="api-token-1")
    first = post_json(client, url, data)
    assert first.status_code == 201, first.content
    assert first.json()["created"] is True
    assert first.json()["revision"] == 1
    again = post_json(client, url, data)
    assert again.status_code == 200
    assert again.json()["annotation"] == first.json()["annotation"]
    assert Annotation.objects.count() == 1
    revised = post_json(client, url, form_data(campaign, token="api-token-2", rubric_fit="tie"))
    assert revised.status_code == 201
    assert revised.json()["revision"] == 2


def test_it_answers_bad_input_with_field_errors(campaign: Campaign) -> None:
    (alice,) = annotators(campaign, 1)
    client = token_client(alice)
    assignment_id = post_json(client, next_url(campaign)).json()["assignment"]
    url = reverse("api_submit", args=[assignment_id])
    bad_bodies = [
        {},
        {"rubric_fit": ["A"], "quality_A_correctness": {"x": 1}, "client_token": 7},
        form_data(campaign, confidence="very"),
        form_data(campaign, quality_A_relevance="5.5"),
        form_data(campaign, time_on_task_ms="soon"),
        form_data(campaign, client_token=""),
    ]
    for body in bad_bodies:
        response = post_json(client, url, body)
        assert response.status_code == 400, (body, response.content)
        assert response.json()["errors"], body
    for raw in ["[1, 2]", '"text"', "null", "{not json"]:
        response = client.post(url, raw, content_type="application/json")
        assert response.status_code == 400, (raw, response.content)
    errors = post_json(client, url, form_data(campaign, confidence="very")).json()["errors"]
    assert errors == {"confidence": ["Choose low, medium or high."]}
    assert not Annotation.objects.exists()


def test_it_hides_other_annotators_assignments(campaign: Campaign, outsider: User) -> None:
    alice, bob = annotators(campaign, 2)
    assignment_id = post_json(token_client(alice), next_url(campaign)).json()["assignment"]
    for stranger in (bob, outsider):
        client = token_client(stranger)
        submit = post_json(client, reverse("api_submit", args=[assignment_id]), form_data(campaign))
        assert submit.status_code == 404
        skip = post_json(client, reverse("api_skip", args=[assignment_id]), {"reason": "x"})
        assert skip.status_code == 404
    assert post_json(token_client(outsider), next_url(campaign)).status_code == 404
    progress_url = reverse("api_my_progress", args=[campaign.pk])
    assert token_client(outsider).get(progress_url).status_code == 404
    assert post_json(Client(), next_url(campaign)).status_code in (401, 403)
    assert not Annotation.objects.exists()


def test_it_reports_a_full_pair_as_a_conflict(campaign: Campaign) -> None:
    alice, bob, carol = annotators(campaign, 3)
    lapsed = next_assignment(campaign, alice)
    assert lapsed is not None
    Assignment.objects.filter(pk=lapsed.pk).update(
        expires_at=lapsed.reserved_at - timedelta(seconds=1)
    )
    for user in (bob, carol):
        client = token_client(user)
        body = post_json(client, next_url(campaign)).json()
        assert body["assignment"] != lapsed.pk
        url = reverse("api_submit", args=[body["assignment"]])
        assert post_json(client, url, form_data(campaign)).status_code == 201
    response = post_json(
        token_client(alice), reverse("api_submit", args=[lapsed.pk]), form_data(campaign)
    )
    assert response.status_code == 409
    assert "not recorded" in response.json()["detail"]


def test_it_skips_and_reports_progress(campaign: Campaign) -> None:
    (alice,) = annotators(campaign, 1)
    client = token_client(alice)
    progress_url = reverse("api_my_progress", args=[campaign.pk])
    assert client.get(progress_url).json() == {
        "campaign": campaign.pk,
        "status": "active",
        "done": 0,
        "quota": 3,
        "quota_done": False,
        "completion_url": "",
        "available": 3,
        "finished": False,
        "waiting": False,
        "held": "",
        "qualification": "",
        "consent_required": False,
        "consent_given_at": None,
    }
    first = post_json(client, next_url(campaign)).json()["assignment"]
    skipped = post_json(client, reverse("api_skip", args=[first]), {"reason": "unreadable"})
    assert skipped.status_code == 200
    assert skipped.json()["status"] == "skipped"
    assert post_json(client, reverse("api_skip", args=[first]), {"reason": 5}).status_code == 400
    Campaign.objects.filter(pk=campaign.pk).update(completion_url="https://example.org/done")
    for _ in range(3):
        assignment_id = post_json(client, next_url(campaign)).json()["assignment"]
        assert assignment_id != first
        url = reverse("api_submit", args=[assignment_id])
        assert post_json(client, url, form_data(campaign)).status_code == 201
    assert post_json(client, next_url(campaign)).status_code == 204
    progress = client.get(progress_url).json()
    assert progress["done"] == 3
    assert progress["quota_done"] is True
    assert progress["completion_url"] == "https://example.org/done"
    assert (progress["available"], progress["finished"], progress["waiting"]) == (3, True, False)


def test_it_answers_204_when_the_campaign_is_paused(campaign: Campaign) -> None:
    (alice,) = annotators(campaign, 1)
    client = token_client(alice)
    assignment_id = post_json(client, next_url(campaign)).json()["assignment"]
    set_status(campaign, "paused")
    assert post_json(client, next_url(campaign)).status_code == 204
    response = post_json(client, reverse("api_submit", args=[assignment_id]), form_data(campaign))
    assert response.status_code == 409
    assert "paused" in response.json()["detail"]


def test_it_enforces_csrf_for_session_logins(campaign: Campaign) -> None:
    (alice,) = annotators(campaign, 1)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    assert post_json(browser, next_url(campaign)).status_code == 403
    assert not Assignment.objects.exists()
    # With the CSRF cookie and header the same request goes through.
    browser.get(reverse("login"))
    token = browser.cookies["csrftoken"].value
    response = browser.post(
        next_url(campaign), {}, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 200
    url = reverse("api_submit", args=[response.json()["assignment"]])
    assert post_json(browser, url, form_data(campaign)).status_code == 403
    accepted = browser.post(
        url, form_data(campaign), content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert accepted.status_code == 201


def test_it_refuses_nul_characters_in_text_fields(campaign: Campaign) -> None:
    # PostgreSQL text cannot hold NUL: refused as bad input on every database, never a 500.
    (alice,) = annotators(campaign, 1)
    client = token_client(alice)
    assignment_id = post_json(client, next_url(campaign)).json()["assignment"]
    url = reverse("api_submit", args=[assignment_id])
    for field, value in (("client_token", "to\x00ken"), ("comment", "nul \x00 here")):
        response = post_json(client, url, form_data(campaign, **{field: value}))
        assert response.status_code == 400, (field, response.content)
        assert list(response.json()["errors"]) == [field]
    assert not Annotation.objects.exists()
    skipped = post_json(client, reverse("api_skip", args=[assignment_id]), {"reason": "a\x00b"})
    assert skipped.status_code == 400
    assert list(skipped.json()["errors"]) == ["reason"]
    assert Assignment.objects.get(pk=assignment_id).status == "reserved"
