"""What a sample plan's promise is worth: the chance that it reaches its half-width, and the
plan that reaches it with room to spare. Pure functions; no ORM.

A plan is sized so that the reported interval reaches the target half-width *when the sample
shows exactly the expected share*. The sample share scatters around the expected one, and on
the side nearer one half the interval is wider: a plan made at the expected share reaches its
target in about half the outcomes (over docs/sampling.md's 40 designs, a median 55 %, as few
as 41 %). So a plan
says its odds:

- :func:`category_odds`: exact, over the hypergeometric distribution of the validated pairs
  of a category's sample when the category's share is the expected one, the probability that
  the interval :func:`sampling.category_estimate` reports is within the per-category target;
- :func:`overall_odds`: the same for the overall interval (:func:`sampling.stratified_estimate`),
  over ``ODDS_DRAWS`` seeded draws of every category's sample at once;
- :func:`cautious_shares` and :func:`with_odds`: the plan made at the **share's bound nearest
  one half** (the upper bound of a share below one half, the lower bound of one above it, at
  the plan's confidence, for the sample the plan draws), and its odds at the expected share,
  offered beside the plan.
"""

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import stats

from prb_annotate.audit import sampling

ODDS_DRAWS = 2000
ODDS_SEED = 0
TOLERANCE = 1e-12


def category_odds(
    population: int, pairs: int, share: float, target: float, confidence: float = 0.95
) -> float:
    """P(reported half-width <= ``target``) when ``pairs`` of ``population`` pairs are drawn
    and ``round(share * population)`` of the category are validated (1 for a census)."""
    if pairs >= population:
        return 1.0
    validated = round(share * population)
    hits = np.arange(max(0, pairs - (population - validated)), min(pairs, validated) + 1)
    chances = stats.hypergeom.pmf(hits, population, validated, pairs)
    reaches = [
        sampling.category_estimate(int(hit), pairs, population, confidence)["half_width"]
        <= target + TOLERANCE
        for hit in hits
    ]
    return float(min(1.0, chances[reaches].sum()))


def overall_odds(
    rows: list[sampling.CategoryPlan],
    shares: Mapping[str, float],
    target: float,
    confidence: float = 0.95,
    draws: int = ODDS_DRAWS,
) -> float:
    """P(reported overall half-width <= ``target``) over ``draws`` seeded draws of every
    category's sample when each category's share is ``shares[category]``."""
    rng = np.random.default_rng(ODDS_SEED)
    columns = [
        rng.hypergeometric(
            round(shares[row.category] * row.population),
            row.population - round(shares[row.category] * row.population),
            row.pairs,
            size=draws,
        )
        if row.pairs < row.population
        else np.full(draws, round(shares[row.category] * row.population))
        for row in rows
    ]
    reached = 0
    for draw in range(draws):
        strata = [
            (int(column[draw]), row.pairs, row.population)
            for column, row in zip(columns, rows, strict=True)
        ]
        half = sampling.stratified_estimate(strata, confidence)["half_width"]
        reached += half is not None and half <= target + TOLERANCE
    return reached / draws


def plan_odds(plan: sampling.SamplePlan, shares: Mapping[str, float]) -> dict[str, Any]:
    """The odds of each of the plan's targets when the shares are ``shares``."""
    targets = plan.targets
    per_category = None
    if targets.category_half_width is not None:
        per_category = {
            row.category: category_odds(
                row.population,
                row.pairs,
                shares[row.category],
                targets.category_half_width,
                targets.confidence,
            )
            for row in plan.categories
        }
    overall = None
    if targets.half_width is not None:
        overall = overall_odds(
            list(plan.categories), shares, targets.half_width, targets.confidence
        )
    return {"overall": overall, "per_category": per_category}


def towards_half(share: float, step: float) -> float:
    """``share`` moved ``step`` towards one half, never past it."""
    return max(share - step, 0.5) if share > 0.5 else min(share + step, 0.5)


def cautious_shares(plan: sampling.SamplePlan) -> dict[str, float]:
    """Each category's share moved towards one half by ``z`` standard errors of the share the
    plan's sample shows: the category's own with a per-category target, else the overall
    share's (a per-category step for an overall target would stack every category's worst
    case). A census has no standard error."""
    z = sampling.z_value(plan.targets.confidence)
    variances = {
        row.category: sampling.sample_variance(row.expected_share, row.pairs, row.population)
        for row in plan.categories
    }
    if plan.targets.category_half_width is not None:
        steps = {category: z * math.sqrt(v) for category, v in variances.items()}
    else:
        total = plan.population
        overall = sum(
            (row.population / total) ** 2 * variances[row.category] for row in plan.categories
        )
        steps = dict.fromkeys(variances, z * math.sqrt(overall))
    return {
        row.category: towards_half(row.expected_share, steps[row.category])
        for row in plan.categories
    }


def with_odds(plan: sampling.SamplePlan) -> dict[str, Any]:
    """The plan as JSON with ``odds`` (at the expected shares) and ``cautious``: the plan at
    each share's bound nearest one half, with its own odds at the expected shares."""
    expected = {row.category: row.expected_share for row in plan.categories}
    shares = cautious_shares(plan)
    populations = {row.category: row.population for row in plan.categories}
    cautious = sampling.plan_sample(populations, plan.targets, plan.k, shares)
    return {
        **plan.as_json(),
        "odds": plan_odds(plan, expected),
        "cautious": {
            "shares": shares,
            "pairs": cautious.pairs,
            "annotations": cautious.annotations,
            "cost": cautious.cost,
            "sizes": cautious.sizes(),
            "odds": plan_odds(cautious, expected),
        },
    }
