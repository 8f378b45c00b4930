"""Campaigns over a planned sample: creation, the stored plan, the audit's dataset estimate and
extending the sample after a pilot, on the real database."""

import pytest

from prb_annotate.audit import sampling
from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns import planned_sample
from prb_annotate.campaigns.lifecycle import CampaignSetupError, create_campaign, set_status
from prb_annotate.campaigns.planned_sample import SamplePlanError
from prb_annotate.models import Campaign, CampaignItem, Dataset
from tests.support.concurrency import run_threads
from tests.support.sampling import TARGETS, pilot, planned_dataset


@pytest.fixture
def prb(db: None) -> Dataset:
    return planned_dataset()


def pair_ids(campaign: Campaign, kind: str = CampaignItem.Kind.REGULAR) -> set[str]:
    return set(campaign.items.filter(kind=kind).values_list("pair__external_id", flat=True))


def test_it_creates_a_campaign_on_the_planned_sample(prb: Dataset) -> None:
    campaign = create_campaign(prb, "planned", k=1, sample_targets=TARGETS, seed=4)
    plan = sampling.SamplePlan.from_json(campaign.sample_plan or {})
    # The smallest sizes whose reported interval at a share of 0.9 is within ±0.15.
    assert plan.sizes() == {"cooking": 19, "fitness": 21}
    assert plan.sizes() == {
        "cooking": sampling.category_sample_size(100, 0.15, 0.9),
        "fitness": sampling.category_sample_size(200, 0.15, 0.9),
    }
    assert (campaign.sample_plan or {})["annotations"] == 40
    assert (campaign.sample_plan or {})["cost"] == 10.0
    drawn = sampling.draw(planned_sample.category_pools(prb), plan.sizes(), seed=4)
    assert pair_ids(campaign) == {pair for ids in drawn.values() for pair in ids}
    again = create_campaign(prb, "same seed", k=1, sample_targets=TARGETS, seed=4)
    assert pair_ids(again) == pair_ids(campaign)


def test_it_leaves_gold_pairs_out_of_the_sample(prb: Dataset) -> None:
    gold = ["fitness-000", "fitness-001", "cooking-000"]
    campaign = create_campaign(prb, "with gold", k=1, sample_targets=TARGETS, gold_pair_ids=gold)
    assert pair_ids(campaign, CampaignItem.Kind.GOLD) == set(gold)
    assert not pair_ids(campaign) & set(gold)
    populations = {
        row["category"]: row["population"] for row in (campaign.sample_plan or {})["categories"]
    }
    assert populations == {"cooking": 99, "fitness": 198}


def test_it_refuses_a_size_and_targets_together(prb: Dataset) -> None:
    with pytest.raises(CampaignSetupError, match="not both"):
        create_campaign(prb, "both", sample=10, sample_targets=TARGETS)
    assert not Campaign.objects.exists()


def test_it_names_the_target_it_cannot_plan_for(prb: Dataset) -> None:
    with pytest.raises(SamplePlanError) as caught:
        create_campaign(prb, "bad", sample_targets=PlanTargets(half_width=0.05, expected_share=1))
    assert caught.value.field == "expected_share"
    assert not Campaign.objects.exists()


def test_it_extends_the_sample_to_the_target_at_the_observed_share(prb: Dataset) -> None:
    campaign = create_campaign(prb, "pilot", k=1, sample_targets=TARGETS, seed=9)
    pilot(campaign, {"fitness": 7, "cooking": 19})
    added = planned_sample.extend_sample(campaign)
    # Fitness looks like 7/21 (shrunk: 9/25), far from the 0.9 planned for; cooking like 19/19
    # (shrunk: 21/23, above 0.9: fewer pairs would do, and a category never shrinks).
    needed = sampling.category_sample_size(200, 0.15, 9 / 25)
    assert sampling.category_sample_size(100, 0.15, 21 / 23) < 19
    assert added == {"cooking": 0, "fitness": needed - 21}
    campaign.refresh_from_db()
    plan = sampling.SamplePlan.from_json(campaign.sample_plan or {})
    assert plan.sizes() == {"cooking": 19, "fitness": needed}
    # Reproducible: the extended campaign holds the first pairs of the same seeded orders.
    drawn = sampling.draw(planned_sample.category_pools(prb), plan.sizes(), seed=9)
    assert pair_ids(campaign) == {pair for ids in drawn.values() for pair in ids}
    # The new items join the end of the queue, with distinct keys.
    keys = list(campaign.items.values_list("order_key", flat=True))
    assert len(set(keys)) == len(keys)
    # Nothing more to add until new answers change the picture.
    assert planned_sample.extend_sample(campaign) == {"cooking": 0, "fitness": 0}
    assert campaign.items.count() == 19 + needed


def test_it_refuses_to_extend_without_a_plan_or_once_closed(prb: Dataset) -> None:
    plain = create_campaign(prb, "plain", sample=10)
    with pytest.raises(SamplePlanError, match="no sample plan"):
        planned_sample.extend_sample(plain)
    planned = create_campaign(prb, "planned", sample_targets=TARGETS)
    set_status(planned, Campaign.Status.CLOSED)
    with pytest.raises(SamplePlanError, match="closed"):
        planned_sample.extend_sample(planned)


def test_the_audit_reports_the_validated_share_of_the_dataset(prb: Dataset) -> None:
    campaign = create_campaign(prb, "audited", k=1, sample_targets=TARGETS, seed=2)
    pilot(campaign, {"fitness": 12, "cooking": 10})
    estimate = campaign_audit(campaign, resamples=0)["sample_estimate"]
    fitness = next(row for row in estimate["per_category"] if row["category"] == "fitness")
    assert fitness["population"] == 200
    assert fitness["share"]["share"] == pytest.approx(12 / 21)
    overall = estimate["overall"]["share"]["share"]
    assert overall == pytest.approx((200 * 12 / 21 + 100 * 10 / 19) / 300)
    assert estimate["plan"]["pairs"] == 40
    plain = create_campaign(prb, "plain", sample=5)
    assert "sample_estimate" not in campaign_audit(plain, resamples=0)


@pytest.mark.django_db(transaction=True)
def test_two_managers_extending_at_once_add_the_pairs_once() -> None:
    """The campaign row is locked while the plan is replaced (immediate transactions on
    SQLite): whoever comes second sees the new plan and finds nothing to add."""
    dataset = planned_dataset()
    campaign = create_campaign(dataset, "race", k=1, sample_targets=TARGETS, seed=9)
    pilot(campaign, {"fitness": 7, "cooking": 19})
    results: list[dict[str, int]] = []

    def extend(_: int) -> None:
        results.append(planned_sample.extend_sample(Campaign.objects.get(pk=campaign.pk)))

    assert run_threads(4, extend) == []
    assert sum(any(added.values()) for added in results) == 1
    campaign.refresh_from_db()
    plan = sampling.SamplePlan.from_json(campaign.sample_plan or {})
    assert len(plan.extensions) == 1
    assert campaign.items.count() == plan.pairs
