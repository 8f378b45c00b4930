"""The prediction-powered estimate of a planned sample with a model annotator, on a real
database: the audit's ``ppi`` entry, the page, the text and HTML reports and the API; the human
figures unchanged; no estimate when the model did not answer the sample."""

import json
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from prb_annotate.audit import ppi_designs
from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.campaigns.model_annotator import campaign_pairs
from prb_annotate.models import Campaign, Dataset
from prb_annotate.simulation.model_annotator import simulate_model_annotator
from tests.support.audit import annotate
from tests.support.sampling import TARGETS, planned_dataset, truth


@pytest.fixture
def prb(db: None) -> Dataset:
    return planned_dataset()


@pytest.fixture
def audited(prb: Dataset) -> Campaign:
    """A planned sample (40 of 300 pairs, k = 1) answered by a careful annotator."""
    campaign = create_campaign(prb, "pilot", k=1, sample_targets=TARGETS, seed=5)
    user = User.objects.create_user("careful")
    answers = truth(prb)
    for item in campaign.items.select_related("pair"):
        fit, differentiator = answers[item.pair.external_id]
        annotate(item, user, fit=fit, differentiator=differentiator)
    return campaign


@pytest.fixture
def staff(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create(username="manager", is_staff=True))
    return client


def test_the_audit_carries_the_estimate_beside_the_humans(audited: Campaign) -> None:
    before = campaign_audit(audited, resamples=0)
    assert "ppi" not in before
    simulate_model_annotator(audited, truth(audited.dataset), accuracy=0.9, seed=1)
    report = campaign_audit(audited, resamples=0)
    section = report["ppi"]
    json.dumps(section, allow_nan=False)
    assert section["simulated"] is True
    assert section["covers_sample"] is True
    overall = section["overall"]
    assert (overall["population"], overall["model_pairs"], overall["sample_pairs"]) == (
        300,
        300,
        40,
    )
    # The humans-only figure is the planned sample's own estimate.
    assert overall["humans_only"] == report["sample_estimate"]["overall"]["share"]
    # A model right on 90 % of the pairs narrows the interval and is worth more human pairs.
    assert overall["ppi"]["half_width"] < overall["humans_only"]["half_width"]
    assert overall["worth"] > 40
    assert overall["model_only"]["biased"] is True
    assert 0.5 < overall["ppi"]["share"] < 1
    assert section["planning"]["with_model"] < section["planning"]["humans_only"]
    # No human figure moves.
    for key in ("verdicts", "agreement", "counts", "sample_estimate"):
        assert report[key] == before[key]


def test_a_model_on_the_sample_alone_adds_nothing(audited: Campaign) -> None:
    simulate_model_annotator(
        audited, truth(audited.dataset), accuracy=0.9, seed=1, pairs=campaign_pairs(audited)
    )
    overall = campaign_audit(audited, resamples=0)["ppi"]["overall"]
    assert overall["model_pairs"] == 40
    assert overall["ppi"]["share"] == pytest.approx(overall["humans_only"]["share"])
    assert overall["ppi"]["half_width"] == pytest.approx(overall["humans_only"]["half_width"])


def test_a_model_that_missed_sampled_pairs_gives_no_estimate(
    audited: Campaign, staff: Client
) -> None:
    sampled = set(audited.items.values_list("pair_id", flat=True))
    others = [pair for pair in audited.dataset.pairs.all() if pair.pk not in sampled]
    simulate_model_annotator(audited, truth(audited.dataset), accuracy=0.9, seed=1, pairs=others)
    section = campaign_audit(audited, resamples=0)["ppi"]
    assert section["covers_sample"] is False
    assert section["sample_pairs_without_model"] == 40
    page = staff.get(reverse("campaign_audit", args=[audited.pk]) + "?resamples=0")
    assert 'id="ppi-not-covered"' in page.content.decode()


def test_the_page_the_reports_and_the_api_show_it(audited: Campaign, staff: Client) -> None:
    simulate_model_annotator(audited, truth(audited.dataset), accuracy=0.9, seed=1)
    page = staff.get(reverse("campaign_audit", args=[audited.pk]) + "?resamples=0")
    html = page.content.decode()
    assert 'id="ppi-table"' in html
    assert "simulated judge (accuracy 90%)" in html
    assert reverse("guide", args=["ppi"]) in html
    assert 'id="ppi-planning"' in html
    out = StringIO()
    call_command("audit", f"--campaign={audited.pk}", "--resamples=0", stdout=out)
    assert "Prediction-powered estimate with simulated judge" in out.getvalue()
    assert "(biased)" in out.getvalue()
    standalone = StringIO()
    call_command(
        "audit", f"--campaign={audited.pk}", "--resamples=0", "--format=html", stdout=standalone
    )
    assert 'id="ppi-table"' in standalone.getvalue()
    audit = staff.get(f"/api/campaigns/{audited.pk}/audit/?resamples=0").json()
    assert audit["ppi"]["overall"]["population"] == 300
    runs = staff.get(reverse("campaign_evaluations", args=[audited.pk])).content.decode()
    assert "answers of known accuracy, no language model" in runs
    assert f"/campaigns/{audited.pk}/audit/#ppi" in runs


def test_the_planned_sample_preview_plans_with_a_model(prb: Dataset, staff: Client) -> None:
    """Per category ±15 points at 90 %: 15 and 14 human pairs alone (tests/support/sampling);
    a model agreeing on 95 % (errors split evenly: Cov = 0.875 - 0.81) leaves
    r = 1 - (0.065 / 0.09)^2 = 0.48 of the variance, so fewer pairs, on the form and in the API;
    an agreement the expected share cannot have is refused, naming the field."""
    form = {
        "dataset": str(prb.pk),
        "name": "planned",
        "annotations_per_pair": "1",
        "reservation_minutes": "20",
        "seed": "3",
        "gold_rate": "0",
        "plan_category_half_width": "0.15",
        "plan_expected_share": "0.9",
        "plan_model_agreement": "0.95",
        "preview": "1",
    }
    page = staff.post(reverse("campaign_create"), form).content.decode()
    assert 'id="plan-with-model"' in page
    body = {"category_half_width": 0.15, "expected_share": 0.9, "model_agreement": 0.95}
    answer = staff.post(
        f"/api/datasets/{prb.pk}/sample-plan/", json.dumps(body), content_type="application/json"
    ).json()
    with_model = answer["with_model"]
    assert with_model["humans_only"] == answer["pairs"] == 40
    assert with_model["with_model"] < 40
    assert f"<strong>{with_model['with_model']}</strong> human pairs" in page
    refused = staff.post(
        f"/api/datasets/{prb.pk}/sample-plan/",
        json.dumps({**body, "model_agreement": 0.5}),
        content_type="application/json",
    )
    assert refused.status_code == 400
    assert "model_agreement" in refused.json()["errors"]


def test_the_models_probabilities_give_the_recalibrated_estimate(
    audited: Campaign, staff: Client
) -> None:
    """The simulated model keeps a probability beside each answer: the audit adds the estimate
    on them, its method named and cited from the object, on the page, in the text and the API.
    A model right on 90 % of the pairs and surer where it is right narrows the interval."""
    simulate_model_annotator(audited, truth(audited.dataset), accuracy=0.9, seed=1)
    section = campaign_audit(audited, resamples=0)["ppi"]
    recalibrated = section["recalibrated"]
    json.dumps(recalibrated, allow_nan=False)
    method = ppi_designs.METHODS[recalibrated["method"]]
    assert method is ppi_designs.RECALIBRATED_PPI
    assert recalibrated["citations"] == method.citations
    overall = recalibrated["overall"]
    assert overall["sample_pairs"] == 40
    humans = section["overall"]["humans_only"]
    assert overall["estimate"]["half_width"] < humans["half_width"]
    assert overall["estimate"]["ci_low"] <= 0.8 <= overall["estimate"]["ci_high"]
    html = staff.get(reverse("campaign_audit", args=[audited.pk]) + "?resamples=0").content.decode()
    assert 'id="ppi-recalibrated"' in html
    assert escape(method.citations) in html
    out = StringIO()
    call_command("audit", f"--campaign={audited.pk}", "--resamples=0", stdout=out)
    assert f"on the model's probabilities: {method.words} ({method.citations})" in out.getvalue()
    api = staff.get(f"/api/campaigns/{audited.pk}/audit/?resamples=0").json()
    assert api["ppi"]["recalibrated"]["method"] == method.key
    # The plan's per-category target, each design's human pairs from this pilot.
    planning = recalibrated["planning"]
    assert planning["category_half_width"] == 0.15
    assert {row["category"] for row in planning["per_category"]} == {
        row["category"] for row in recalibrated["per_category"]
    }
    for row in planning["per_category"]:
        assert row["active"] <= row["uniform"] <= row["humans_only"]
    assert 'id="ppi-design-planning"' in html
    assert "human pairs expected (per category at ±15.0 points" in out.getvalue()


def test_a_model_with_probabilities_on_part_of_the_dataset_says_why_there_is_none(
    audited: Campaign,
) -> None:
    sampled = set(audited.items.values_list("pair_id", flat=True))
    some = [pair for pair in audited.dataset.pairs.order_by("pk") if pair.pk in sampled]
    some += [pair for pair in audited.dataset.pairs.order_by("pk") if pair.pk not in sampled][:50]
    simulate_model_annotator(audited, truth(audited.dataset), accuracy=0.9, seed=1, pairs=some)
    recalibrated = campaign_audit(audited, resamples=0)["ppi"]["recalibrated"]
    assert recalibrated["available"] is False
    assert "cover" in recalibrated["reason"]
