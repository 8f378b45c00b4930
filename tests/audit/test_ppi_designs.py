"""The prediction-powered designs (audit/ppi_designs.py) against worked examples, exact
enumeration of every Poisson sample of a small category, and a cheap version of the designs'
table of bench/ppi_coverage.py --designs."""

import itertools
import math

import numpy as np
import pytest

from bench import ppi_designs_bench
from prb_annotate.audit import ppi, ppi_designs, sampling
from prb_annotate.audit.ppi_designs import DesignError, ScoredStratum


def test_inclusion_probabilities_follow_the_weights_between_the_floor_and_one() -> None:
    """Weights 1, 1, 2, 4, two pairs to draw, floor half the uniform 1/2: c = 1/4 gives
    max(1/4, 1/4), max(1/4, 1/4), 1/2 and min(1, 1), which sum to 2."""
    found = ppi_designs.inclusion_probabilities([1, 1, 2, 4], budget=2, floor=0.5)
    assert found == pytest.approx([0.25, 0.25, 0.5, 1.0])
    # The floor binds: weights 0, 0, 1, 1 with floor 1/2 of 1/2 leave 1/4 to the first two.
    found = ppi_designs.inclusion_probabilities([0, 0, 1, 1], budget=2, floor=0.5)
    assert found == pytest.approx([0.25, 0.25, 0.75, 0.75])


def test_no_uncertainty_anywhere_is_the_uniform_design() -> None:
    found = ppi_designs.active_probabilities([0.0, 1.0, 1.0, 0.0, 1.0], budget=2)
    assert found == pytest.approx([0.4] * 5)


@pytest.mark.parametrize(
    ("budget", "floor", "field"), [(0, 0.5, "budget"), (5, 0.5, "budget"), (2, 0.0, "floor")]
)
def test_a_design_that_cannot_be_drawn_is_refused(budget: float, floor: float, field: str) -> None:
    with pytest.raises(DesignError) as raised:
        ppi_designs.inclusion_probabilities([1, 2, 3, 4], budget, floor)
    assert raised.value.field == field


def test_a_probability_outside_zero_to_one_names_the_category_and_the_pair() -> None:
    stratum = ScoredStratum(
        "travel", np.array([0.2, 1.5, 0.3]), np.full(3, 0.5), np.array([0, 2]), np.array([1, 0])
    )
    with pytest.raises(DesignError, match=r"category 'travel' scores\[1\]"):
        ppi_designs.stratum_estimate(stratum)


def test_recalibration_solves_the_weighted_logistic_score_equations() -> None:
    """At the fit, the weighted residuals sum to zero (the intercept's equation) and their
    sum against the logits is the ridge's pull on the slope."""
    scores = np.array([0.1, 0.3, 0.5, 0.7, 0.9, 0.2, 0.8, 0.6, 0.4, 0.95])
    pi = np.array([0.5, 0.8, 1.0, 0.8, 0.5, 0.6, 0.6, 0.9, 0.9, 0.4])
    human = np.array([0, 1, 0, 1, 1, 0, 1, 0, 1, 1])
    stratum = ScoredStratum("a", scores, pi, np.arange(10), human)
    predictions, slope = ppi_designs.logistic_recalibration(stratum)
    residuals = (human - predictions) / pi
    logits = np.log(scores / (1 - scores))
    assert residuals.sum() == pytest.approx(0.0, abs=1e-9)
    assert residuals @ logits == pytest.approx(ppi_designs.RIDGE * slope, abs=1e-9)
    assert slope > 0


def test_a_perfectly_separated_sample_keeps_a_finite_fit() -> None:
    scores = np.array([0.1, 0.2, 0.3, 0.7, 0.8, 0.9])
    stratum = ScoredStratum(
        "a", scores, np.full(6, 1.0), np.arange(6), np.array([0, 0, 0, 1, 1, 1])
    )
    predictions, slope = ppi_designs.logistic_recalibration(stratum)
    assert math.isfinite(slope)
    assert np.all((predictions > 0) & (predictions < 1))


def test_the_difference_estimator_is_unbiased_with_its_variance_over_every_poisson_sample() -> None:
    """Five pairs, each drawn with its own probability: over all 32 samples, weighted by their
    probabilities, the estimator's mean is the true share and its variance estimate's mean is
    its variance, for a fixed prediction g = a + b q."""
    scores = np.array([0.1, 0.3, 0.5, 0.8, 0.95])
    human = np.array([0, 1, 0, 1, 1])
    pi = np.array([0.3, 0.6, 0.9, 0.5, 0.2])
    means, estimates, variances = [], [], []
    for chosen in itertools.product((0, 1), repeat=5):
        drawn = np.flatnonzero(chosen)
        weight = float(np.prod(np.where(chosen, pi, 1 - pi)))
        stratum = ScoredStratum("a", scores, pi, drawn, human[drawn])
        share, variance = ppi_designs.difference_estimate(stratum, 0.1 + 0.7 * scores)
        means.append(weight)
        estimates.append(share)
        variances.append(variance)
    weights = np.array(means)
    assert weights.sum() == pytest.approx(1.0)
    mean = float(weights @ np.array(estimates))
    assert mean == pytest.approx(human.mean())
    spread = float(weights @ (np.array(estimates) - mean) ** 2)
    assert float(weights @ np.array(variances)) == pytest.approx(spread)


def _uniform_stratum(scores: np.ndarray, human: np.ndarray, sample: int) -> ScoredStratum:
    population = scores.size
    return ScoredStratum(
        "a", scores, np.full(population, sample / population), np.arange(sample), human[:sample]
    )


def test_a_model_with_one_probability_for_every_pair_gives_exactly_the_humans_interval() -> None:
    human = np.array([1] * 30 + [0] * 20 + [1] * 50)
    stratum = _uniform_stratum(np.full(100, 0.7), human, 50)
    row = ppi_designs.stratum_estimate(stratum)
    humans = sampling.category_estimate(30, 50, 100)
    assert {key: row["estimate"][key] for key in humans} == humans
    assert row["estimate"]["method"] == ppi_designs.HUMANS_ONLY.key


def test_hard_verdicts_under_the_uniform_design_are_read_by_ppi_plus_plus() -> None:
    rng = np.random.default_rng(3)
    human = rng.integers(0, 2, 400)
    model = np.where(rng.random(400) < 0.8, human, 1 - human).astype(float)
    stratum = _uniform_stratum(model, human, 100)
    row = ppi_designs.stratum_estimate(stratum)
    table = ppi.AgreementTable(
        int(np.sum((human[:100] == 1) & (model[:100] == 1))),
        int(np.sum((human[:100] == 1) & (model[:100] == 0))),
        int(np.sum((human[:100] == 0) & (model[:100] == 1))),
        int(np.sum((human[:100] == 0) & (model[:100] == 0))),
    )
    expected = ppi.stratum_estimate(ppi.PPIStratum("a", 400, 400, int(model.sum()), table))["ppi"]
    assert {key: row["estimate"][key] for key in expected} == expected


def test_the_recalibrated_estimate_worked_through() -> None:
    """Uniform sample of 4 of 8 pairs: the share is the recalibrated probabilities' mean over
    all 8 pairs, the variance (1/n - 1/N) (sum e^2 + one pseudo-pair p q) / (n - 2)."""
    scores = np.array([0.2, 0.4, 0.6, 0.8, 0.5, 0.5, 0.7, 0.3])
    human = np.array([0, 1, 0, 1, 0, 0, 0, 0])
    stratum = _uniform_stratum(scores, human, 4)
    figures = ppi_designs.stratum_figures(stratum)
    assert figures is not None
    predictions, slope = ppi_designs.logistic_recalibration(stratum)
    assert figures.share == pytest.approx(predictions.mean())
    assert figures.slope == slope
    residuals = human[:4] - predictions[:4]
    shrunk = sampling.shrunk_share(2, 4)  # two of the four sampled pairs validated
    variance = (1 / 4 - 1 / 8) * (np.sum(residuals**2) + shrunk * (1 - shrunk)) / (4 - 2)
    assert figures.variance == pytest.approx(variance)
    assert figures.method is ppi_designs.RECALIBRATED_PPI


def test_neyman_allocation_follows_size_times_spread_within_the_bounds() -> None:
    assert ppi_designs.neyman_allocation({"a": 100, "b": 100}, {"a": 0.1, "b": 0.3}, 40) == {
        "a": 10,
        "b": 30,
    }
    # b would take 45 of its 20 pairs: it is drawn whole and the rest goes to a.
    found = ppi_designs.neyman_allocation({"a": 200, "b": 20}, {"a": 0.05, "b": 0.5}, 50)
    assert found == {"a": 30, "b": 20}
    # A category the model knows everything about still gets the minimum.
    found = ppi_designs.neyman_allocation({"a": 100, "b": 100}, {"a": 0.0, "b": 0.4}, 30)
    assert found == {"a": 3, "b": 27}


def test_the_budget_for_a_target_is_the_smallest_that_reaches_it() -> None:
    populations = {"a": 300, "b": 500, "c": 800}
    spreads = {"a": (0.45, 0.2), "b": (0.35, 0.12), "c": (0.25, 0.06)}
    budget = ppi_designs.budget_for_half_width(populations, spreads, 0.04)
    sigmas = {c: s for c, (s, _) in spreads.items()}

    def half(size: int) -> float:
        return ppi_designs.planned_half_width(
            populations, spreads, ppi_designs.neyman_allocation(populations, sigmas, size)
        )

    assert half(budget) <= 0.04 < half(budget - 1)
    # The closed form, (sum W sigma)^2 / ((e / z)^2 + sum W^2 tau^2 / N), before rounding.
    weights = {c: n / 1600 for c, n in populations.items()}
    closed = sum(weights[c] * spreads[c][0] for c in spreads) ** 2 / (
        (0.04 / sampling.z_value(0.95)) ** 2
        + sum(weights[c] ** 2 * spreads[c][1] / populations[c] for c in spreads)
    )
    assert budget == pytest.approx(closed, abs=3)


def test_the_plan_asks_fewer_humans_of_the_active_design_and_none_fewer_without_information() -> (
    None
):
    rng = np.random.default_rng(5)
    informative = {"a": rng.beta(0.5, 0.5, 600), "b": rng.beta(2, 0.5, 900)}
    plan = ppi_designs.plan_against_uniform(informative, 0.05)
    assert (
        plan["active"]["human_pairs"]
        < plan["uniform"]["human_pairs"]
        < plan["humans_only"]["human_pairs"]
    )
    flat = {"a": np.full(600, 0.5), "b": np.full(900, 0.8)}
    plan = ppi_designs.plan_against_uniform(flat, 0.05)
    assert plan["active"] == plan["uniform"] == plan["humans_only"]


def test_the_designs_name_their_method_with_its_citations() -> None:
    world = ppi_designs_bench.population_at_agreement(31)
    rng = np.random.default_rng(0)
    for design, method in (
        (ppi_designs_bench.DESIGNS[1], ppi_designs.HARD_PPI),
        (ppi_designs_bench.DESIGNS[2], ppi_designs.RECALIBRATED_PPI),
        (ppi_designs_bench.DESIGNS[5], ppi_designs.ACTIVE_PPI),
    ):
        estimate = ppi_designs.design_estimate(ppi_designs_bench.sampler(design, world)(rng))
        assert estimate["method"] == method.key
        assert estimate["citations"] == method.citations
        assert estimate["overall"]["estimate"]["method"] == method.key


def test_the_designs_cover_and_the_active_ones_are_narrower() -> None:
    """A cheap version of the designs' table: 150 replicates each, coverage within loose bounds
    of the nominal 95 % per category and overall, and the designs that use the probabilities
    narrower on average than the humans' alone at the same number of human pairs."""
    world = ppi_designs_bench.population_at_agreement(31)
    results = {
        design.name: ppi_designs_bench.run_design(design, world, 150, 7 + number)
        for number, design in enumerate(ppi_designs_bench.DESIGNS)
    }
    for name, result in results.items():
        for category in world.truths():
            assert result[category] >= 0.88, (name, category, result[category])
    humans = results["humans only"]["width"]
    assert results["active, allocated"]["width"] < results["recalibrated PPI"]["width"] < humans
    assert math.isclose(results["active"]["pairs"], 324, rel_tol=0.03)


def test_a_pilot_plans_each_design_from_its_recalibrated_probabilities() -> None:
    """An overconfident model (it reports q as 0.02 or 0.98 on every pair) is taken at its
    word by ``plan_against_uniform``, which then asks almost no humans; recalibrated on the
    pilot first, its probabilities are those of a model right on 80 % of the pairs and the plan
    asks more, still fewer than the humans alone."""
    rng = np.random.default_rng(11)
    population = 2000
    human = (rng.random(population) < 0.5).astype(int)
    right = rng.random(population) < 0.8
    scores = np.where(right == (human == 1), 0.98, 0.02)
    stratum = _uniform_stratum(scores, human, 200)
    targets = sampling.PlanTargets(category_half_width=0.05, half_width=0.05)
    plan = ppi_designs.pilot_plan([stratum], targets)
    assert plan is not None
    [row] = plan["per_category"]
    trusting = ppi_designs.plan_against_uniform({"a": scores}, 0.05)
    assert trusting["active"]["human_pairs"] < row["active"]
    assert row["active"] <= row["uniform"] < row["humans_only"]
    assert plan["overall"] == {name: row[name] for name in ppi_designs.DESIGNS}
    assert ppi_designs.pilot_plan([_uniform_stratum(scores, human, 2)], targets) is None
