"""Accuracy, ties, intervals and correlations against worked examples."""

import math

import pytest

from evaluation.metrics import (
    accuracy_difference,
    accuracy_stats,
    accuracy_summary,
    correlations,
    fisher_interval,
    outcome_of,
    position_stats,
)


def test_it_reports_ties_apart_from_accuracy():
    """6 right, 2 wrong, 2 ties, 1 unparsed: accuracy 6/8, tie rate 2/10, and the benchmark's
    ties-as-wrong figure 6/10 for comparison."""
    outcomes = ["correct"] * 6 + ["wrong"] * 2 + ["tie"] * 2 + ["unparsed"]
    stats = accuracy_stats(outcomes, resamples=500)
    assert (stats.n, stats.correct, stats.wrong, stats.ties, stats.unparsed) == (11, 6, 2, 2, 1)
    assert stats.accuracy == 0.75
    assert stats.tie_rate == 0.2
    assert stats.accuracy_ties_as_wrong == 0.6
    assert stats.ci_low is not None
    assert stats.ci_high is not None
    assert stats.ci_low < 0.75 < stats.ci_high
    assert [outcome_of(1.0, 0.5), outcome_of(0.5, 1.0), outcome_of(1.0, 1.0)] == [
        "correct",
        "wrong",
        "tie",
    ]
    assert outcome_of(1.0, 0.99, tie_tolerance=0.05) == "tie"
    with pytest.raises(ValueError, match="unknown outcomes"):
        accuracy_stats(["right"])


def test_it_bootstraps_an_interval_close_to_the_normal_one():
    """With 1000 pairs at 70% the percentile bootstrap matches p +- 1.96 sqrt(p(1-p)/n)."""
    stats = accuracy_stats(["correct"] * 700 + ["wrong"] * 300, resamples=4000, seed=1)
    half = 1.96 * math.sqrt(0.7 * 0.3 / 1000)
    assert stats.ci_low == pytest.approx(0.7 - half, abs=0.006)
    assert stats.ci_high == pytest.approx(0.7 + half, abs=0.006)
    assert accuracy_stats(["correct"] * 700 + ["wrong"] * 300, resamples=4000, seed=1) == stats
    perfect = accuracy_stats(["correct"] * 5)
    assert (perfect.ci_low, perfect.ci_high) == (1.0, 1.0)
    nothing = accuracy_stats(["tie", "unparsed"])
    assert (nothing.accuracy, nothing.ci_low, nothing.tie_rate) == (None, None, 1.0)


def test_it_summarises_by_category_and_group():
    outcomes = ["correct", "wrong", "correct", "tie"]
    summary = accuracy_summary(
        outcomes,
        categories=["Art", "Art", "Society", "Society"],
        groups=["validated", "excluded", "validated", "validated"],
        group_by="validation.verdict",
        resamples=0,
    )
    assert summary.by_category["Art"].accuracy == 0.5
    assert summary.by_category["Society"].ties == 1
    assert summary.by_group["validated"].accuracy == 1.0
    assert summary.by_group["excluded"].accuracy == 0.0
    assert summary.as_dict()["group_by"] == "validation.verdict"


def test_it_gives_the_difference_between_two_groups():
    difference = accuracy_difference(
        ["correct"] * 80 + ["wrong"] * 20, ["correct"] * 60 + ["wrong"] * 40
    )
    assert difference.difference == pytest.approx(0.2)
    assert difference.ci_low is not None
    assert difference.ci_high is not None
    assert difference.ci_low < 0.2 < difference.ci_high
    assert difference.ci_low > 0  # 80% vs 60% on 100 pairs each is a real difference
    assert accuracy_difference(["tie"], ["correct"]).difference is None


def test_it_measures_position_bias_and_consistency():
    pairs: list[list[tuple[str | None, str | None]]] = [
        [("A", "chosen"), ("B", "chosen")],  # consistent
        [("A", "chosen"), ("A", "rejected")],  # follows the position
        [("B", "rejected"), (None, None)],  # one reply unparsed: not counted for consistency
        [("A", "chosen")],  # one order only
    ]
    stats = position_stats(pairs)
    assert stats.verdicts == 6
    assert stats.first_position_share == pytest.approx(4 / 6)
    assert (stats.pairs_in_both_orders, stats.consistent, stats.consistency) == (2, 1, 0.5)


def test_it_correlates_with_worked_examples():
    """Ranks 1..5 against 2,1,4,3,5: Spearman 1 - 6*4/120 = 0.8, Kendall (8-2)/10 = 0.6;
    the Fisher interval of r = 0.5 with n = 50 is (0.257, 0.683)."""
    pearson, spearman, kendall = correlations([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    assert (pearson.method, spearman.method, kendall.method) == ("pearson", "spearman", "kendall")
    assert spearman.coefficient == pytest.approx(0.8)
    assert kendall.coefficient == pytest.approx(0.6)
    assert pearson.coefficient == pytest.approx(0.8)
    assert spearman.ci_low is not None
    assert spearman.ci_high is not None
    assert spearman.ci_low < 0.8 < spearman.ci_high
    assert kendall.ci_low is not None  # n - 4 = 1
    interval = fisher_interval(0.5, 50, "pearson")
    assert interval is not None
    assert (round(interval[0], 3), round(interval[1], 3)) == (0.257, 0.683)
    assert fisher_interval(0.5, 4, "kendall") is None
    with pytest.raises(ValueError, match="at least 3"):
        correlations([1, 2], [1, 2])
