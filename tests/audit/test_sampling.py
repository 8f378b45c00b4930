"""Sample plans and the dataset-level estimate against worked examples from the literature."""

import math

import pytest

from prb_annotate.audit import agreement, sampling
from prb_annotate.audit.sampling import PlanError, PlanTargets, StratumCounts

# Krejcie, R. V. & Morgan, D. W. (1970). Determining sample size for research activities.
# Educational and Psychological Measurement 30, 607-610, Table 1 (p = 0.5, d = 0.05,
# chi-square 3.841, i.e. z = 1.96): population -> sample, rounded to the nearest pair.
KREJCIE_MORGAN_1970 = {100: 80, 300: 169, 500: 217, 1000: 278, 2000: 322}
PLANNED_AT_0_04 = {"a": 56, "b": 94, "c": 149}


def test_it_computes_cochrans_n0() -> None:
    """Israel, G. D. (1992). Determining Sample Size, PEOD6, University of Florida: with
    p = 0.5, ±5 points at 95 %, n0 = 1.96^2 * 0.25 / 0.05^2 = 384.16 (385 families)."""
    assert sampling.cochran_n0(0.05, 0.5) == pytest.approx(384.146, abs=1e-3)
    assert math.ceil(sampling.cochran_n0(0.05, 0.5)) == 385


def test_it_applies_the_finite_population_correction() -> None:
    """Israel (1992): for 2,000 families, n = 385 / (1 + (385 - 1) / 2000) = 323."""
    assert sampling.fpc_size(385, 2000) == pytest.approx(323.0, abs=0.05)
    assert sampling.cochran_size(2000, 0.05, 0.5) == 323


@pytest.mark.parametrize(("population", "sample"), KREJCIE_MORGAN_1970.items())
def test_it_matches_krejcie_and_morgans_table(population: int, sample: int) -> None:
    n0 = sampling.cochran_n0(0.05, 0.5)
    assert round(sampling.fpc_size(n0, population)) == sample
    # Rounded up, the size always reaches the target half-width, and one pair fewer does not.
    size = sampling.cochran_size(population, 0.05, 0.5)
    z = sampling.z_value(0.95)
    assert z * math.sqrt(sampling.sample_variance(0.5, size, population)) <= 0.05
    assert z * math.sqrt(sampling.sample_variance(0.5, size - 1, population)) > 0.05


@pytest.mark.parametrize("share", [0.5, 0.7, 0.9, 0.95, 0.97, 0.99])
@pytest.mark.parametrize(("population", "target"), [(1000, 0.10), (1000, 0.05), (120, 0.08)])
def test_it_sizes_a_category_with_the_interval_it_reports(
    population: int, target: float, share: float
) -> None:
    """The plan's size is the smallest whose reported interval (the estimate's own function,
    at the expected share) reaches the target: one pair fewer does not."""
    size = sampling.category_sample_size(population, target, share)
    assert sampling.category_estimate(share * size, size, population)["half_width"] <= target
    if size > 1:
        fewer = sampling.category_estimate(share * (size - 1), size - 1, population)
        assert fewer["half_width"] > target


def test_it_plans_enough_pairs_for_a_high_expected_share() -> None:
    """N = 1,000, share 0.97, ±0.10: Cochran's normal size, 12 pairs, gives ±0.14 at the
    expected share (and ±0.12 when all 12 are validated); the plan takes 27, which reach it."""
    assert sampling.cochran_size(1000, 0.10, 0.97) == 12
    assert sampling.reported_half_width(0.97, 12, 1000) > 0.13
    plan = sampling.plan_sample(
        {"a": 1000}, PlanTargets(category_half_width=0.10, expected_share=0.97), k=3
    )
    assert plan.sizes() == {"a": 27}
    assert plan.expected_half_widths()["per_category"]["a"] <= 0.10
    every = sampling.category_estimate(27, 27, 1000)
    assert every["half_width"] <= 0.10


def test_it_samples_a_small_category_whole_when_the_target_asks_for_it() -> None:
    assert sampling.category_sample_size(40, 0.01, 0.5) == 40
    assert sampling.sample_variance(0.5, 40, 40) == 0.0


def test_it_plans_per_category_with_the_fpc() -> None:
    plan = sampling.plan_sample(
        {"a": 300, "b": 2000, "c": 100}, PlanTargets(category_half_width=0.05), k=3
    )
    # Cochran's sizes are 169, 323 and 80; the reported interval's half pair asks a few more.
    assert plan.sizes() == {"a": 177, "b": 337, "c": 84}
    assert plan.pairs == 598
    assert plan.annotations == 3 * 598


def test_it_counts_the_extra_annotators_and_the_cost() -> None:
    targets = PlanTargets(category_half_width=0.05, split_share=0.1, price_per_annotation=0.5)
    plan = sampling.plan_sample({"a": 2000}, targets, k=3)
    # 337 pairs x 3, plus one more annotator for the expected 10 % of split votes: 1044.7.
    assert plan.annotations == 1045
    assert plan.cost == 522.5


def test_it_plans_one_category_overall_with_the_overall_interval() -> None:
    plan = sampling.plan_sample({"a": 2000}, PlanTargets(half_width=0.05), k=1)
    size = plan.sizes()["a"]
    assert sampling.stratified_estimate([(0.5 * size, size, 2000)])["half_width"] <= 0.05
    fewer = sampling.stratified_estimate([(0.5 * (size - 1), size - 1, 2000)])
    assert fewer["half_width"] > 0.05
    assert 323 < size < 345


def test_it_finds_the_smallest_proportional_allocation_for_the_overall_target() -> None:
    populations = {"a": 300, "b": 500, "c": 800}
    shares = {"a": 0.6, "b": 0.8, "c": 0.9}
    plan = sampling.plan_sample(populations, PlanTargets(half_width=0.04), k=3, shares=shares)

    def half_width(total: int) -> float:
        sizes = sampling.proportional_allocation(populations, total)
        strata = [(shares[c] * sizes[c], sizes[c], populations[c]) for c in populations]
        return sampling.stratified_estimate(strata)["half_width"]

    # The bisection finds what a plain scan finds: the first total that reaches the target.
    smallest = next(total for total in range(1, 1601) if half_width(total) <= 0.04)
    assert plan.sizes() == sampling.proportional_allocation(populations, smallest)
    assert plan.expected_half_widths()["overall"] == pytest.approx(half_width(smallest))
    assert plan.sizes() == PLANNED_AT_0_04


def test_it_takes_the_larger_size_when_both_targets_are_given() -> None:
    populations = {"big": 5000, "small": 200}
    overall = sampling.plan_sample(populations, PlanTargets(half_width=0.05), k=3).sizes()
    both = sampling.plan_sample(
        populations, PlanTargets(half_width=0.05, category_half_width=0.1), k=3
    ).sizes()
    per_category = sampling.plan_sample(
        populations, PlanTargets(category_half_width=0.1), k=3
    ).sizes()
    assert both == {c: max(overall[c], per_category[c]) for c in populations}
    assert both["small"] > overall["small"]


def test_it_refuses_targets_it_cannot_plan_for() -> None:
    cases = [
        (PlanTargets(), "half_width"),
        (PlanTargets(half_width=0.0), "half_width"),
        (PlanTargets(category_half_width=0.7), "category_half_width"),
        (PlanTargets(half_width=0.05, expected_share=1.0), "expected_share"),
        (PlanTargets(half_width=0.05, split_share=-0.1), "split_share"),
        (PlanTargets(half_width=0.05, price_per_annotation=-1), "price_per_annotation"),
        (PlanTargets(half_width=0.05, confidence=1.0), "confidence"),
    ]
    for targets, field in cases:
        with pytest.raises(PlanError) as caught:
            sampling.plan_sample({"a": 100}, targets, k=3)
        assert caught.value.field == field


def test_it_round_trips_a_plan_through_json() -> None:
    plan = sampling.plan_sample(
        {"a": 300, "b": 500}, PlanTargets(half_width=0.05, price_per_annotation=0.2), k=3
    )
    data = plan.as_json()
    assert data["pairs"] == plan.pairs
    assert data["cost"] == plan.cost
    assert sampling.SamplePlan.from_json(data) == plan


def test_it_draws_a_reproducible_prefix_of_a_seeded_order() -> None:
    pools = {"a": [f"a{i}" for i in range(50)], "b": [f"b{i}" for i in range(30)]}
    first = sampling.draw(pools, {"a": 10, "b": 5}, seed=7)
    again = sampling.draw(
        {c: list(reversed(ids)) for c, ids in pools.items()}, {"a": 10, "b": 5}, 7
    )
    assert first == again
    larger = sampling.draw(pools, {"a": 20, "b": 5}, seed=7)
    assert larger["a"][:10] == first["a"]
    assert sampling.draw(pools, {"a": 10, "b": 5}, seed=8) != first


def test_it_extends_a_plan_at_the_observed_share_and_never_shrinks_it() -> None:
    populations = {"a": 1000, "b": 1000}
    plan = sampling.plan_sample(
        populations, PlanTargets(category_half_width=0.05, expected_share=0.9), k=3
    )
    # A pilot: "a" looks like 50 %, which needs more pairs; "b" like 97 %, which needs fewer.
    extended = sampling.extended_plan(plan, {"a": (60, 120), "b": (116, 120)})
    shares = extended.extensions[-1]["shares"]
    assert shares["a"] == pytest.approx(62 / 124)
    assert extended.sizes()["a"] == sampling.category_sample_size(1000, 0.05, 62 / 124)
    assert extended.sizes()["a"] > plan.sizes()["a"]
    assert extended.sizes()["b"] == plan.sizes()["b"]
    assert extended.extensions[-1]["added"] == {
        "a": extended.sizes()["a"] - plan.sizes()["a"],
        "b": 0,
    }
    # A category without decided pairs keeps its planned share.
    unseen = sampling.extended_plan(plan, {"a": (0, 0)})
    assert unseen.sizes() == plan.sizes()


def test_it_gives_wilsons_interval_for_a_large_population() -> None:
    """Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion,
    Statistics in Medicine 17, 857-872, Table I: 81/263, Wilson 0.2553 to 0.3662, with
    continuity correction (method 4) 0.2535 to 0.3682."""
    estimate = sampling.category_estimate(81, 263, 10**12)
    assert estimate["ci_low"] == pytest.approx(0.2535, abs=1e-4)
    assert estimate["ci_high"] == pytest.approx(0.3682, abs=1e-4)
    plain = sampling.wilson(81 / 263, 263)
    assert plain == pytest.approx(agreement.wilson_interval(81, 263), abs=1e-6)
    assert plain == pytest.approx((0.2553, 0.3662), abs=1e-4)


def test_it_narrows_the_interval_by_the_sampling_fraction() -> None:
    def plain_half_width(size: float) -> float:
        low, high = sampling.wilson(81 / 263, size)
        return (high - low) / 2

    wide = plain_half_width(263)
    effective = sampling.effective_size(263, 400)
    # The FPC scales the binomial variance by (N - n) / (N - 1); Wilson's half-width follows
    # it closely at this size.
    assert plain_half_width(effective) == pytest.approx(wide * math.sqrt(137 / 399), rel=0.02)
    # The continuity correction adds at most half a pair of the sample to each side.
    narrow = sampling.category_estimate(81, 263, 400)["half_width"]
    assert plain_half_width(effective) < narrow <= plain_half_width(effective) + 1 / (2 * 263)
    census = sampling.category_estimate(81, 263, 263)
    # A census is the share itself, with no interval (not a zero-width one).
    assert census["share"] == 81 / 263
    assert census["ci_low"] is census["ci_high"] is None
    assert census["method"] == sampling.CENSUS


def test_it_weights_the_overall_share_by_category_size() -> None:
    estimate = sampling.stratified_estimate([(25, 50, 100), (80, 100, 300)])
    assert estimate["share"] == pytest.approx(0.25 * 0.5 + 0.75 * 0.8)
    weights = (0.25, 0.75)
    shrunk = ((25 + 2) / 54, (80 + 2) / 104)
    variance = (
        weights[0] ** 2 * shrunk[0] * (1 - shrunk[0]) / 50 * 50 / 99
        + weights[1] ** 2 * shrunk[1] * (1 - shrunk[1]) / 100 * 200 / 299
    )
    smooth = weights[0] * shrunk[0] + weights[1] * shrunk[1]
    size = smooth * (1 - smooth) / variance
    low, high = sampling.wilson(estimate["share"], size, correction=1 / (2 * 150))
    assert (estimate["ci_low"], estimate["ci_high"]) == pytest.approx((low, high))


def test_it_keeps_an_interval_when_every_sampled_pair_is_validated() -> None:
    estimate = sampling.stratified_estimate([(40, 40, 400), (30, 30, 300)])
    assert estimate["share"] == 1.0
    assert estimate["ci_low"] < 1.0
    assert estimate["ci_high"] == 1.0


def test_it_bounds_the_share_by_the_undecided_pairs() -> None:
    strata = [
        StratumCounts("a", 400, validated=60, excluded=20, undecided=20, target_half_width=0.1),
        StratumCounts("b", 600, validated=90, excluded=10, undecided=0),
    ]
    result = sampling.dataset_estimate(strata, overall_target=0.02)
    a, b = result["per_category"]
    assert a["share"]["share"] == 0.75
    assert a["low"]["share"] == 0.6
    assert a["high"]["share"] == 0.8
    assert b["low"] == b["high"]
    overall = result["overall"]
    assert overall["share"]["share"] == pytest.approx(0.4 * 0.75 + 0.6 * 0.9)
    assert overall["low"]["share"] == pytest.approx(0.4 * 0.6 + 0.6 * 0.9)
    assert overall["high"]["share"] == pytest.approx(0.4 * 0.8 + 0.6 * 0.9)
    assert overall["low"]["ci_low"] < overall["share"]["ci_low"]
    assert a["target_reached"] is True
    assert b["target_reached"] is None
    assert overall["target_reached"] is False


def test_it_says_nothing_overall_while_a_category_has_no_decided_pair() -> None:
    strata = [StratumCounts("a", 100, 5, 5, 0), StratumCounts("b", 100, 0, 0, 10)]
    result = sampling.dataset_estimate(strata)
    assert result["overall"]["share"]["share"] is None
    assert result["overall"]["low"]["share"] == pytest.approx(0.25)
