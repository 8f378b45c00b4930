"""A census (every pair of a category annotated) gives the share itself with no interval:
not a zero-width interval tagged with an interval's method. The estimate, the prediction-
powered one, the audit page, the API and the text report all say so."""

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.audit import ppi, sample_report, sampling
from prb_annotate.audit.cache import campaign_audit_cached
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.models import Campaign, Dataset
from tests.support.sampling import TARGETS, pilot, planned_dataset

# At ±0.15 and an expected 90 %, a category of 4 pairs is planned whole (a census) and one of
# 20 gets 12 pairs.
SMALL = {"fitness": 20, "cooking": 4}


def small_dataset(sizes: dict[str, int] = SMALL) -> Dataset:
    return planned_dataset("small", sizes)


def census_campaign() -> Campaign:
    """Cooking annotated whole (3 of its 4 pairs validated), fitness sampled (10 of 12)."""
    campaign = create_campaign(small_dataset(), "census", k=1, sample_targets=TARGETS, seed=2)
    assert campaign.sample_plan is not None
    sizes = {row["category"]: row["pairs"] for row in campaign.sample_plan["categories"]}
    assert sizes == {"cooking": 4, "fitness": 12}
    pilot(campaign, {"fitness": 10, "cooking": 3})
    return campaign


def test_a_census_is_the_share_with_no_interval() -> None:
    census = sampling.category_estimate(3, 4, 4)
    assert census == {
        "share": 0.75,
        "ci_low": None,
        "ci_high": None,
        "half_width": 0.0,
        "method": sampling.CENSUS,
    }
    # A sample short of the whole keeps its interval and its method.
    sampled = sampling.category_estimate(10, 12, 20)
    assert sampled["method"] == "wilson_cc_fpc"
    assert sampled["ci_low"] < sampled["share"] < sampled["ci_high"]
    # Every category a census: the overall share is one too.
    overall = sampling.stratified_estimate([(3, 4, 4), (18, 20, 20)])
    assert overall["method"] == sampling.CENSUS
    assert overall["ci_low"] is None
    assert overall["share"] == pytest.approx((3 + 18) / 24)
    # No sampling error: a target is reached, and a plan sizes a census as exact.
    strata = [sampling.StratumCounts("cooking", 4, 3, 1, 0, target_half_width=0.05)]
    assert sampling.dataset_estimate(strata)["per_category"][0]["target_reached"] is True
    assert sampling.reported_half_width(0.75, 4, 4) == 0.0


def test_the_prediction_powered_estimate_of_a_census_has_no_interval() -> None:
    table = ppi.AgreementTable(both_validated=3, human_only=0, model_only=0, neither=1)
    found = ppi.ppi_estimate([ppi.PPIStratum("cooking", 4, 4, 3, table)])
    row = found["per_category"][0]
    for entry in (row["ppi"], row["humans_only"], found["overall"]["ppi"]):
        assert entry["method"] == sampling.CENSUS
        assert entry["ci_low"] is entry["ci_high"] is None
        assert entry["share"] == 0.75
    json.dumps(found, allow_nan=False)  # no infinity in the JSON


def test_the_bounds_of_a_census_with_undecided_pairs_are_the_two_shares() -> None:
    # Four pairs, all annotated, one undecided: the share of the three decided ones has an
    # interval (the fourth is unknown); counting it either way is exact.
    estimate = sampling.dataset_estimate([sampling.StratumCounts("cooking", 4, 2, 1, 1)])
    row = estimate["per_category"][0]
    assert row["share"]["method"] == "wilson_cc_fpc"
    assert sampling.is_census(row["low"])
    assert sampling.is_census(row["high"])
    assert sample_report.bounds(row) == "50.0% to 75.0% (every pair annotated)"


@pytest.fixture
def staff(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create(username="manager", is_staff=True))
    return client


def test_the_page_the_api_and_the_text_print_a_census_alone(staff: Client) -> None:
    campaign = census_campaign()
    page = staff.get(reverse("campaign_audit", args=[campaign.pk]) + "?resamples=0")
    assert page.status_code == 200
    rows = {row["label"]: row for row in page.context["sample_estimate"]["rows"]}
    assert rows["cooking"]["share"] == "75.0% (every pair annotated)"
    assert rows["fitness"]["share"].startswith("83.3% [")
    # The sampled category's interval is the one the method sentence names.
    assert "per category a continuity-corrected Wilson interval" in page.content.decode()
    assert "75.0% (every pair annotated)" in page.content.decode()

    api = staff.get(f"/api/campaigns/{campaign.pk}/audit/?resamples=0")
    assert api.status_code == 200
    estimate = api.json()["sample_estimate"]
    cooking = next(row for row in estimate["per_category"] if row["category"] == "cooking")
    assert cooking["share"]["method"] == sampling.CENSUS
    assert cooking["share"]["ci_low"] is None
    assert cooking["share"]["ci_high"] is None

    lines = sample_report.estimate_lines(
        campaign_audit_cached(campaign, resamples=0)["sample_estimate"]
    )
    assert any(line.startswith("  cooking: 75.0% (every pair annotated)") for line in lines)


def test_a_dataset_annotated_whole_says_so_instead_of_naming_an_interval(db: None) -> None:
    campaign = create_campaign(
        small_dataset({"fitness": 4, "cooking": 3}), "whole", k=1, sample_targets=TARGETS
    )
    pilot(campaign, {"fitness": 3, "cooking": 3})
    estimate = campaign_audit_cached(campaign, resamples=0)["sample_estimate"]
    assert estimate["overall"]["share"]["method"] == sampling.CENSUS
    assert sample_report.estimate_method(estimate) == (
        "Every pair of the dataset was annotated: each share is the dataset's own, with no "
        "interval."
    )
