"""A planned sample from the pages, the API and the command: plan, create, read the dataset
estimate, extend after a pilot, and the 4xx answers for bad targets."""

import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from prb_annotate.audit.cache import campaign_audit_cached
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.models import Campaign, Dataset
from tests.support.sampling import TARGETS, pilot, planned_dataset


@pytest.fixture
def prb(db: None) -> Dataset:
    return planned_dataset()


@pytest.fixture
def staff(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create(username="manager", is_staff=True))
    return client


def send(client: Client, url: str, body: Any = None) -> Any:
    return client.post(url, data=json.dumps(body or {}), content_type="application/json")


def planned_form(dataset: Dataset, **changes: str) -> dict[str, str]:
    data = {
        "dataset": str(dataset.pk),
        "name": "planned",
        "annotations_per_pair": "1",
        "reservation_minutes": "20",
        "seed": "3",
        "gold_rate": "0",
        "plan_category_half_width": "0.15",
        "plan_expected_share": "0.9",
        "plan_split_share": "0.1",
        "plan_price": "0.25",
    }
    data.update(changes)
    return data


# --- pages ----------------------------------------------------------------------------------


def test_it_previews_the_plan_on_the_form_without_creating(prb: Dataset, staff: Client) -> None:
    data = {**planned_form(prb), "preview": "1"}
    page = staff.post(reverse("campaign_create"), data).content.decode()
    assert 'id="plan-preview"' in page
    assert "40 of 300 pairs" in page
    # 40 pairs x (1 + 0.1) = 44 annotations; 44 x 0.25.
    assert "44 annotations" in page
    assert "cost 11.00" in page
    # The plan says its odds and offers the plan at the share's bound nearest one half.
    odds = page.split('id="plan-odds">')[1].split("</p>")[0]
    assert "Chance of reaching the half-width if the validated share is as expected" in odds
    assert "bound nearest one half" in odds
    assert not Campaign.objects.exists()


def test_it_creates_a_planned_campaign_from_the_form(prb: Dataset, staff: Client) -> None:
    response = staff.post(reverse("campaign_create"), planned_form(prb))
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="planned")
    assert campaign.items.count() == 40
    assert (campaign.sample_plan or {})["targets"]["category_half_width"] == 0.15
    dashboard = staff.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="sample-plan"' in dashboard
    assert "40 of 300 pairs" in dashboard


def test_the_form_refuses_a_size_and_a_target_together(prb: Dataset, staff: Client) -> None:
    response = staff.post(reverse("campaign_create"), planned_form(prb, sample="10"))
    assert response.status_code == 200
    assert "not both" in response.content.decode()
    out_of_range = staff.post(reverse("campaign_create"), planned_form(prb, plan_half_width="2"))
    assert "plan_half_width" in out_of_range.context["form"].errors
    assert not Campaign.objects.exists()


def test_a_planned_sample_with_nothing_answered_names_its_method(
    prb: Dataset, staff: Client
) -> None:
    """Before any answer the shares are empty, yet the sentence still names the interval, from
    the bounds that count the undecided pairs."""
    campaign = create_campaign(prb, "fresh", k=1, sample_targets=TARGETS, seed=5)
    text = staff.get(reverse("campaign_audit", args=[campaign.pk]) + "?resamples=0")
    assert "per category a continuity-corrected Wilson interval" in text.content.decode()


def test_the_audit_page_shows_the_dataset_share_and_extends_the_sample(
    prb: Dataset, staff: Client
) -> None:
    campaign = create_campaign(prb, "pilot", k=1, sample_targets=TARGETS, seed=5)
    pilot(campaign, {"fitness": 7, "cooking": 14})
    page = staff.get(reverse("campaign_audit", args=[campaign.pk]) + "?resamples=0")
    text = page.content.decode()
    assert 'id="sample-estimate"' in text
    assert 'id="dataset-share"' in text
    assert 'id="extend-sample"' in text
    assert page.context["sample_estimate"]["rows"][1]["population"] == 200
    # The method's words come from the method the estimate's intervals name.
    estimate = campaign_audit_cached(campaign, resamples=0)["sample_estimate"]
    assert estimate["per_category"][0]["share"]["method"] == "wilson_cc_fpc"
    assert "per category a continuity-corrected Wilson interval" in text
    response = staff.post(reverse("campaign_audit_extend_sample", args=[campaign.pk]))
    assert response.status_code == 302
    assert campaign.items.count() > 40
    messages = [
        str(m) for m in staff.get(response["Location"] + "?resamples=0").context["messages"]
    ]
    assert any("Added" in message for message in messages)


def test_the_standalone_report_and_text_carry_the_estimate(prb: Dataset) -> None:
    campaign = create_campaign(prb, "audited", k=1, sample_targets=TARGETS)
    pilot(campaign, {"fitness": 12, "cooking": 10})
    out = StringIO()
    call_command("audit", f"--campaign={campaign.pk}", "--resamples=0", stdout=out)
    assert "Validated share of the dataset (planned sample)" in out.getvalue()
    assert "whole dataset:" in out.getvalue()
    html = StringIO()
    call_command(
        "audit", f"--campaign={campaign.pk}", "--resamples=0", "--format=html", stdout=html
    )
    assert 'id="sample-estimate"' in html.getvalue()


def test_a_campaign_without_a_plan_shows_no_estimate(prb: Dataset, staff: Client) -> None:
    campaign = create_campaign(prb, "plain", sample=5)
    text = staff.get(reverse("campaign_audit", args=[campaign.pk]) + "?resamples=0")
    assert 'id="sample-estimate"' not in text.content.decode()
    assert 'id="extend-sample"' not in text.content.decode()


def test_an_annotator_cannot_extend_a_sample(prb: Dataset) -> None:
    campaign = create_campaign(prb, "pilot", k=1, sample_targets=TARGETS)
    client = Client()
    client.force_login(User.objects.create(username="alice"))
    response = client.post(reverse("campaign_audit_extend_sample", args=[campaign.pk]))
    assert response.status_code == 404
    assert campaign.items.count() == 40


# --- API ------------------------------------------------------------------------------------


def test_the_api_previews_creates_and_extends(prb: Dataset, staff: Client) -> None:
    targets = {"category_half_width": 0.15, "expected_share": 0.9, "price_per_annotation": 0.25}
    preview = send(
        staff, f"/api/datasets/{prb.pk}/sample-plan/", {**targets, "annotations_per_pair": 1}
    )
    assert preview.status_code == 200
    assert preview.json()["pairs"] == 40
    assert preview.json()["cost"] == 10.0
    odds = preview.json()["odds"]["per_category"]
    assert set(odds) == {"fitness", "cooking"}
    assert all(0 < chance <= 1 for chance in odds.values())
    cautious = preview.json()["cautious"]
    assert cautious["pairs"] >= 40
    assert all(share < 0.9 for share in cautious["shares"].values())
    created = send(
        staff,
        "/api/campaigns/",
        {"dataset": prb.pk, "name": "api", "annotations_per_pair": 1, "sample_targets": targets},
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["sample_plan"]["pairs"] == 40
    campaign = Campaign.objects.get(pk=body["id"])
    pilot(campaign, {"fitness": 7, "cooking": 14})
    audit = staff.get(f"/api/campaigns/{campaign.pk}/audit/?resamples=0").json()
    assert audit["sample_estimate"]["overall"]["population"] == 300
    extended = send(staff, f"/api/campaigns/{campaign.pk}/extend-sample/")
    assert extended.status_code == 200
    assert extended.json()["added"]["fitness"] > 0
    assert extended.json()["sample_plan"]["pairs"] == campaign.items.count()


def test_the_api_names_the_bad_target(prb: Dataset, staff: Client) -> None:
    response = send(
        staff,
        "/api/campaigns/",
        {"dataset": prb.pk, "name": "bad", "sample_targets": {"half_width": 0.7}},
    )
    assert response.status_code == 400
    assert "sample_targets.half_width" in response.json()["errors"]
    none_given = send(staff, f"/api/datasets/{prb.pk}/sample-plan/", {"expected_share": 0.5})
    assert none_given.status_code == 400
    assert "half_width" in none_given.json()["errors"]
    both = send(
        staff,
        "/api/campaigns/",
        {"dataset": prb.pk, "name": "both", "sample": 5, "sample_targets": {"half_width": 0.1}},
    )
    assert both.status_code == 400
    assert not Campaign.objects.exists()


def test_the_api_refuses_to_extend_a_campaign_without_a_plan(prb: Dataset, staff: Client) -> None:
    campaign = create_campaign(prb, "plain", sample=5)
    response = send(staff, f"/api/campaigns/{campaign.pk}/extend-sample/")
    assert response.status_code == 400
    assert "sample_plan" in response.json()["errors"]
    assert send(staff, "/api/datasets/999999/sample-plan/", {"half_width": 0.1}).status_code == 404


# --- command --------------------------------------------------------------------------------


def test_the_command_prints_a_plan_without_creating(prb: Dataset) -> None:
    out = StringIO()
    call_command(
        "create_campaign",
        "--dataset=prb",
        "--half-width=0.05",
        "--price=0.1",
        "--k=3",
        "--plan-only",
        stdout=out,
    )
    assert "Sample plan:" in out.getvalue()
    assert "Chance of reaching the half-width" in out.getvalue()
    assert "fitness:" in out.getvalue()
    assert not Campaign.objects.exists()


def test_the_command_creates_and_extends_a_planned_campaign(prb: Dataset) -> None:
    out = StringIO()
    call_command(
        "create_campaign",
        "--dataset=prb",
        "--name=cli",
        "--k=1",
        "--category-half-width=0.15",
        "--expected-share=0.9",
        stdout=out,
    )
    campaign = Campaign.objects.get(name="cli")
    assert "items: 40" in out.getvalue()
    pilot(campaign, {"fitness": 7, "cooking": 14})
    extended = StringIO()
    call_command("create_campaign", f"--extend-sample={campaign.pk}", stdout=extended)
    assert extended.getvalue().startswith("Added ")
    assert "extension 1:" in extended.getvalue()
    # Refused as the option was typed, with the declared bound (setting_options.py).
    with pytest.raises(CommandError, match=r"--expected-share: 1\.0 is above 0\.99"):
        call_command(
            "create_campaign",
            "--dataset=prb",
            "--name=bad",
            "--half-width=0.1",
            "--expected-share=1",
            stdout=StringIO(),
        )
    with pytest.raises(CommandError, match="no campaign"):
        call_command("create_campaign", "--extend-sample=99999", stdout=StringIO())
