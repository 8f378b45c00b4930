"""Manager API: imports, campaigns, results and exports, with one error body for every 4xx."""

import io
import json
import zipfile
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

from prb_annotate.api.serializers import CampaignSerializer
from prb_annotate.campaigns.lifecycle import create_campaign, set_status
from prb_annotate.models import Annotation, Campaign, CampaignItem, Dataset
from tests.conftest import make_pairs
from tests.support.exports import annotated_campaign, import_dataset, jsonl, records


@pytest.fixture
def staff(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create(username="manager", is_staff=True))
    return client


@pytest.fixture
def dataset(db: None) -> Dataset:
    dataset = Dataset.objects.create(name="demo", source="tests")
    make_pairs(dataset, 12)
    return dataset


def send(client: Client, method: str, url: str, body: Any = None) -> Any:
    return client.generic(method, url, data=json.dumps(body or {}), content_type="application/json")


def test_it_imports_an_uploaded_file(staff: Client) -> None:
    upload = SimpleUploadedFile("prb.jsonl", jsonl(records()))
    response = staff.post("/api/datasets/", {"file": upload, "name": "uploaded"})
    assert response.status_code == 201
    body = response.json()
    assert body["created"] == len(records())
    assert body["dataset"] == "uploaded"
    again = staff.post(
        "/api/datasets/",
        {"file": SimpleUploadedFile("prb.jsonl", jsonl(records())), "name": "uploaded"},
    )
    assert again.status_code == 200
    assert again.json()["unchanged"] == len(records())
    listing = staff.get("/api/datasets/").json()
    assert listing["results"][0]["pair_count"] == len(records())


def test_it_refuses_a_bad_file_naming_line_and_field_and_writes_nothing(staff: Client) -> None:
    rows = records()
    rows[2]["chosen"] = ""
    del rows[4]["rejected"]
    response = staff.post(
        "/api/datasets/", {"file": SimpleUploadedFile("bad.jsonl", jsonl(rows)), "name": "bad"}
    )
    assert response.status_code == 400
    body = response.json()
    assert body["detail"].startswith("Import failed with 2 problems")
    assert [(p["line"], p["field"]) for p in body["problems"]] == [(3, "chosen"), (5, "rejected")]
    assert body["errors"]["chosen"] == [
        'bad.jsonl line 3 (id "alpha-10"), field "chosen": empty text'
    ]
    assert not Dataset.objects.filter(name="bad").exists()

    wrong_type = staff.post(
        "/api/datasets/", {"file": SimpleUploadedFile("data.xlsx", b"x"), "name": "bad"}
    )
    assert wrong_type.status_code == 400
    assert "unsupported file type" in wrong_type.json()["problems"][0]["message"]
    missing = staff.post("/api/datasets/", {"name": "bad"})
    assert missing.status_code == 400
    assert "file" in missing.json()["errors"]
    as_json = send(staff, "POST", "/api/datasets/", {"name": "bad"})
    assert as_json.status_code == 415
    assert as_json.json()["errors"] == {}


def test_it_lists_and_filters_pairs(staff: Client, dataset: Dataset) -> None:
    dataset.pairs.filter(external_id__in=["p0003", "p0007"]).update(category="Art")
    url = f"/api/datasets/{dataset.pk}/pairs/"
    art = staff.get(url, {"category": "Art"}).json()
    assert [pair["external_id"] for pair in art["results"]] == ["p0003", "p0007"]
    page = staff.get(url, {"page_size": 5, "page": 2}).json()
    assert page["count"] == 12
    assert len(page["results"]) == 5
    assert page["next"]
    found = staff.get(url, {"q": "Question 11"}).json()
    assert [pair["external_id"] for pair in found["results"]] == ["p0011"]
    # An empty parameter is a mistake to report, not the default in disguise.
    for blank in ({"page": ""}, {"category": ""}, {"q": "", "page_size": "5"}):
        refused = staff.get(url, blank)
        assert refused.status_code == 400, blank
        assert next(iter(blank)) in refused.json()["errors"]
    pair = dataset.pairs.get(external_id="p0003")
    full = staff.get(f"{url}{pair.pk}/").json()
    assert full["rubric_aspects"]
    assert full["narrative"]
    assert full["profile"]
    assert staff.get(url, {"page": 99}).status_code == 404
    other = Dataset.objects.create(name="other")
    assert staff.get(f"/api/datasets/{other.pk}/pairs/{pair.pk}/").status_code == 404


def test_it_creates_campaigns_with_the_service(staff: Client, dataset: Dataset) -> None:
    response = send(
        staff,
        "POST",
        "/api/campaigns/",
        {
            "dataset": dataset.pk,
            "name": "pilot",
            "annotations_per_pair": 2,
            "sample": 6,
            "gold_pair_ids": ["p0011"],
            "gold_rate": 0.1,
            "seed": 5,
            "quality_criteria": ["correctness", "tone"],
        },
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "draft"
    assert body["created_by"] == "manager"
    assert body["quality_criteria"] == ["correctness", "tone"]
    campaign = Campaign.objects.get(pk=body["id"])
    kinds = list(campaign.items.values_list("kind", flat=True))
    assert kinds.count(CampaignItem.Kind.REGULAR) == 6
    assert kinds.count(CampaignItem.Kind.GOLD) == 1


def test_it_explains_what_is_wrong_with_a_new_campaign(staff: Client, dataset: Dataset) -> None:
    create_campaign(dataset, "taken")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"dataset": dataset.pk, "name": "taken"}, "name"),
        ({"dataset": 999999, "name": "x"}, "dataset"),
        ({"name": "x"}, "dataset"),
        ({"dataset": dataset.pk, "name": "x", "annotations_per_pair": 0}, "annotations_per_pair"),
        ({"dataset": dataset.pk, "name": "x", "quality_criteria": []}, "quality_criteria"),
        ({"dataset": dataset.pk, "name": "x", "quality_threshold": 6}, "quality_threshold"),
        ({"dataset": dataset.pk, "name": "x", "gold_pair_ids": "p0001"}, "gold_pair_ids"),
        ({"dataset": dataset.pk, "name": "x", "seed": -1}, "seed"),
    ]
    for body, field in cases:
        response = send(staff, "POST", "/api/campaigns/", body)
        assert response.status_code == 400, body
        assert field in response.json()["errors"], (body, response.json())
    # What only the service can tell comes back as a 400 too, in its own words.
    too_many = send(
        staff, "POST", "/api/campaigns/", {"dataset": dataset.pk, "name": "x", "sample": 50}
    )
    assert too_many.status_code == 400
    assert too_many.json()["detail"] == "sample of 50 asked, but the dataset has 12 pairs"
    unknown_gold = send(
        staff,
        "POST",
        "/api/campaigns/",
        {"dataset": dataset.pk, "name": "x", "gold_pair_ids": ["nope"]},
    )
    assert unknown_gold.status_code == 400
    assert "nope" in unknown_gold.json()["detail"]
    assert not Campaign.objects.filter(name="x").exists()


def test_it_updates_campaigns_and_changes_their_status(staff: Client, dataset: Dataset) -> None:
    campaign = create_campaign(dataset, "pilot")
    url = f"/api/campaigns/{campaign.pk}/"
    patched = send(staff, "PATCH", url, {"guidelines": "Be kind.", "seed": 99, "status": "closed"})
    assert patched.status_code == 200
    assert patched.json()["guidelines"] == "Be kind."
    # What fixed the sample, and the status, do not change through an update.
    assert patched.json()["seed"] == 0
    assert patched.json()["status"] == "draft"
    assert send(staff, "PATCH", url, {"quality_threshold": 9}).status_code == 400

    assert send(staff, "POST", url + "start/").json()["status"] == "active"
    assert send(staff, "POST", url + "pause/").json()["status"] == "paused"
    assert send(staff, "POST", url + "close/").json()["status"] == "closed"
    reopened = send(staff, "POST", url + "start/")
    assert reopened.status_code == 400
    assert reopened.json()["errors"] == {"status": ["a closed campaign cannot become active"]}


def test_it_keeps_a_status_change_made_during_an_update(dataset: Dataset) -> None:
    """An update writes only the fields it was sent: a pause by another manager stays."""
    campaign = create_campaign(dataset, "pilot")
    stale = Campaign.objects.get(pk=campaign.pk)
    set_status(campaign, Campaign.Status.ACTIVE)
    serializer = CampaignSerializer(stale, data={"guidelines": "New."}, partial=True)
    assert serializer.is_valid(), serializer.errors
    serializer.save()
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.ACTIVE
    assert campaign.guidelines == "New."


def test_it_adds_members(staff: Client, dataset: Dataset) -> None:
    campaign = create_campaign(dataset, "pilot")
    User.objects.create(username="carol")
    url = f"/api/campaigns/{campaign.pk}/members/"
    added = send(staff, "POST", url, {"username": "carol"})
    assert added.status_code == 201
    assert added.json()["role"] == "annotator"
    promoted = send(staff, "POST", url, {"username": "carol", "role": "manager"})
    assert promoted.json()["role"] == "manager"
    assert [m["username"] for m in staff.get(url).json()["results"]] == ["carol"]
    missing = send(staff, "POST", url, {"username": "nobody"})
    assert missing.status_code == 400
    assert "username" in missing.json()["errors"]
    # PostgreSQL refuses a NUL in a query: a field error, not a server error.
    nul = send(staff, "POST", url, {"username": "car\x00ol"})
    assert nul.status_code == 400
    assert "username" in nul.json()["errors"]


@pytest.fixture
def annotated(db: None) -> Campaign:
    users = [User.objects.create(username=name) for name in ("alice", "bob", "carol")]
    return annotated_campaign(import_dataset(), users)


def test_it_serves_verdicts_progress_audit_and_agreement(
    staff: Client, annotated: Campaign
) -> None:
    base = f"/api/campaigns/{annotated.pk}/"
    excluded = staff.get(base + "verdicts/", {"verdict": "excluded"}).json()
    assert [v["external_id"] for v in excluded["results"]] == ["alpha-10", "life-2"]
    assert excluded["results"][0]["reasons"] == ["differentiator_not_preference"]
    art = staff.get(base + "verdicts/", {"category": "Art_and_Entertainment", "page_size": "3"})
    assert art.json()["count"] == 4
    assert len(art.json()["results"]) == 3
    assert staff.get(base + "verdicts/", {"verdict": "maybe"}).json()["errors"]["verdict"]

    progress = staff.get(base + "progress/").json()
    assert progress["items_total"] == 11
    assert [row["username"] for row in progress["annotators"]] == ["alice", "bob", "carol"]

    audit = staff.get(base + "audit/", {"resamples": 50}).json()
    assert audit["counts"]["validated"] == 7
    agreement = staff.get(base + "agreement/", {"resamples": 0}).json()
    assert agreement["resamples"] == 0
    assert [q["question"] for q in agreement["questions"]][:2] == ["rubric_fit", "differentiator"]
    for bad in ({"resamples": -1}, {"resamples": 10**9}, {"seed": "x"}):
        response = staff.get(base + "audit/", bad)
        assert response.status_code == 400, bad
        assert response.json()["errors"], bad


def test_it_downloads_the_export(staff: Client, annotated: Campaign) -> None:
    url = f"/api/campaigns/{annotated.pk}/export/"
    response = staff.get(
        url, {"subset": "validated", "format": "parquet", "with_validation": "true"}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.getvalue()))
    manifest_name = next(name for name in archive.namelist() if name.endswith("manifest.json"))
    manifest = json.loads(archive.read(manifest_name))
    assert manifest["file_format"] == "parquet"
    assert manifest["counts"]["exported_pairs"] == 7
    bad = staff.get(url, {"format": "xlsx", "subset": "some"})
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) == {"format", "subset"}
    blank = staff.get(url, {"format": "", "subset": ""})
    assert blank.status_code == 400
    assert set(blank.json()["errors"]) == {"format", "subset"}


def test_it_answers_errors_with_one_body_shape(staff: Client, dataset: Dataset) -> None:
    missing = staff.get("/api/campaigns/999999/")
    assert missing.status_code == 404
    assert set(missing.json()) == {"detail", "errors"}
    assert missing.json()["errors"] == {}
    anonymous = Client().get("/api/datasets/")
    assert anonymous.status_code == 403
    assert anonymous.json() == {
        "detail": "Authentication credentials were not provided.",
        "errors": {},
    }
    broken = staff.generic("POST", "/api/campaigns/", "{not json", content_type="application/json")
    assert broken.status_code == 400
    assert broken.json()["detail"].startswith("JSON parse error")
    nested = send(
        staff,
        "POST",
        "/api/campaigns/",
        {"dataset": dataset.pk, "name": "x", "quality_criteria": ["ok", "Not OK"]},
    )
    assert nested.status_code == 400
    assert list(nested.json()["errors"]) == ["quality_criteria.1"]
    not_allowed = send(staff, "DELETE", f"/api/datasets/{dataset.pk}/")
    assert not_allowed.status_code == 405
    assert set(not_allowed.json()) == {"detail", "errors"}


def test_it_serves_the_schema_and_an_offline_docs_page(db: None) -> None:
    schema = Client().get("/api/schema/", {"format": "json"}).json()
    assert schema["openapi"].startswith("3.")
    assert "/api/campaigns/{campaign_id}/export/" in schema["paths"]
    assert "Error" in schema["components"]["schemas"]
    page = Client().get("/api/docs/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "/api/campaigns/{campaign_id}/export/" in html
    assert "<script" not in html.split("</header>", 1)[1]


def test_it_drives_a_campaign_end_to_end_with_tokens(db: None) -> None:
    """The README example: import, create, add members, start, annotate through the work
    API, read progress and verdicts, export. Exactly k annotations per pair come out."""
    manager = User.objects.create(username="manager", is_staff=True)
    annotators = [User.objects.create(username=name) for name in ("alice", "bob", "carol")]

    def client(user: User) -> Client:
        return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")

    boss = client(manager)
    upload = SimpleUploadedFile("prb.jsonl", jsonl(records()))
    dataset_id = boss.post("/api/datasets/", {"file": upload, "name": "prb"}).json()["dataset_id"]
    campaign = send(
        boss,
        "POST",
        "/api/campaigns/",
        {"dataset": dataset_id, "name": "pilot", "annotations_per_pair": 2},
    ).json()
    base = f"/api/campaigns/{campaign['id']}/"
    for user in annotators:
        assert send(boss, "POST", base + "members/", {"username": user.username}).status_code == 201
    assert send(boss, "POST", base + "start/").status_code == 200

    for user in annotators:
        worker = client(user)
        while (item := send(worker, "POST", base + "next/")).status_code == 200:
            pair = item.json()
            answers: dict[str, Any] = {
                f"quality_{side}_{c}": 5 for side in "AB" for c in pair["criteria"]
            }
            answers |= {
                "rubric_fit": "tie",
                "differentiator": "preference",
                "confidence": "high",
                "client_token": f"{user.pk}-{pair['assignment']}",
            }
            url = f"/api/assignments/{pair['assignment']}/submit/"
            assert send(worker, "POST", url, answers).status_code == 201
            # A retried submit with the same token changes nothing.
            assert send(worker, "POST", url, answers).status_code == 200
        assert item.status_code == 204

    progress = boss.get(base + "progress/").json()
    assert progress["items_complete"] == progress["items_total"] == len(records())
    assert Annotation.objects.filter(assignment__campaign_id=campaign["id"]).count() == 2 * len(
        records()
    )
    verdicts = boss.get(base + "verdicts/", {"verdict": "excluded"}).json()
    assert verdicts["count"] == len(records())  # ties: the label is not confirmed
    export = boss.get(base + "export/", {"subset": "all"})
    assert export.status_code == 200
