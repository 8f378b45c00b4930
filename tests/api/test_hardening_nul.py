"""A NUL character anywhere a client can put one is a 400 or a 404, never a 500: PostgreSQL
refuses NUL in a query with an error where SQLite finds nothing, so every case runs on both.

The sweep walks every URL pattern of the project (the admin's included) and sends a NUL in each
path parameter, and in the name and the value of query parameters, as an anonymous visitor,
an annotator and a superuser; the cases the report found are checked one by one too.
"""

import io
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLResolver, get_resolver, reverse

from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Assignment, Campaign, Dataset
from tests.conftest import PASSWORD
from tests.support.pages import active_campaign, reserve

NUL_VALUE = "ab\x00cd"
# Every query parameter a page, the API or the admin reads, and one whose name holds a NUL.
QUERY_NAMES = [
    "q",
    "category",
    "page",
    "verdict",
    "reason",
    "sort",
    "subset",
    "format",
    "with_validation",
    "resamples",
    "next",
    "status",
    "o",
    "p",
    "e",
    "_changelist_filters",
    "campaign__id__exact",
    "PROLIFIC_PID",
    "STUDY_ID",
    "SESSION_ID",
    "x\x00y",
]


def url_formats(resolver: URLResolver, prefix: str = "") -> Iterator[tuple[str, tuple[str, ...]]]:
    """Every pattern's format string (``campaigns/%(campaign_id)s/``) and parameters."""
    for key in list(resolver.reverse_dict):
        for possibilities, _, _, _ in resolver.reverse_dict.getlist(key):
            for fmt, params in possibilities:
                yield prefix + fmt, tuple(params)
    for namespace_prefix, sub in resolver.namespace_dict.values():
        yield from url_formats(sub, prefix + namespace_prefix)


def every_url_format() -> list[tuple[str, tuple[str, ...]]]:
    return sorted(set(url_formats(get_resolver())))


@pytest.fixture
def world(dataset: Dataset, annotator: User) -> dict[str, Any]:
    campaign = active_campaign(dataset, annotator)
    client = Client()
    client.force_login(annotator)
    assignment = reserve(client, campaign)
    root = User.objects.create_superuser("root", password=PASSWORD)
    return {
        "clients": {"anonymous": Client(), "annotator": client, "root": superuser(root)},
        "ids": ids_for(campaign, assignment),
    }


def superuser(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def ids_for(campaign: Campaign, assignment: Assignment) -> dict[str, str]:
    """A real value for every path parameter, so that requests reach the views."""
    item = assignment.item
    return {
        "campaign_id": str(campaign.pk),
        "dataset_id": str(campaign.dataset_id),
        "pair_id": str(item.pair_id),
        "assignment_id": str(assignment.pk),
        "annotator_id": str(assignment.annotator_id),
        "token": campaign.invite_token,
        "object_id": str(campaign.pk),
        "id": str(assignment.annotator_id),
        "app_label": "prb_annotate",
        "content_type_id": "1",
        "url": "prb_annotate/",
    }


def path_for(fmt: str, values: dict[str, str]) -> str:
    return "/" + fmt % {name: quote(value, safe="") for name, value in values.items()}


def check(response: Any, what: str) -> None:
    assert response.status_code in (400, 404), f"{what}: {response.status_code}"


def test_it_answers_a_nul_in_any_path_or_query_parameter_with_400_or_404(
    world: dict[str, Any],
) -> None:
    formats = every_url_format()
    assert len(formats) > 100  # the admin's patterns are in
    ids = world["ids"]
    for fmt, params in formats:
        values = {name: ids.get(name, "1") for name in params}
        for who, client in world["clients"].items():
            for name in params:
                path = path_for(fmt, {**values, name: NUL_VALUE})
                check(client.get(path), f"GET {path} as {who}")
                check(client.post(path, {}), f"POST {path} as {who}")
            path = path_for(fmt, values)
            for query in QUERY_NAMES:
                response = client.get(f"{path}?{urlencode({query: NUL_VALUE})}")
                check(response, f"GET {path}?{query}=NUL as {who}")


def test_the_reported_cases_are_400_or_404(world: dict[str, Any], annotator: User) -> None:
    root: Client = world["clients"]["root"]
    ids = world["ids"]
    # The join link, anonymous.
    check(Client().get("/join/ab%00cd/"), "GET /join/ab%00cd/")
    # The admin's list filter.
    check(root.get("/admin/prb_annotate/campaign/?status=%00"), "admin list filter")
    check(root.get("/admin/prb_annotate/pair/?q=a%00b"), "admin search")
    # An exclusion whose annotator holds NUL, in the API and on the page.
    excluded = root.post(
        f"/api/campaigns/{ids['campaign_id']}/exclusions/",
        {"annotator": "alice\x00", "reason": "test"},
        content_type="application/json",
    )
    assert excluded.status_code == 400
    assert "annotator" in excluded.json()["errors"]
    page = root.post(
        reverse("campaign_exclude", args=[ids["campaign_id"]]),
        {"annotator": "1\x00", "reason": "x"},
    )
    assert page.status_code in (302, 400)


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"id": "p\x001", "question": "Q", "chosen": "A", "rejected": "B"}, "id"),
        ({"id": "p1", "question": "Q", "chosen": "A", "rejected": "B", "x\x00y": 1}, "x\\x00y"),
    ],
)
def test_it_refuses_an_upload_whose_id_or_field_name_holds_nul(
    manager: User, login: Any, record: dict[str, Any], field: str
) -> None:
    for name, content in [
        ("nul.jsonl", json.dumps(record).encode() + b"\n"),
        ("nul.csv", csv_bytes(record)),
    ]:
        upload = SimpleUploadedFile(name, content)
        response = login(manager).post(
            "/api/datasets/", {"file": upload, "name": "nul"}, format="multipart"
        )
        assert response.status_code == 400, (name, response.status_code)
        problems = response.json()["problems"]
        assert [problem["field"] for problem in problems] == [field], name
        assert "NUL" in problems[0]["message"], name
    assert not Dataset.objects.filter(name="nul").exists()


def csv_bytes(record: dict[str, Any]) -> bytes:
    import csv

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(list(record))
    writer.writerow([str(value) for value in record.values()])
    return buffer.getvalue().encode()


def test_the_page_forms_refuse_nul_values(world: dict[str, Any], annotator: User) -> None:
    root: Client = world["clients"]["root"]
    campaign_id = world["ids"]["campaign_id"]
    campaign = Campaign.objects.get(pk=campaign_id)
    add_member(campaign, annotator)
    posts = [
        (reverse("campaign_add_member", args=[campaign_id]), {"username": "alice\x00"}),
        (reverse("campaign_study", args=[campaign_id]), {"prolific_study_id": "s\x00"}),
        (
            reverse("campaign_create"),
            {"dataset": world["ids"]["dataset_id"], "name": "n\x00", "seed": "0"},
        ),
        (reverse("login"), {"username": "root\x00", "password": "x"}),
        (reverse("api_token"), {"username": "root\x00", "password": "x"}),
    ]
    for url, data in posts:
        response = root.post(url, data)
        assert response.status_code in (200, 400), (url, response.status_code)
        assert Campaign.objects.count() == 1
