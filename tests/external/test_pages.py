"""External campaigns on the pages, in the API and in the demo."""

import io
import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.management.commands.demo_setup import IMPORTED_CAMPAIGN
from prb_annotate.models import Campaign
from prb_annotate.simulation.demo import SIMULATED_CAMPAIGN


def test_the_form_makes_an_external_campaign_and_its_page_takes_the_export(
    finished: Campaign,
    exported: Path,
    manager: User,
    login: Callable[[User], Client],
) -> None:
    client = login(manager)
    response = client.post(
        reverse("campaign_create"),
        {
            "dataset": finished.dataset_id,
            "name": "from the form",
            "external": "on",
            "annotations_per_pair": 3,
            "reservation_minutes": 30,
            "seed": 0,
            "gold_rate": 0,
            "majority_threshold": 0.5,
            "fast_answer_seconds": 10,
        },
    )
    campaign = Campaign.objects.get(name="from the form")
    assert response.status_code == 302
    assert campaign.external
    assert campaign.status == Campaign.Status.CLOSED
    page = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    upload = reverse("campaign_answers_import", args=[campaign.pk])
    assert upload in page
    assert "no answers imported yet" in page
    bad = io.BytesIO(b"pair_id,annotator,rubric_fit,differentiator\nnope,r1,chosen,preference\n")
    bad.name = "bad.csv"
    refused = client.post(upload, {"file": bad})
    assert refused.status_code == 400
    assert "bad.csv line 2, field &quot;pair_id&quot;: unknown pair id" in refused.content.decode()
    with (exported / "annotations.jsonl").open("rb") as stream:
        assert client.post(upload, {"file": stream}).status_code == 302
    pages = ("campaign_detail", "campaign_audit", "campaign_pairs", "campaign_export")
    for name in (*pages, "campaign_evaluations", "campaign_adjudication_queue"):
        text = client.get(reverse(name, args=[campaign.pk])).content.decode()
        assert "answers imported from <code>annotations.jsonl</code>, sha256" in text, name
    long_link = reverse("campaign_long_table", args=[campaign.pk])
    assert long_link in page
    table = pd.read_csv(io.BytesIO(client.get(long_link).content))
    assert list(table.columns) == ["rater", "unit", "question", "value"]
    assert len(table)


def test_the_api_creates_imports_and_gives_the_long_table(
    finished: Campaign, exported: Path, manager: User
) -> None:
    client = APIClient()
    client.force_authenticate(manager)
    created = client.post(
        "/api/campaigns/",
        {
            "dataset": finished.dataset_id,
            "name": "api external",
            "external": True,
            "annotations_per_pair": 3,
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["external"] is True
    assert created.json()["status"] == "closed"
    campaign_id = created.json()["id"]
    mapping = io.BytesIO(json.dumps({"columns": {"x": "nope"}}).encode())
    mapping.name = "m.json"
    with (exported / "annotations.jsonl").open("rb") as stream:
        refused = client.post(
            f"/api/campaigns/{campaign_id}/answers/import/", {"file": stream, "mapping": mapping}
        )
    assert refused.status_code == 400
    assert "mapping" in refused.json()["errors"]
    with (exported / "annotations.jsonl").open("rb") as stream:
        done = client.post(f"/api/campaigns/{campaign_id}/answers/import/", {"file": stream})
    assert done.status_code == 201, done.content
    assert done.json()["answers"] > 0
    assert len(done.json()["source_sha256"]) == 64
    table = client.get(f"/api/campaigns/{campaign_id}/long-table/")
    assert table.status_code == 200
    assert table.content.decode().startswith('"rater","unit","question","value"')


def test_the_demo_imports_the_finished_campaigns_export(db: None) -> None:
    out = io.StringIO()
    call_command("demo_setup", "--address", "127.0.0.1:8202", stdout=out)
    original = Campaign.objects.get(name=SIMULATED_CAMPAIGN)
    imported = Campaign.objects.get(name=IMPORTED_CAMPAIGN)
    assert imported.external
    assert f"Campaign #{imported.pk}" in out.getvalue()
    ours, theirs = campaign_verdicts(original), campaign_verdicts(imported)
    assert {p: (v.verdict, v.reasons) for p, v in ours.items()} == {
        p: (v.verdict, v.reasons) for p, v in theirs.items()
    }
    call_command("demo_setup", "--address", "127.0.0.1:8202", stdout=io.StringIO())
    assert Campaign.objects.filter(name=IMPORTED_CAMPAIGN).count() == 1


def test_an_external_campaigns_dashboard_counts_its_imported_answers_and_has_no_links(
    copy: Campaign,
    exported: Path,
    manager: User,
    login: Callable[[User], Client],
) -> None:
    """The imported answers are counted on the dashboard with their annotators, and the study
    link and sign-up invite answer as no link: an anonymous visitor never sees the file's name
    and hash. The API says the links are off."""
    from prb_annotate.campaigns.external.importing import import_answer_path
    from prb_annotate.models import Annotation

    report = import_answer_path(copy, exported / "annotations.jsonl", imported_by=manager)
    assert report is not None
    answers = Annotation.objects.filter(assignment__campaign=copy, is_current=True).count()
    assert answers > 0
    client = login(manager)
    page = client.get(reverse("campaign_detail", args=[copy.pk])).content.decode()
    assert f'<span class="value">{answers}</span><span class="label">answers submitted' in page
    assert "No annotator yet" not in page
    assert 'id="imported-sides"' in page
    assert "both position tests assume that the tool which collected them chose" in page
    anonymous = Client()
    for name, token in (("join", copy.invite_token), ("signup", copy.signup_token)):
        refused = anonymous.get(reverse(name, args=[token]) + "?PROLIFIC_PID=x&STUDY_ID=y")
        assert refused.status_code == 404, name
        assert "sha256" not in refused.content.decode()
    api = APIClient()
    api.force_authenticate(manager)
    described = api.get(f"/api/campaigns/{copy.pk}/").json()
    assert described["study_link_enabled"] is False
    assert described["signup_link_enabled"] is False
