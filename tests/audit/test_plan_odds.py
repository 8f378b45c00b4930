"""A sample plan's odds (audit/plan_odds.py): the chance that it reaches its half-width if the
share is as expected, exact per category and checked against drawn samples, and the plan at
the share's bound nearest one half."""

import numpy as np
import pytest

from prb_annotate.audit import plan_odds, sampling
from prb_annotate.audit.sampling import PlanTargets

POPULATIONS = {"a": 300, "b": 500, "c": 1000}


def test_a_plan_at_the_expected_share_reaches_its_target_about_half_the_time() -> None:
    """Sized so that the interval reaches ±5 points when exactly 80 % of the sample is
    validated: a sample showing fewer (nearer one half) has a wider interval."""
    plan = sampling.plan_sample(
        POPULATIONS, PlanTargets(category_half_width=0.05, expected_share=0.8), k=3
    )
    odds = plan_odds.plan_odds(plan, dict.fromkeys(POPULATIONS, 0.8))["per_category"]
    assert odds is not None
    assert all(0.3 < chance < 0.7 for chance in odds.values()), odds


def test_the_exact_odds_match_samples_drawn_without_replacement() -> None:
    """Draw the sample 4,000 times from a category of 300 pairs, 240 validated, and ask the
    reported interval each time: the share within reach is the exact figure."""
    population, pairs, target = 300, 146, 0.05
    exact = plan_odds.category_odds(population, pairs, 0.8, target)
    rng = np.random.default_rng(7)
    category = np.array([1] * 240 + [0] * 60)
    reached = 0
    draws = 4000
    for _ in range(draws):
        hits = int(rng.choice(category, size=pairs, replace=False).sum())
        reached += sampling.category_estimate(hits, pairs, population)["half_width"] <= target
    standard_error = (exact * (1 - exact) / draws) ** 0.5
    assert reached / draws == pytest.approx(exact, abs=4 * standard_error)


def test_a_plan_at_one_half_always_reaches_its_target_and_a_census_too() -> None:
    """The interval is widest at one half, so a plan made there cannot miss; a census has no
    sampling error."""
    plan = sampling.plan_sample(POPULATIONS, PlanTargets(category_half_width=0.05), k=3)
    odds = plan_odds.plan_odds(plan, dict.fromkeys(POPULATIONS, 0.5))["per_category"]
    assert odds is not None
    assert min(odds.values()) == pytest.approx(1.0)
    assert plan_odds.category_odds(40, 40, 0.8, 0.01) == 1.0


@pytest.mark.parametrize(
    "targets",
    [
        PlanTargets(category_half_width=0.05, expected_share=0.8),
        PlanTargets(half_width=0.05, expected_share=0.8),
        PlanTargets(half_width=0.04, category_half_width=0.1, expected_share=0.3),
    ],
)
def test_the_plan_at_the_bound_nearest_one_half_reaches_its_target(targets: PlanTargets) -> None:
    plan = sampling.plan_sample(POPULATIONS, targets, k=3)
    shown = plan_odds.with_odds(plan)
    cautious = shown["cautious"]
    share = targets.expected_share
    for value in cautious["shares"].values():
        assert min(share, 0.5) <= value <= max(share, 0.5)
        assert value != share
    assert cautious["pairs"] >= plan.pairs
    for found in (cautious["odds"]["overall"], *(cautious["odds"]["per_category"] or {}).values()):
        if found is not None:
            assert found >= 0.95
    # Overall odds are drawn with a fixed seed: the same plan gives the same figure.
    assert plan_odds.with_odds(plan)["odds"] == shown["odds"]
