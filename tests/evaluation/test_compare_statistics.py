"""The paired statistics of the leaderboard (evaluation/significance.py) against worked examples
by hand and independent computations: statsmodels' exact McNemar and Wilson interval, scipy's
paired bootstrap and Fisher test, and a bootstrap written out pair by pair."""

import random

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import proportion_confint

from evaluation.significance import (
    GroupingProcedure,
    exact_mcnemar,
    fisher_exact_p,
    holm_adjust,
    mcnemar_of,
    newcombe_difference_interval,
    paired_bootstrap_difference,
    rank_agreement,
    significance_groups,
    wilson_interval,
)


def test_it_computes_the_exact_mcnemar_p_value_of_a_worked_example():
    """b = 1, c = 6: p = 2 (C(7,0) + C(7,1)) / 2^7 = 16 / 128 = 0.125; no discordant pair: 1."""
    assert exact_mcnemar(1, 6) == pytest.approx(0.125)
    assert exact_mcnemar(6, 1) == pytest.approx(0.125)
    assert exact_mcnemar(0, 0) == 1.0
    # b = 0, c = 5: 2 / 32.
    assert exact_mcnemar(0, 5) == pytest.approx(2 / 32)


@pytest.mark.parametrize(
    ("both_right", "first_only", "second_only", "both_wrong"),
    [(10, 1, 6, 3), (40, 12, 3, 5), (0, 0, 9, 0), (5, 7, 7, 1), (100, 30, 45, 25), (3, 0, 0, 3)],
)
def test_it_agrees_with_statsmodels_exact_mcnemar(both_right, first_only, second_only, both_wrong):
    """From per-pair codes to the p-value: the same figure as statsmodels' mcnemar(exact=True)
    on the 2 x 2 table."""
    first = [1] * both_right + [1] * first_only + [0] * second_only + [0] * both_wrong
    second = [1] * both_right + [0] * first_only + [1] * second_only + [0] * both_wrong
    test = mcnemar_of(first, second)
    table = [[both_right, first_only], [second_only, both_wrong]]
    reference = mcnemar(table, exact=True).pvalue
    assert (test.first_only, test.second_only) == (first_only, second_only)
    assert test.p_value == pytest.approx(min(1.0, reference), abs=1e-12)


def test_it_leaves_pairs_either_model_left_out_out_of_mcnemar():
    """A tie left out (None) on either side removes the pair: only (1, 0) and (0, 1) count."""
    first = [1, 1, None, 0, 1, 0]
    second = [0, None, 1, 1, 0, 0]
    test = mcnemar_of(first, second)
    assert (test.first_only, test.second_only) == (2, 1)
    assert test.p_value == pytest.approx(mcnemar([[0, 2], [1, 1]], exact=True).pvalue)


def test_it_adjusts_p_values_as_the_holm_table_by_hand():
    """m = 5. Sorted: 0.001 x 5 = 0.005; 0.01 x 4 = 0.04; 0.02 x 3 = 0.06; 0.04 x 2 = 0.08;
    0.30 x 1 = 0.30. In the given order: 0.04, 0.30, 0.005, 0.08, 0.06."""
    adjusted = holm_adjust([0.01, 0.30, 0.001, 0.04, 0.02])
    assert adjusted == pytest.approx([0.04, 0.30, 0.005, 0.08, 0.06])


def test_it_keeps_holm_monotone_and_at_most_one():
    """Sorted: 0.03 x 3 = 0.09; 0.04 x 2 = 0.08 is raised to the 0.09 before it; 0.5 x 1 stays.
    0.6 x 3 would be 1.8: capped at 1, and the larger ones after it too."""
    assert holm_adjust([0.04, 0.03, 0.5]) == pytest.approx([0.09, 0.09, 0.5])
    assert holm_adjust([0.6, 0.7, 0.9]) == pytest.approx([1.0, 1.0, 1.0])
    assert holm_adjust([]) == []


def test_it_matches_scipys_paired_bootstrap():
    """Both models right or wrong on 0/1 pairs: the interval of mean(first) - mean(second)
    agrees with scipy.stats.bootstrap(paired=True, method='percentile') within Monte Carlo
    error, and the point difference is exact."""
    rng = random.Random(7)
    first = [1 if rng.random() < 0.72 else 0 for _ in range(300)]
    second = [a if rng.random() < 0.7 else 1 - a for a in first]
    ours = paired_bootstrap_difference(first, second, resamples=20000, seed=1)
    reference = stats.bootstrap(
        (np.array(first), np.array(second)),
        lambda a, b, axis=-1: a.mean(axis=axis) - b.mean(axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=20000,
        method="percentile",
        random_state=np.random.default_rng(2),
    )
    assert ours.difference == pytest.approx(np.mean(first) - np.mean(second))
    assert ours.ci_low == pytest.approx(reference.confidence_interval.low, abs=0.006)
    assert ours.ci_high == pytest.approx(reference.confidence_interval.high, abs=0.006)


def test_it_matches_a_bootstrap_drawn_pair_by_pair_when_ties_are_left_out():
    """With ties left out, the difference is over the pairs both decided; a bootstrap that
    draws those pairs one by one gives the same interval within Monte Carlo error."""
    rng = random.Random(3)
    codes = [None, 0, 1]
    first = [rng.choices(codes, weights=[1, 3, 6])[0] for _ in range(200)]
    second = [rng.choices(codes, weights=[1, 4, 5])[0] for _ in range(200)]
    both = [(a, b) for a, b in zip(first, second, strict=True) if a is not None and b is not None]
    draw = random.Random(11)
    differences = []
    for _ in range(8000):
        sample = [both[draw.randrange(len(both))] for _ in both]
        differences.append(sum(a - b for a, b in sample) / len(sample))
    low, high = np.quantile(differences, [0.025, 0.975])
    ours = paired_bootstrap_difference(first, second, resamples=20000, seed=5)
    assert ours.pairs == len(both)
    assert ours.difference == pytest.approx(sum(a - b for a, b in both) / len(both))
    assert ours.ci_low == pytest.approx(low, abs=0.01)
    assert ours.ci_high == pytest.approx(high, abs=0.01)


def test_it_gives_no_difference_without_a_pair_both_decided():
    empty = paired_bootstrap_difference([None, 1], [1, None], resamples=100)
    assert (empty.difference, empty.ci_low, empty.pairs) == (None, None, 0)


@pytest.mark.parametrize(("successes", "n"), [(81, 263), (0, 10), (10, 10), (3, 7), (500, 1000)])
def test_it_agrees_with_statsmodels_wilson_interval(successes, n):
    interval = wilson_interval(successes, n)
    reference = proportion_confint(successes, n, alpha=0.05, method="wilson")
    assert interval == pytest.approx(reference, abs=1e-9)
    assert wilson_interval(0, 0) is None


def test_it_reproduces_newcombes_worked_examples():
    """Newcombe (1998), Statistics in Medicine 17:873, Table II, method 10 (hybrid score)."""
    assert newcombe_difference_interval(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=5e-5)
    assert newcombe_difference_interval(9, 10, 3, 10) == pytest.approx((0.1705, 0.8090), abs=5e-5)
    assert newcombe_difference_interval(1, 2, 0, 0) is None


def test_it_computes_fishers_exact_test_from_the_hypergeometric():
    """3/4 right against 1/4: the tables as extreme as observed have probabilities
    C(4,3)C(4,1)/C(8,4) = 16/70 each way, plus C(4,4)C(4,0)/C(8,4) = 1/70 each way:
    p = 2 (16 + 1) / 70 = 34/70."""
    assert fisher_exact_p(3, 4, 1, 4) == pytest.approx(34 / 70)
    assert fisher_exact_p(3, 4, 1, 0) is None


def test_it_forms_significance_groups_from_holm_over_every_pair_of_models():
    """Holm over all six tests: d 0.0005 * 6 = 0.003, c 0.0015 * 5 = 0.0075, the two 0.01s
    * 4 and * 3 -> 0.04, c-d 0.3 * 2 = 0.6, b 0.5 -> 0.6. a leads with b (0.6); c and d are
    apart from a; c leads group 2, and d is not told apart from it (0.6)."""
    p = {
        ("a", "b"): 0.5,
        ("a", "c"): 0.0015,
        ("a", "d"): 0.0005,
        ("b", "c"): 0.01,
        ("b", "d"): 0.01,
        ("c", "d"): 0.3,
    }
    assert significance_groups(["a", "b", "c", "d"], p) == {"a": 1, "b": 1, "c": 2, "d": 2}
    # With alpha 0.001 nothing is significant after Holm: one group.
    assert set(significance_groups(["a", "b", "c", "d"], p, alpha=0.001).values()) == {1}
    # Holm over the tests against a alone gives c 0.0015 * 2 = 0.003, below 0.005; over all
    # pairs c's adjusted p-value is 0.0075, so at 0.005 c stays in a's group.
    assert significance_groups(["a", "b", "c", "d"], p, alpha=0.005)["c"] == 1


def test_it_measures_rank_agreement_and_lists_the_swaps():
    """Four models; on validated pairs b and c trade places and every other order holds.
    tau-b by hand: 6 pairs of models, 5 concordant and 1 discordant -> (5 - 1) / 6."""
    on_all = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}
    on_validated = {"a": 0.95, "b": 0.70, "c": 0.75, "d": 0.50}
    agreement = rank_agreement(on_all, on_validated)
    assert agreement.tau == pytest.approx(4 / 6)
    assert [(s.above_first, s.above_second) for s in agreement.swaps] == [("b", "c")]
    assert agreement.tau == pytest.approx(
        stats.kendalltau(list(on_all.values()), list(on_validated.values())).statistic
    )


def test_it_says_why_rank_agreement_is_undefined():
    single = rank_agreement({"a": 0.5}, {"a": 0.6})
    assert single.tau is None
    assert "fewer than two" in str(single.reason)
    flat = rank_agreement({"a": 0.5, "b": 0.5}, {"a": 0.6, "b": 0.7})
    assert flat.tau is None
    assert "same accuracy" in str(flat.reason)
    assert flat.swaps == ()  # a tie on one side is not a swap
    reversed_pair = rank_agreement({"a": 1.0, "b": 0.0}, {"a": 0.0, "b": 1.0})
    assert reversed_pair.tau == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("models", "family"),
    [
        (1, "no pair of models (1 model)"),
        (2, "the one pair of the 2 models"),
        (4, "all 6 pairs of the 4 models"),
    ],
)
def test_the_holm_family_is_worded_for_its_number_of_models(models: int, family: str) -> None:
    """Not "all 1 pairs of the 2 models": the words count what Holm adjusts over."""
    procedure = GroupingProcedure()
    assert procedure.pairs_of_models(models) == family
    assert family in procedure.words(models)
    assert procedure.comparisons(models) == models * (models - 1) // 2
