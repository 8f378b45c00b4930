"""The API's error messages are English and stable whatever language the request asks for,
while the pages follow it: a client asking for Korean gets the same bodies, word for word."""

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.models import Dataset
from tests.conftest import make_pairs

BAD_CAMPAIGNS: list[dict[str, Any]] = [
    {"name": "taken"},
    {"name": "x", "annotations_per_pair": 0},
    {"name": "x", "quality_threshold": 6},
    {"name": "x", "completion_url": "not a url"},
    {"name": "x", "seed": -1},
    {"name": "x", "sample": 50},
]


@pytest.fixture
def dataset(db: None) -> Dataset:
    dataset = Dataset.objects.create(name="demo", source="tests")
    make_pairs(dataset, 12)
    create_campaign(dataset, "taken")
    return dataset


def staff_client(language: str) -> Client:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(User.objects.get_or_create(username="manager", is_staff=True)[0])
    return client


def errors(client: Client, dataset: Dataset) -> list[Any]:
    bodies = [
        client.post(
            "/api/campaigns/",
            data=json.dumps({"dataset": dataset.pk, **body}),
            content_type="application/json",
        ).json()
        for body in BAD_CAMPAIGNS
    ]
    bodies.append(client.get("/api/campaigns/999999/").json())
    bodies.append(
        Client(HTTP_ACCEPT_LANGUAGE=client.defaults["HTTP_ACCEPT_LANGUAGE"])
        .get("/api/datasets/", HTTP_AUTHORIZATION="Token nonsense")
        .json()
    )
    return bodies


def test_api_errors_read_the_same_in_a_korean_request(dataset: Dataset) -> None:
    english = errors(staff_client("en"), dataset)
    assert all(body["detail"] or body["errors"] for body in english)
    assert errors(staff_client("ko"), dataset) == english


def test_a_page_follows_the_same_korean_request(dataset: Dataset) -> None:
    page = staff_client("ko").get("/campaigns/").content.decode()
    assert "<h1>캠페인</h1>" in page
    # The status is stored as a code and shown as a word of the page's language.
    assert '<span class="tag">초안</span>' in page
    assert (
        '<span class="tag">draft</span>' in staff_client("en").get("/campaigns/").content.decode()
    )
