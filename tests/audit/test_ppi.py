"""Prediction-powered inference (audit/ppi.py) against worked examples, and a cheap version of
bench/ppi_coverage.py: the intervals cover the truth whatever the model's accuracy and bias."""

import math

import pandas as pd
import pytest

from bench import ppi_coverage
from prb_annotate.audit import ppi, sampling
from prb_annotate.audit.ppi import AgreementTable, PPIStratum

# 100 decided sampled pairs of a category of 1,000, the model on all 1,000 (520 validated).
TABLE = AgreementTable(both_validated=40, human_only=5, model_only=10, neither=45)
STRATUM = PPIStratum("a", population=1000, model_pairs=1000, model_validated=520, sample=TABLE)


def test_it_tunes_lambda_on_the_table_with_a_pseudo_pair_per_cell() -> None:
    """Shrunk table 41 / 6 / 11 / 46 of 104: mean y 47/104, mean f 52/104, so
    S_yf = 104/103 (41/104 - 47/104 * 1/2) and S_f^2 = 104/103 * 1/4: lambda = 70/104."""
    assert ppi.tuned_lambda(TABLE) == pytest.approx(70 / 104)
    moments = ppi.moments(TABLE, 1.0)
    assert moments is not None
    var_y = 104 / 103 * (47 / 104) * (57 / 104)
    assert moments.var_y == pytest.approx(var_y)
    residual = var_y - 2 * (70 / 104) * (104 / 103 * 17.5 / 104) + (70 / 104) ** 2 * (26 / 103)
    assert ppi.residual_share(TABLE) == pytest.approx(residual / var_y)


def test_it_corrects_the_humans_share_by_the_models_bias_on_the_sample() -> None:
    """theta = 0.45 - lambda (0.50 - 0.52); the interval is Wilson's at p q / V with
    V / S^2 = (1/100 - 1/1000) r (the model answered every pair), with the humans-only
    estimate's continuity correction of half a pair of the 100."""
    row = ppi.stratum_estimate(STRATUM)
    assert row["ppi"]["share"] == pytest.approx(0.45 + 70 / 104 * 0.02)
    r = ppi.residual_share(TABLE)
    size = (999 / 1000) / ((1 / 100 - 1 / 1000) * r)
    assert row["effective_size"] == pytest.approx(size)
    low, high = sampling.wilson(row["ppi"]["share"], size, correction=1 / 200)
    assert (row["ppi"]["ci_low"], row["ppi"]["ci_high"]) == pytest.approx((low, high))
    # The humans-only estimate is the planned sample's, the model-only share is marked biased.
    assert row["humans_only"] == sampling.category_estimate(45, 100, 1000)
    assert row["model_only"] == {"share": 0.52, "biased": True}
    # Worth: the humans-only sample with the same variance, n (N - 1) / (N - n) = size.
    worth = row["worth"]
    assert worth * 999 / (1000 - worth) == pytest.approx(size)
    assert worth > 100


def test_a_useless_model_leaves_the_humans_estimate() -> None:
    """A model independent of the humans: lambda 0, the estimate and interval the humans'."""
    table = AgreementTable(both_validated=20, human_only=20, model_only=30, neither=30)
    stratum = PPIStratum("a", 500, 500, 250, table)
    row = ppi.stratum_estimate(stratum)
    assert row["lambda"] == 0.0
    humans = sampling.category_estimate(40, 100, 500)
    # The same figures; only the name of the method that produced them differs.
    assert row["ppi"] == {**humans, "method": ppi.PPI_METHOD}
    assert row["worth"] == pytest.approx(100)


@pytest.mark.parametrize("verdict", [0, 1])
def test_a_model_with_one_verdict_for_every_pair_gives_exactly_the_humans_interval(
    verdict: int,
) -> None:
    """A model that validates (or excludes) every pair carries no information: with a pseudo-pair
    per cell its table would show a variance and a correlation it does not have (the interval
    came out 1 to 4 % narrower than the humans'); it gets lambda 0 and the humans' interval."""
    validated, sample = 45, 100
    table = (
        AgreementTable(both_validated=validated, model_only=sample - validated)
        if verdict
        else AgreementTable(human_only=validated, neither=sample - validated)
    )
    stratum = PPIStratum("a", 1000, 1000, 1000 * verdict, table)
    assert ppi.moments(table, 1.0) is not None
    assert ppi.tuned_lambda(table) == 0.0
    assert ppi.residual_share(table) == 1.0
    row = ppi.stratum_estimate(stratum)

    def figures(estimate: dict) -> dict:  # the numbers, not the name of the method
        return {key: value for key, value in estimate.items() if key != "method"}

    assert figures(row["ppi"]) == figures(sampling.category_estimate(validated, sample, 1000))
    assert figures(row["ppi"]) == figures(row["humans_only"])


def test_the_model_on_a_superset_pays_the_first_phase_variance() -> None:
    """With M < N the factor is (1/M - 1/N) + (1/n - 1/M) r: a perfect model on 400 of 1,000
    pairs is worth a humans-only sample of 400."""
    assert ppi.variance_factor(100, 400, 1000, 0.0) == pytest.approx(1 / 400 - 1 / 1000)
    size = ppi.effective_size(100, 400, 1000, 0.0)
    assert ppi.human_pairs_worth(size, 1000) == pytest.approx(400)
    # r = 1 is the humans-only effective size n (N - 1) / (N - n).
    assert ppi.effective_size(100, 400, 1000, 1.0) == pytest.approx(
        sampling.effective_size(100, 1000)
    )


def test_the_overall_estimate_weighs_the_categories_by_size() -> None:
    other = PPIStratum("b", 3000, 3000, 2500, AgreementTable(70, 5, 10, 15))
    found = ppi.ppi_estimate([STRATUM, other])
    rows = found["per_category"]
    share = 0.25 * rows[0]["ppi"]["share"] + 0.75 * rows[1]["ppi"]["share"]
    assert found["overall"]["ppi"]["share"] == pytest.approx(share)
    assert found["overall"]["model_only"]["share"] == pytest.approx(
        0.25 * 0.52 + 0.75 * 2500 / 3000
    )
    assert found["overall"]["ppi"]["half_width"] < found["overall"]["humans_only"]["half_width"]
    assert 200 < found["overall"]["worth"] <= 4000


def test_a_category_without_a_decided_pair_leaves_the_overall_open() -> None:
    empty = PPIStratum("b", 100, 100, 50, AgreementTable())
    found = ppi.ppi_estimate([STRATUM, empty])
    assert found["per_category"][1]["ppi"]["share"] is None
    assert found["overall"]["ppi"]["share"] is None


def test_the_planner_sizes_with_the_interval_it_reports() -> None:
    """Without the model the size is the planned sample's own (Wilson with continuity
    correction at the FPC-effective size: 337 of 2,000 at ±5 points, p = 0.5, where Cochran's
    normal size is 323). With a model leaving half the variance, the size is the smallest whose
    reported half-width reaches the target: one pair fewer does not."""
    assert ppi.humans_needed(2000, 0.05, 0.5) == sampling.category_sample_size(2000, 0.05, 0.5)
    assert ppi.humans_needed(2000, 0.05, 0.5) == 337
    helped = ppi.humans_needed(2000, 0.05, 0.5, residual=0.5)
    assert helped is not None
    assert helped < 337
    assert ppi.reported_half_width(0.5, helped, 2000, 0.5) <= 0.05
    assert ppi.reported_half_width(0.5, helped - 1, 2000, 0.5) > 0.05
    # The normal approximation with n0 r in place of n0 is a little short of the reported width.
    n0 = sampling.cochran_n0(0.05, 0.5) * 0.5
    assert helped >= math.ceil(sampling.fpc_size(n0, 2000))
    plan = ppi.plan_with_model({"a": 2000, "b": 300}, 0.05, {"a": 0.5, "b": 0.5}, {"a": 0.5})
    assert plan["per_category"][0]["with_model"] == helped
    b = plan["per_category"][1]
    assert b["with_model"] == b["humans_only"] == sampling.category_sample_size(300, 0.05, 0.5)
    assert plan["humans_only"] == 337 + b["humans_only"]


@pytest.mark.parametrize("half_width", [0.03, 0.05, 0.1])
def test_an_overall_target_is_sized_with_the_reported_interval(half_width: float) -> None:
    """A model that agrees on half the pairs at p = 0.5 leaves all the variance (r = 1): it saves
    no pair, the plan is the humans-only one. A better model saves pairs, and the plan it gives
    reaches the target as the estimate reports it, one pair fewer does not."""
    populations = {"a": 300, "b": 500, "c": 800}
    targets = sampling.PlanTargets(half_width=half_width)
    useless = ppi.plan_for_targets(populations, targets, 3, agreement=0.5)
    assert useless["residual_share"] == pytest.approx(1.0)
    assert useless["with_model"] == useless["humans_only"]
    helped = ppi.plan_for_targets(populations, targets, 3, agreement=0.9)
    assert helped["with_model"] < helped["humans_only"]
    sizes = {row["category"]: row["with_model"] for row in helped["per_category"]}
    residual = helped["residual_share"]
    reached = ppi.expected_overall_half_width(populations, sizes, 0.5, residual, targets)
    assert reached <= half_width
    fewer = sampling.proportional_allocation(populations, sum(sizes.values()) - 1)
    if sum(fewer.values()) < sum(sizes.values()):
        short = ppi.expected_overall_half_width(populations, fewer, 0.5, residual, targets)
        assert short > half_width


def test_a_model_on_too_few_pairs_cannot_reach_the_target() -> None:
    """The first phase's variance (1/M - 1/N) alone exceeds the target: no human sample can."""
    assert ppi.humans_needed(2000, 0.02, 0.5, residual=0.0, model_pairs=100) is None


def test_agreement_gives_the_residual_share() -> None:
    """Errors split evenly at p = 0.5: agreement a gives rho = 2a - 1, r = 1 - rho^2."""
    assert ppi.residual_from_agreement(0.9, 0.5) == pytest.approx(1 - 0.8**2)
    assert ppi.residual_from_agreement(0.5, 0.5) == 1.0
    with pytest.raises(sampling.PlanError, match="model_agreement"):
        ppi.residual_from_agreement(1.5, 0.5)


def test_the_model_validates_a_pair_on_preference_and_chosen_in_both_orders() -> None:
    rows = [
        (1, "rubric_fit", "A", "chosen"),
        (1, "rubric_fit", "B", "chosen"),
        (1, "differentiator", "A", "preference"),
        (1, "differentiator", "B", "preference"),
        (2, "rubric_fit", "A", "chosen"),
        (2, "rubric_fit", "B", "rejected"),  # followed the position: no answer
        (2, "differentiator", "A", "preference"),
        (2, "differentiator", "B", "preference"),
        (3, "rubric_fit", "A", "chosen"),
        (3, "rubric_fit", "B", "chosen"),
        (3, "differentiator", "A", "both"),
        (3, "differentiator", "B", "both"),
    ]
    frame = pd.DataFrame(rows, columns=["pair_id", "question", "chosen_position", "answer"])
    assert ppi.model_verdicts(frame) == {1: 1, 2: 0, 3: 0}


def test_the_intervals_cover_whatever_the_models_accuracy_and_bias() -> None:
    """A cheap bench/ppi_coverage.py: 300 replicates of the most and least accurate models,
    biased both ways. At 300 replicates a 95 % interval's coverage count has a standard
    deviation of 1.3 points; 0.91 is three of them below."""
    for agreement in (0.6, 0.95):
        for bias in ("up", "down"):
            setting = ppi_coverage.Setting(agreement, bias)
            result = ppi_coverage.run_setting(setting, 300, seed=7)
            for name, row in result.items():
                assert row["ppi"] >= 0.91, (setting, name, row)
                # On average never meaningfully wider than the humans alone.
                assert row["ppi_width"] <= 1.02 * row["humans_width"], (setting, name)
            if agreement == 0.95:
                assert result["overall"]["ppi_width"] < 0.75 * result["overall"]["humans_width"]
