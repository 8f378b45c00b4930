"""The managers' practice and qualification API: created with a campaign, read, pairs chosen
and removed, the rule and the screen-out URL changed, outcomes listed and a member let in;
bad requests are 4xx with field messages, and other users get 404."""

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from prb_annotate.models import Campaign, QualificationItem
from tests.support.qualification import answer_current, do_practice, fail_twice, screening_campaign


def token_client(user: User) -> Client:
    token, _ = Token.objects.get_or_create(user=user)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}")


def send(client: Client, method: str, url: str, data=None):
    return client.generic(method, url, data=_json(data), content_type="application/json")


def _json(data) -> str:
    return json.dumps(data if data is not None else {})


@pytest.fixture
def api(manager) -> Client:
    return token_client(manager)


def test_it_creates_a_campaign_with_practice_and_qualification(api, dataset) -> None:
    body = {
        "dataset": dataset.pk,
        "name": "api-screened",
        "annotations_per_pair": 2,
        "practice_pairs": [
            {
                "external_id": "p0000",
                "expected_answers": {"rubric_fit": "rejected"},
                "explanations": {"rubric_fit": "The chosen one ignores the rubric."},
            }
        ],
        "qualification_pairs": [{"external_id": "p0001"}, {"external_id": "p0002"}],
        "qualification_rule": {"min_correct": 1, "required_questions": ["rubric_fit"]},
        "screen_out_url": "https://study.example/screened",
    }
    created = send(api, "POST", reverse("api_campaign_list"), body)
    assert created.status_code == 201, created.content
    assert created.json()["screen_out_url"] == "https://study.example/screened"
    campaign = Campaign.objects.get(pk=created.json()["id"])
    assert campaign.items.count() == 9
    overview = api.get(reverse("api_campaign_qualification", args=[campaign.pk])).json()
    assert overview["rule"] == {"min_correct": 1, "required_questions": ["rubric_fit"]}
    assert overview["rule_text"] == "at least 1 of 2 items right, every better-fit answer right"
    (practice,) = overview["practice"]
    assert practice["expected_answers"] == {"rubric_fit": "rejected"}
    assert practice["explanations"] == {"rubric_fit": "The chosen one ignores the rubric."}
    assert [row["external_id"] for row in overview["qualification"]] == ["p0001", "p0002"]
    assert overview["qualification"][0]["expected_answers"] == {
        "rubric_fit": "chosen",
        "differentiator": "preference",
    }


def test_it_refuses_creation_requests_it_cannot_use(api, dataset) -> None:
    """A pair twice, a missing pair, an unknown expected answer, a rule beyond the items."""
    base: dict[str, Any] = {"dataset": dataset.pk, "annotations_per_pair": 2}
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {"practice_pairs": [{"external_id": "p0000"}, {"external_id": "p0000"}]},
            "practice_pairs",
        ),
        ({"practice_pairs": [{"external_id": "nope"}]}, "non_field_errors"),
        (
            {
                "qualification_pairs": [
                    {"external_id": "p1", "expected_answers": {"rubric_fit": "A"}}
                ]
            },
            "qualification_pairs.0.expected_answers.rubric_fit",
        ),
        (
            {
                "qualification_pairs": [{"external_id": "p0001"}],
                "qualification_rule": {"min_correct": 3},
            },
            "non_field_errors",
        ),
    ]
    for index, (extra, field) in enumerate(cases):
        response = send(
            api, "POST", reverse("api_campaign_list"), {**base, "name": f"x{index}", **extra}
        )
        assert response.status_code == 400, (extra, response.content)
        assert field in response.json()["errors"], (extra, response.json())
    assert not Campaign.objects.exists()


def test_it_chooses_changes_and_removes_pairs(api, dataset, annotator) -> None:
    campaign = screening_campaign(dataset, annotator, qualification=("p0002", "p0003"))
    pair = dataset.pairs.get(external_id="p0010")
    url = reverse("api_campaign_qualification_item", args=[campaign.pk, pair.pk])
    chosen = send(
        api, "PUT", url, {"phase": "practice", "expected_answers": {"differentiator": "quality"}}
    )
    assert chosen.status_code == 200, chosen.content
    assert chosen.json()["external_id"] == "p0010"
    assert not campaign.items.filter(pair=pair).exists()
    explained = send(
        api,
        "PUT",
        url,
        {
            "expected_answers": {"differentiator": "quality"},
            "explanations": {"differentiator": "The rejected answer has a factual error."},
        },
    )
    assert explained.status_code == 200, explained.content
    item = QualificationItem.objects.get(campaign=campaign, pair=pair)
    assert item.phase == "practice"
    assert item.explanations == {"differentiator": "The rejected answer has a factual error."}
    new_pair = dataset.pairs.get(external_id="p0011")
    new_url = reverse("api_campaign_qualification_item", args=[campaign.pk, new_pair.pk])
    no_phase = send(api, "PUT", new_url, {"expected_answers": {"rubric_fit": "chosen"}})
    assert no_phase.status_code == 400
    assert "phase" in no_phase.json()["errors"]
    bad = send(api, "PUT", url, {"phase": "practice", "expected_answers": {}})
    assert bad.status_code == 400
    assert "expected_answers.non_field_errors" in bad.json()["errors"]
    assert send(api, "DELETE", url).status_code == 204
    assert not QualificationItem.objects.filter(pair=pair).exists()
    assert send(api, "DELETE", url).status_code == 400
    gold_like = dataset.pairs.get(external_id="p0002")
    other_url = reverse("api_campaign_qualification_item", args=[campaign.pk, gold_like.pk + 999])
    assert (
        send(
            api, "PUT", other_url, {"phase": "practice", "expected_answers": {"rubric_fit": "tie"}}
        ).status_code
        == 404
    )


def test_it_changes_the_rule_until_members_answer(api, dataset, annotator) -> None:
    campaign = screening_campaign(dataset, annotator)
    url = reverse("api_campaign_qualification", args=[campaign.pk])
    changed = send(api, "PATCH", url, {"min_correct": 3, "screen_out_url": "https://s.example/x"})
    assert changed.status_code == 200
    assert changed.json()["rule_text"] == "all 3 items right"
    assert changed.json()["screen_out_url"] == "https://s.example/x"
    too_many = send(api, "PATCH", url, {"min_correct": 4})
    assert too_many.status_code == 400
    assert "min_correct" in too_many.json()["errors"]
    do_practice(campaign, annotator)
    answer_current(campaign, annotator, right=True)
    fixed = send(api, "PATCH", url, {"min_correct": 1})
    assert fixed.status_code == 400
    assert fixed.json()["errors"]["min_correct"] == [
        "Members answered the qualification: its rule stays."
    ]
    assert send(api, "PATCH", url, {"screen_out_url": ""}).status_code == 200
    assert api.get(url).json()["fixed"] is True


def test_it_lists_outcomes_and_lets_a_member_in(api, dataset, annotator, manager) -> None:
    campaign = screening_campaign(dataset, annotator)
    fail_twice(campaign, annotator)
    members = api.get(reverse("api_campaign_qualification_members", args=[campaign.pk])).json()
    (row,) = members
    assert (row["annotator"], row["outcome"], row["practice_done"]) == ("alice", "failed", True)
    assert [a["right"] for a in row["attempts"]] == [0, 1]
    admit = reverse("api_campaign_qualification_admit", args=[campaign.pk, annotator.pk])
    assert send(api, "POST", admit, {}).status_code == 400
    let_in = send(api, "POST", admit, {"reason": "a second look"})
    assert let_in.status_code == 200
    assert (let_in.json()["outcome"], let_in.json()["admitted_by"]) == ("admitted", "manager")
    again = send(api, "POST", admit, {"reason": "again"})
    assert again.status_code == 400
    assert "annotator" in again.json()["errors"]
    counts = api.get(reverse("api_campaign_qualification", args=[campaign.pk])).json()["counts"]
    assert counts == {"passed": 0, "failed": 0, "in_progress": 0, "admitted": 1, "not_started": 0}


def test_it_hides_everything_from_who_does_not_manage(dataset, annotator) -> None:
    campaign = screening_campaign(dataset, annotator)
    client = token_client(annotator)
    pair = campaign.qualification_items.earliest("pk").pair
    for method, url in [
        ("GET", reverse("api_campaign_qualification", args=[campaign.pk])),
        ("PATCH", reverse("api_campaign_qualification", args=[campaign.pk])),
        ("PUT", reverse("api_campaign_qualification_item", args=[campaign.pk, pair.pk])),
        ("GET", reverse("api_campaign_qualification_members", args=[campaign.pk])),
        ("POST", reverse("api_campaign_qualification_admit", args=[campaign.pk, annotator.pk])),
        ("GET", reverse("api_campaign_prolific_bonus_rule", args=[campaign.pk])),
    ]:
        assert send(client, method, url, {}).status_code == 404, url


def test_a_practice_item_carries_a_chat_records_earlier_turns(dataset, annotator) -> None:
    """``next`` hands a practice item the fields of a regular item, the turns before the
    question included (a chat record's, datasets/shapes.py)."""
    turns = [{"role": "user", "content": "Earlier"}, {"role": "assistant", "content": "Hi"}]
    pair = dataset.pairs.get(external_id="p0000")
    pair.extra = {**pair.extra, "context_turns": turns}
    pair.save(update_fields=["extra"])
    campaign = screening_campaign(dataset, annotator)
    handed = send(token_client(annotator), "POST", f"/api/campaigns/{campaign.pk}/next/")
    assert handed.status_code == 200, handed.content
    item = handed.json()
    assert (item["kind"], item["question"]) == ("practice", pair.question)
    assert item["context_turns"] == turns
