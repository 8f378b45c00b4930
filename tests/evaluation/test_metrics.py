"""Accuracy, ties, intervals and correlations against worked examples."""

import itertools
import math
import random

import numpy as np
import pytest
from scipy import stats

from evaluation.correlation import (
    DEGENERATE_REASON,
    bootstrap_over_models,
    correlations,
    fisher_interval,
    ndcg,
    permutation_p_value,
    rank_biased_overlap,
    ranking_agreement,
    rbo_of_scores,
    weighted_tau,
)
from evaluation.metrics import (
    accuracy_difference,
    accuracy_stats,
    accuracy_summary,
    outcome_of,
    position_stats,
)


def test_it_reports_ties_apart_from_accuracy():
    """6 right, 2 wrong, 2 ties, 1 unparsed: accuracy 6/8, tie rate 2/10, and the benchmark's
    ties-as-wrong figure 6/10 for comparison."""
    outcomes = ["correct"] * 6 + ["wrong"] * 2 + ["tie"] * 2 + ["unparsed"]
    stats = accuracy_stats(outcomes)
    assert (stats.n, stats.correct, stats.wrong, stats.ties, stats.unparsed) == (11, 6, 2, 2, 1)
    assert stats.accuracy == 0.75
    assert stats.tie_rate == 0.2
    assert stats.accuracy_ties_as_wrong == 0.6
    assert stats.ci_low is not None
    assert stats.ci_high is not None
    assert stats.ci_low < 0.75 < stats.ci_high
    assert stats.accuracy_ties_as_wrong_ci_low is not None
    assert stats.accuracy_ties_as_wrong_ci_high is not None
    assert stats.accuracy_ties_as_wrong_ci_low < 0.6 < stats.accuracy_ties_as_wrong_ci_high
    assert [outcome_of(1.0, 0.5), outcome_of(0.5, 1.0), outcome_of(1.0, 1.0)] == [
        "correct",
        "wrong",
        "tie",
    ]
    assert outcome_of(1.0, 0.99, tie_tolerance=0.05) == "tie"
    with pytest.raises(ValueError, match="unknown outcomes"):
        accuracy_stats(["right"])


def newcombe_method_4(right: int, n: int) -> tuple[float, float]:
    """Newcombe's closed form of the continuity-corrected score interval (1998, eqs. for
    method 4), written out independently of the scorer's code."""
    z, p = 1.959963984540054, right / n
    low = 2 * n * p + z * z - 1 - z * math.sqrt(z * z - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))
    high = 2 * n * p + z * z + 1 + z * math.sqrt(z * z + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))
    return (0.0 if right == 0 else low / (2 * (n + z * z))), (
        1.0 if right == n else high / (2 * (n + z * z))
    )


def test_it_gives_newcombes_continuity_corrected_wilson_interval():
    """Newcombe (1998), Statistics in Medicine 17:857, table I, method 4: 81/263 gives 0.2535
    to 0.3682, 0/20 gives 0 to 0.2005, 1/29 gives 0.0018 to 0.1963; and the closed form for
    every count up to 40 pairs. Unparsed replies stand beside and change nothing."""
    examples = {(81, 263): (0.2535, 0.3682), (0, 20): (0.0, 0.2005), (1, 29): (0.0018, 0.1963)}
    for (right, n), bounds in examples.items():
        outcomes = ["correct"] * right + ["wrong"] * (n - right) + ["unparsed"] * 3
        stats = accuracy_stats(outcomes)
        assert stats.ci_low is not None
        assert stats.ci_high is not None
        assert (round(stats.ci_low, 4), round(stats.ci_high, 4)) == bounds
        assert stats.interval == "wilson_cc"
    for n in range(1, 41):
        for right in range(n + 1):
            stats = accuracy_stats(["correct"] * right + ["wrong"] * (n - right))
            low, high = newcombe_method_4(right, n)
            assert stats.ci_low == pytest.approx(max(low, 0.0), abs=1e-12)
            assert stats.ci_high == pytest.approx(min(high, 1.0), abs=1e-12)
    perfect = accuracy_stats(["correct"] * 20)
    assert perfect.ci_high == 1.0
    assert perfect.ci_low == pytest.approx(0.7995, abs=1e-4)  # never [1, 1]
    nothing = accuracy_stats(["tie", "unparsed"])
    assert (nothing.accuracy, nothing.ci_low, nothing.tie_rate) == (None, None, 1.0)


def test_it_summarises_by_category_and_group():
    outcomes = ["correct", "wrong", "correct", "tie"]
    summary = accuracy_summary(
        outcomes,
        categories=["Art", "Art", "Society", "Society"],
        groups=["validated", "excluded", "validated", "validated"],
        group_by="validation.verdict",
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
    # Five models: Pearson keeps its Fisher interval, the rank correlations have none.
    assert pearson.ci_low is not None
    assert pearson.ci_high is not None
    assert pearson.ci_low < 0.8 < pearson.ci_high
    assert (spearman.ci_low, spearman.interval) == (None, None)
    assert spearman.reason is not None
    assert "5 models" in spearman.reason
    many = correlations(list(range(12)), [1, 0, 2, 3, 5, 4, 6, 7, 8, 9, 11, 10])
    assert all(c.interval == "fisher" and c.ci_low is not None for c in many)
    interval = fisher_interval(0.5, 50, "pearson")
    assert interval is not None
    assert (round(interval[0], 3), round(interval[1], 3)) == (0.257, 0.683)
    assert fisher_interval(0.5, 4, "kendall") is None
    with pytest.raises(ValueError, match="at least 3"):
        correlations([1, 2], [1, 2])


def test_it_gives_exact_permutation_p_values_for_few_models():
    """By hand: with 3 models in the same order, 2 of the 6 orders of y (1 2 3 and 3 2 1) are
    as extreme, p = 1/3 for every coefficient, never 0; with 4, 2 of 24 = 1/12; 1..5 against
    2,1,4,3,5 has Spearman 0.8, reached or passed in absolute value by 16 of 120 orders
    (sum d^2 <= 4: the order itself, 4 adjacent swaps, 3 pairs of disjoint adjacent swaps, and
    their 8 reverses)."""
    for result in correlations([0.61, 0.64, 0.70], [3.0, 4.0, 5.0]):
        assert result.p_value == pytest.approx(1 / 3)
        assert result.p_method == "exact permutation"
    assert permutation_p_value("kendall", [1, 2, 3, 4], [1, 2, 3, 4]) == pytest.approx(1 / 12)
    by_hand = sum(
        1
        for order in itertools.permutations([2, 1, 4, 3, 5])
        if abs(1 - 6 * sum((a - b) ** 2 for a, b in zip(order, range(1, 6), strict=True)) / 120)
        >= 0.8
    )
    assert by_hand == 16
    assert permutation_p_value("spearman", [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == 16 / 120
    # Without ties, scipy's exact Kendall test gives the same p-value.
    rng = random.Random(3)
    for n in (5, 7, 8):
        x, y = rng.sample(range(50), n), rng.sample(range(50), n)
        exact = stats.kendalltau(x, y, method="exact").pvalue
        assert permutation_p_value("kendall", x, y) == pytest.approx(exact)
    # A constant series has no correlation: no value, no p-value, and the reason.
    constant = correlations([0.7, 0.7, 0.7], [1.0, 2.0, 3.0])
    assert all(c.coefficient is None and c.p_value is None and c.reason for c in constant)


def tie_breakings(scores: list[float]) -> list[str]:
    """Every order of the items (named a, b, c...) ranked by ``scores``, highest first, with
    each tie broken every way it can be."""
    names = "abcdefghij"[: len(scores)]
    found = set()
    for order in itertools.permutations(range(len(scores))):
        if all(scores[i] >= scores[j] for i, j in itertools.pairwise(order)):
            found.add("".join(names[i] for i in order))
    return sorted(found)


def test_rbo_with_ties_on_both_sides_is_corsi_and_urbanos_rbo_a():
    """RBO^a is the mean RBO over every way of breaking the ties of both rankings: written out
    here with Webber's RBO of each pair of orders, and compared."""
    cases = [
        ([0.7, 0.6, 0.6, 0.6, 0.5, 0.4], [9.0, 7.0, 8.0, 6.0, 6.0, 1.0], 0.9),
        ([1.0, 1.0, 2.0], [1.0, 1.0, 2.0], 0.9),
        ([3.0, 3.0, 2.0, 2.0, 1.0], [5.0, 4.0, 4.0, 4.0, 1.0], 0.7),
    ]
    for x, y, p in cases:
        firsts, seconds = tie_breakings(x), tie_breakings(y)
        mean = np.mean([rank_biased_overlap(f, s, p) for f in firsts for s in seconds])
        assert rbo_of_scores(x, y, p) == pytest.approx(float(mean))
    # The same ties in the same places still score below 1: each may be broken either way.
    assert rbo_of_scores([1, 1, 2], [1, 1, 2]) < 1


def test_it_gives_rbo_with_ties_a_value_that_does_not_depend_on_names():
    """The hand-worked examples of rbo_of_scores; the value is the same whatever order the
    models come in; without ties it is Webber's RBO."""
    assert rbo_of_scores([3, 2, 2, 1], [4, 3, 2, 1], 0.5) == pytest.approx(0.9375)
    assert rbo_of_scores([2, 2, 1], [3, 2, 1], 0.5) == pytest.approx(0.75)
    broken = [rank_biased_overlap(first, "abcd", 0.5) for first in ("abcd", "acbd")]
    assert rbo_of_scores([3, 2, 2, 1], [4, 3, 2, 1], 0.5) == pytest.approx(sum(broken) / 2)
    x, y = [0.7, 0.6, 0.6, 0.6, 0.5, 0.4], [9.0, 7.0, 8.0, 6.0, 6.0, 1.0]
    value = rbo_of_scores(x, y)
    for order in itertools.permutations(range(6)):
        assert rbo_of_scores([x[i] for i in order], [y[i] for i in order]) == pytest.approx(value)
    assert rbo_of_scores([4, 3, 1, 2], [4, 3, 2, 1], 0.9) == pytest.approx(
        rank_biased_overlap("abcd", "abdc", 0.9)
    )


def test_it_never_shows_a_zero_width_interval():
    """Twelve models whose downstream values are all but one equal: most resamples leave RBO
    and NDCG constant; an interval of zero width is dropped with its reason, never shown."""
    accuracy = [0.5 + 0.01 * i for i in range(12)]
    results = ranking_agreement(accuracy, [1.0] * 12, resamples=300)
    for result in results:
        if result.ci_low is not None:
            assert result.ci_high is not None
            assert result.ci_high - result.ci_low > 0
        else:
            assert result.reason
    assert any(r.reason == DEGENERATE_REASON for r in results)


def test_it_gives_the_accuracy_with_ties_as_wrong_its_own_interval():
    """600 right, 200 wrong, 200 ties and 50 unparsed: the paper's figure is 600/1000 with the
    interval of 600 of 1000 judged pairs; the ties-excluded accuracy is 600/800 with the
    interval of 600 of 800; the unparsed replies are in neither."""
    outcomes = ["correct"] * 600 + ["wrong"] * 200 + ["tie"] * 200 + ["unparsed"] * 50
    stats = accuracy_stats(outcomes)
    assert stats.accuracy_ties_as_wrong == 0.6
    paper = accuracy_stats(["correct"] * 600 + ["wrong"] * 400)
    assert (stats.accuracy_ties_as_wrong_ci_low, stats.accuracy_ties_as_wrong_ci_high) == (
        paper.ci_low,
        paper.ci_high,
    )
    # At 1,000 pairs the corrected interval is the normal one, half a pair wider each side.
    half = 1.96 * math.sqrt(0.6 * 0.4 / 1000) + 1 / 2000
    assert paper.ci_low == pytest.approx(0.6 - half, abs=0.002)
    left_out = accuracy_stats(["correct"] * 600 + ["wrong"] * 200)
    assert (stats.ci_low, stats.ci_high) == (left_out.ci_low, left_out.ci_high)
    only_ties = accuracy_stats(["tie"] * 3)
    assert (only_ties.accuracy_ties_as_wrong_ci_low, only_ties.ci_low) == (0.0, None)
    assert only_ties.accuracy_ties_as_wrong_ci_high == pytest.approx(newcombe_method_4(0, 3)[1])


def test_it_computes_ndcg_as_in_the_textbook_example():
    """Six documents ranked with relevance 3, 2, 3, 0, 1, 2: DCG 6.861 against the ideal order's
    7.141. Among eight documents whose two last hold relevance 3 and 2, NDCG at 6 is
    6.861 / 8.740 = 0.785 (the worked example of Järvelin and Kekäläinen's measure as the
    textbooks give it)."""
    assert ndcg([6, 5, 4, 3, 2, 1], [3, 2, 3, 0, 1, 2]) == pytest.approx(6.861 / 7.141, abs=1e-3)
    assert ndcg(list(range(8, 0, -1)), [3, 2, 3, 0, 1, 2, 3, 2], k=6) == pytest.approx(
        0.785, abs=1e-3
    )
    assert ndcg([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not negative"):
        ndcg([1, 2], [1, -1])
    assert math.isnan(ndcg([1, 2], [0, 0]))


def test_it_gives_tied_items_in_ndcg_the_mean_of_their_orders():
    """Predicted 2, 1, 1 with gains 1, 2, 0: the two tied items share the discounts of ranks 2
    and 3, which is the mean of the NDCG of both orders (McSherry and Najork 2008)."""
    tied = ndcg([2, 1, 1], [1, 2, 0])
    orders = [ndcg([3, 2, 1], [1, 2, 0]), ndcg([3, 1, 2], [1, 2, 0])]
    assert tied == pytest.approx(sum(orders) / 2)
    ideal = 2 + 1 / math.log2(3)
    assert tied == pytest.approx((1 + 2 * (1 / math.log2(3) + 0.5) / 2) / ideal)


def test_it_computes_rank_biased_overlap_as_webber_defines_it():
    """Worked by hand from Webber, Moffat and Zobel (2010), eq. 32:
    a b c d / b a d c, p = 0.9: overlaps 0, 2, 2, 4 give 0.1/0.9 (0.81 + 2/3 0.729 + 0.6561)
    + 0.6561 = 0.8730; a b c / c b a, p = 0.5: overlaps 0, 1, 3 give 0.125 + 0.25 = 0.375."""
    assert rank_biased_overlap("abcd", "badc", 0.9) == pytest.approx(0.8730, abs=1e-4)
    assert rank_biased_overlap("abc", "cba", 0.5) == pytest.approx(0.375)
    assert rank_biased_overlap("abcd", "abcd", 0.7) == pytest.approx(1.0)
    assert rank_biased_overlap("abcd", "efgh", 0.7) == 0.0
    # Top-weighted: a swap at the top costs more than the same swap at the bottom.
    assert rank_biased_overlap("bacd", "abcd") < rank_biased_overlap("abdc", "abcd")
    assert rbo_of_scores([0.9, 0.8, 0.7, 0.6], [4, 3, 1, 2], 0.9) == pytest.approx(
        rank_biased_overlap([0, 1, 2, 3], [0, 1, 3, 2], 0.9)
    )
    with pytest.raises(ValueError, match="persistence"):
        rank_biased_overlap("ab", "ba", 1.0)


def vigna_weighted_tau(x, y):
    """Vigna's (2015) weighted tau from its definition, for values without ties: pairs weighted
    by the sum of 1 / (rank + 1) of their two items, ranks from 0 by decreasing value, and the
    mean of ranking by x and by y."""

    def one_way(ranking_by):
        order = sorted(range(len(x)), key=lambda i: -ranking_by[i])
        rank = {item: position for position, item in enumerate(order)}
        agree = total = 0.0
        for i, j in itertools.combinations(range(len(x)), 2):
            weight = 1 / (rank[i] + 1) + 1 / (rank[j] + 1)
            agree += weight * np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])
            total += weight
        return agree / total

    return (one_way(x) + one_way(y)) / 2


def test_it_computes_weighted_tau_as_vigna_defines_it():
    """Against the definition on random values, and against the example in scipy's
    documentation (x = 12 2 1 12 2, y = 1 4 7 1 0: -0.5669)."""
    rng = random.Random(4)
    for _ in range(5):
        x = rng.sample(range(100), 9)
        y = rng.sample(range(100), 9)
        assert weighted_tau(x, y) == pytest.approx(vigna_weighted_tau(x, y))
    assert weighted_tau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0]) == pytest.approx(-0.566949681536827)
    assert weighted_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)


def test_it_bootstraps_ranking_measures_over_models():
    """Each ranking measure comes with a percentile interval from resampling models; the same
    seed gives the same interval; NDCG is left out when a downstream value is negative."""
    rng = np.random.default_rng(0)
    accuracy = rng.uniform(0.5, 0.8, size=12)
    downstream = accuracy * 10 + rng.normal(0, 0.3, size=12)
    results = ranking_agreement(list(accuracy), list(downstream), resamples=500)
    assert [r.method for r in results] == ["ndcg", "rbo", "weighted_tau"]
    for result in results:
        assert result.interval == "bootstrap"
        assert result.p_value is None
        assert result.ci_low is not None
        assert result.ci_high is not None
        assert result.coefficient is not None
        assert result.ci_low <= result.coefficient <= result.ci_high
        assert result.ci_high <= 1.0
    again = ranking_agreement(list(accuracy), list(downstream), resamples=500)
    assert again == results
    shifted = ranking_agreement(list(accuracy), list(downstream - 100), resamples=0)
    assert [r.method for r in shifted] == ["rbo", "weighted_tau"]
    assert shifted[0].ci_low is None
    interval = bootstrap_over_models(
        lambda a, b: float(np.mean(b - a)), [0, 0, 0, 0], [1, 2, 3, 4], resamples=2000
    )
    assert interval is not None
    assert 1.0 <= interval[0] < 2.5 < interval[1] <= 4.0


def test_it_says_when_too_few_models_make_significance_impossible():
    """With 4 models the exact test's smallest p-value is 2 / 4! = 0.083 (the order and its
    reverse): nothing can be significant at 0.05, and a note says so. With 6 it is 2 / 720."""
    four = correlations([0.6, 0.7, 0.8, 0.9], [1.0, 2.0, 3.0, 4.0])
    for result in four:
        assert result.smallest_p == pytest.approx(2 / 24)
        assert result.p_value == pytest.approx(2 / 24)
        assert result.note is not None
        assert "can fall below 0.083" in result.note
    six = correlations([0.5, 0.6, 0.7, 0.8, 0.9, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert all(r.smallest_p == pytest.approx(2 / 720) and r.note is None for r in six)
    # Ties in the downstream values make more orders as extreme: the floor rises.
    tied = correlations([0.6, 0.7, 0.8, 0.9, 1.0], [1.0, 1.0, 2.0, 3.0, 4.0])
    assert tied[1].smallest_p is not None
    assert tied[1].smallest_p > 2 / 120


def test_spearmans_interval_uses_bonett_and_wrights_variance() -> None:
    """var(z) = (1 + r^2 / 2) / (n - 3) (Bonett and Wright 2000)."""
    half = stats.norm.ppf(0.975) * math.sqrt((1 + 0.9**2 / 2) / 17)
    interval = fisher_interval(0.9, 20, "spearman")
    assert interval is not None
    assert interval == pytest.approx(
        (math.tanh(math.atanh(0.9) - half), math.tanh(math.atanh(0.9) + half))
    )


def test_intervals_that_fall_short_at_this_many_models_are_marked_unreliable() -> None:
    """Kendall's Fisher interval below 40 models and a bootstrap over 15 models or fewer are
    shown but marked, with the reason; Pearson's and Spearman's are not."""
    rng = np.random.default_rng(3)
    for n, kendall_reliable in ((12, False), (45, True)):
        x = list(rng.normal(size=n))
        y = [value + rng.normal() for value in x]
        found = {r.method: r for r in correlations(x, y)}
        assert found["pearson"].reliable
        assert found["spearman"].reliable
        assert found["kendall"].reliable is kendall_reliable
        assert (found["kendall"].reason is None) is kendall_reliable
    for n, bootstrap_reliable in ((12, False), (16, True)):
        x = list(rng.normal(size=n))
        y = [abs(value + rng.normal()) for value in x]
        for result in ranking_agreement(x, y, resamples=200):
            if result.ci_low is not None:
                assert result.reliable is bootstrap_reliable
                assert ("not reliable" in (result.reason or "")) is not bootstrap_reliable
