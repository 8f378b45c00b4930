"""Comparing reward models on the same pairs: paired tests, intervals and rank agreement.

Pure functions over counts and 0/1 outcomes (numpy and scipy, no torch), so the web process
can compute a leaderboard from stored pair scores. Each model's result on a pair is coded as
``1`` (right), ``0`` (wrong) or ``None`` (left out of its accuracy: a tie when ties are left
out, a judge reply that named no answer).

- :func:`wilson_interval`: the score interval of one proportion (Wilson 1927), and
  :func:`corrected_wilson_interval`, the same with a continuity correction (Newcombe 1998,
  method 4): the interval every reported accuracy carries, since it keeps 95 % coverage at a
  few dozen pairs where the plain one does not.
- :func:`exact_mcnemar`: two models on the same pairs, the exact binomial test on the pairs
  where exactly one of them is right (McNemar 1947, exact form).
- :func:`paired_bootstrap_difference`: the difference of two accuracies with a percentile
  interval resampling the pairs; no longer reported (it is [0, 0] without a discordant pair),
  kept for the bench that measures it beside Tango's interval (:mod:`evaluation.paired`).
- :func:`holm_adjust`: Holm's step-down adjustment of a family of p-values (Holm 1979), and
  :func:`significance_groups` with :class:`GroupingProcedure`: Holm over every pair of models.
- :func:`newcombe_difference_interval` and :func:`fisher_exact_p`: one model's accuracy on two
  independent sets of pairs (validated against excluded).
- :func:`rank_agreement`: Kendall's tau between two rankings of the same models, and the pairs
  of models that swap places.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

Code = int | None
# A model's codes on a run of pairs: a sequence of 1 / 0 / None, or an array from as_codes.
Codes = Sequence[Code] | np.ndarray
RESAMPLES = 2000
LEFT_OUT = -1


def as_codes(codes: Codes) -> np.ndarray:
    """Codes as a small integer array, ``-1`` for a pair left out (arrays pass through)."""
    if isinstance(codes, np.ndarray):
        return codes
    return np.array([LEFT_OUT if code is None else code for code in codes], dtype=np.int8)


def discordant_counts(first: Codes, second: Codes) -> tuple[int, int, int]:
    """Pairs only the first got right, only the second got right, and both decided."""
    a, b = as_codes(first), as_codes(second)
    if a.shape != b.shape:
        raise ValueError("both models need one code per pair")
    both = (a != LEFT_OUT) & (b != LEFT_OUT)
    return (
        int(np.sum(both & (a == 1) & (b == 0))),
        int(np.sum(both & (a == 0) & (b == 1))),
        int(np.sum(both)),
    )


def z_value(confidence: float) -> float:
    """The two-sided normal quantile for ``confidence`` (1.960 for 0.95)."""
    return float(stats.norm.ppf(0.5 + confidence / 2))


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson's score interval for ``successes / n``; ``None`` when ``n`` is 0.

    Newcombe (1998), Statistics in Medicine 17:857, example 81/263: 0.2553 to 0.3662.

    >>> [round(bound, 4) for bound in wilson_interval(81, 263)]
    [0.2553, 0.3662]
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n ({n}), not {successes}")
    z = z_value(confidence)
    share = successes / n
    centre = share + z * z / (2 * n)
    spread = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return max(0.0, (centre - spread) / denominator), min(1.0, (centre + spread) / denominator)


def wilson_bounds(share: float, size: float, z: float) -> tuple[float, float]:
    """The two roots of Wilson's score equation ``(share - pi)^2 = z^2 pi (1 - pi) / size`` for
    a share in [0, 1] at a (possibly effective, non-integer) positive size."""
    denominator = 1 + z * z / size
    centre = (share + z * z / (2 * size)) / denominator
    spread = z * math.sqrt(share * (1 - share) / size + z * z / (4 * size * size)) / denominator
    return max(0.0, centre - spread), min(1.0, centre + spread)


def corrected_wilson(
    share: float, size: float, correction: float, confidence: float = 0.95
) -> tuple[float, float]:
    """Wilson's interval with a continuity correction: the lower bound solves the score
    equation at ``share - correction``, the upper at ``share + correction``, each clipped to
    [0, 1] (a share of 0 has the lower bound 0, a share of 1 the upper bound 1).

    With ``size = n`` and ``correction = 1 / (2 n)`` this is Newcombe's method 4; the sampling
    estimate passes the size after the finite-population correction and the same half step
    ``1 / (2 n)`` of the sample share. The outcome is discrete, so the half step is what keeps
    the coverage at its level where the plain interval dips (0.917 at 20 pairs).
    """
    z = z_value(confidence)
    below, above = share - correction, share + correction
    low = 0.0 if below <= 0 else wilson_bounds(below, size, z)[0]
    high = 1.0 if above >= 1 else wilson_bounds(above, size, z)[1]
    return low, high


def corrected_wilson_interval(
    successes: int | float, n: int | float, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Wilson's score interval with continuity correction for ``successes / n`` (Newcombe 1998,
    Statistics in Medicine 17:857, method 4); ``None`` when ``n`` is 0.

    Its exact coverage at 20 pairs is at least 0.958 for every accuracy from 0.5 to 0.95
    (the plain interval's falls to 0.917), and 20 right of 20 gives [0.800, 1], never [1, 1].
    The paper's examples: 81/263 gives 0.2535 to 0.3682, 0/20 gives 0 to 0.2005.

    >>> [round(bound, 4) for bound in corrected_wilson_interval(81, 263)]
    [0.2535, 0.3682]
    >>> [round(bound, 4) for bound in corrected_wilson_interval(0, 20)]
    [0.0, 0.2005]
    """
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be between 0 and n ({n}), not {successes}")
    return corrected_wilson(successes / n, n, 1 / (2 * n), confidence)


@dataclass(frozen=True)
class McNemar:
    """``first_only``: pairs only the first model got right; ``second_only``: only the second;
    ``p_value``: the exact two-sided p-value (1 when no pair is discordant)."""

    first_only: int
    second_only: int
    p_value: float

    @property
    def discordant(self) -> int:
        return self.first_only + self.second_only


def exact_mcnemar(first_only: int, second_only: int) -> float:
    """Exact two-sided McNemar p-value: ``2 P(X <= min(b, c))`` for ``X ~ Binomial(b + c, 1/2)``,
    at most 1. Concordant pairs (both right, both wrong) carry no information on which model is
    better and do not enter.

    Worked by hand: b = 1, c = 6, so 7 discordant pairs and
    p = 2 (C(7,0) + C(7,1)) / 2^7 = 2 * 8 / 128 = 0.125.

    >>> exact_mcnemar(1, 6)
    0.125
    """
    if first_only < 0 or second_only < 0:
        raise ValueError("counts of discordant pairs cannot be negative")
    discordant = first_only + second_only
    if discordant == 0:
        return 1.0
    tail = float(stats.binom.cdf(min(first_only, second_only), discordant, 0.5))
    return min(1.0, 2 * tail)


def mcnemar_of(first: Codes, second: Codes) -> McNemar:
    """The exact McNemar test of two models' codes on the same pairs; a pair either model left
    out (``None``) does not enter."""
    first_only, second_only, _ = discordant_counts(first, second)
    return McNemar(first_only, second_only, exact_mcnemar(first_only, second_only))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    The smallest of m p-values is multiplied by m, the next by m - 1, and so on; each adjusted
    value is at least the one before it in that order, and at most 1. Rejecting where the
    adjusted value is below alpha controls the family-wise error rate at alpha.

    By hand, p = 0.01, 0.04, 0.03, 0.005: sorted 0.005 x 4 = 0.02, 0.01 x 3 = 0.03,
    0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> raised to 0.06.

    >>> [round(p, 4) for p in holm_adjust([0.01, 0.04, 0.03, 0.005])]
    [0.03, 0.06, 0.06, 0.02]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda index: p_values[index])
    adjusted = [0.0] * m
    running = 0.0
    for step, index in enumerate(order):
        running = max(running, min(1.0, (m - step) * p_values[index]))
        adjusted[index] = running
    return adjusted


def accuracy_of(codes: Codes) -> float | None:
    """Share of right answers among the pairs not left out; ``None`` when there is none."""
    array = as_codes(codes)
    decided = int(np.sum(array != LEFT_OUT))
    return int(np.sum(array == 1)) / decided if decided else None


@dataclass(frozen=True)
class PairedDifference:
    """``difference``: accuracy of the first minus the second on the ``pairs`` both decided."""

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    pairs: int


def paired_bootstrap_difference(
    first: Codes,
    second: Codes,
    *,
    resamples: int = RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Accuracy of ``first`` minus accuracy of ``second`` on the pairs neither left out, with a
    percentile bootstrap interval that resamples those pairs (both models' results on a pair
    travel together): the same pairs the McNemar test reads.

    On those pairs the difference is ``(b - c) / n`` (``b``: pairs only the first got right,
    ``c``: only the second), so it depends on a resample only through how many of its pairs
    fall in each of the four joint states; drawing those four counts from a multinomial is the
    same bootstrap as drawing pairs, at a fraction of the cost.

    >>> paired_bootstrap_difference([1, 1, 0, 1, None], [1, 0, 0, 0, 1], resamples=0)
    PairedDifference(difference=0.5, ci_low=None, ci_high=None, pairs=4)
    """
    first_only, second_only, n = discordant_counts(first, second)
    if not n:
        return PairedDifference(None, None, None, 0)
    point = (first_only - second_only) / n
    if resamples <= 0:
        return PairedDifference(point, None, None, n)
    shares = np.array([first_only, second_only, n - first_only - second_only]) / n
    draws = np.random.default_rng(seed).multinomial(n, shares, size=resamples)
    differences = (draws[:, 0] - draws[:, 1]) / n
    tail = (1 - confidence) / 2
    low, high = np.quantile(differences, [tail, 1 - tail])
    return PairedDifference(point, float(low), float(high), n)


@dataclass(frozen=True)
class TwoProportions:
    """One model on two independent sets of pairs: ``first`` minus ``second`` accuracy, its
    Newcombe interval and Fisher's exact p-value (``None`` when a set is empty)."""

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None


def newcombe_difference_interval(
    successes_1: int, n_1: int, successes_2: int, n_2: int, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval for ``p1 - p2`` of two independent proportions
    (Newcombe 1998, Statistics in Medicine 17:873, method 10), built from each Wilson interval:

        L = d - sqrt((p1 - l1)^2 + (u2 - p2)^2),  U = d + sqrt((u1 - p1)^2 + (p2 - l2)^2)

    The paper's examples: 56/70 - 48/80 gives 0.0524 to 0.3339, 9/10 - 3/10 gives 0.1705 to
    0.8090.

    >>> [round(bound, 4) for bound in newcombe_difference_interval(56, 70, 48, 80)]
    [0.0524, 0.3339]
    >>> [round(bound, 4) for bound in newcombe_difference_interval(9, 10, 3, 10)]
    [0.1705, 0.809]
    """
    first = wilson_interval(successes_1, n_1, confidence)
    second = wilson_interval(successes_2, n_2, confidence)
    if first is None or second is None:
        return None
    p1, p2 = successes_1 / n_1, successes_2 / n_2
    (l1, u1), (l2, u2) = first, second
    difference = p1 - p2
    low = difference - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = difference + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return low, high


def fisher_exact_p(successes_1: int, n_1: int, successes_2: int, n_2: int) -> float | None:
    """Fisher's exact two-sided p-value for the 2 x 2 table of right and wrong in two
    independent sets; ``None`` when a set is empty."""
    if n_1 <= 0 or n_2 <= 0:
        return None
    table = [[successes_1, n_1 - successes_1], [successes_2, n_2 - successes_2]]
    return float(stats.fisher_exact(table).pvalue)


# The interval and the test of ``two_proportions``, as column headers name them.
TWO_PROPORTIONS_NAMES = {"interval": "Newcombe", "test": "Fisher"}


def two_proportions(
    successes_1: int, n_1: int, successes_2: int, n_2: int, confidence: float = 0.95
) -> TwoProportions:
    interval = newcombe_difference_interval(successes_1, n_1, successes_2, n_2, confidence)
    if interval is None:
        return TwoProportions(None, None, None, None)
    return TwoProportions(
        difference=successes_1 / n_1 - successes_2 / n_2,
        ci_low=interval[0],
        ci_high=interval[1],
        p_value=fisher_exact_p(successes_1, n_1, successes_2, n_2),
    )


@dataclass(frozen=True)
class GroupingProcedure:
    """How significance groups are formed, and the words that say so: every page, file and
    paper that names a group words it from here, so the words are the test that was run.

    Every pair of models is tested (exact McNemar) and the whole family is Holm-adjusted at
    once. Holm over all pairs holds the family-wise error at ``alpha`` whatever the models'
    true accuracies, so with five equal models the chance that any is put outside group 1 is
    at most ``alpha``. Holm over the tests against the observed best did not: that best is
    chosen from the same data, and the error was 0.06 to 0.08 with 100 to 500 pairs
    (``bench/coverage_bench.py``, docs/evaluation.md table 5a)."""

    alpha: float = 0.05
    key: str = "all-pairs-holm"

    @staticmethod
    def comparisons(models: int) -> int:
        return models * (models - 1) // 2

    def pairs_of_models(self, models: int) -> str:
        """The family Holm adjusts over, in words: "all 3 pairs of the 3 models"."""
        if models == 2:
            return "the one pair of the 2 models"
        if models < 2:
            return f"no pair of models ({models} model{'' if models == 1 else 's'})"
        return f"all {self.comparisons(models)} pairs of the {models} models"

    def words(self, models: int) -> str:
        """What a group is, for ``models`` models."""
        return (
            f"group 1 is #1 and every model the exact McNemar test does not tell apart from it, "
            f"Holm-adjusted over {self.pairs_of_models(models)} "
            f"(family-wise error at most {self.alpha:g}); the next group is led by the best "
            f"model outside it, and so on"
        )

    def tied_words(self) -> str:
        """What being in #1's group means, in a few words."""
        return f"not told apart from #1 (McNemar, Holm over all pairs, p >= {self.alpha:g})"

    def strictest_level(self, models: int) -> float:
        """The level the first step of Holm tests at: ``alpha`` over the number of pairs."""
        return self.alpha / max(1, self.comparisons(models))


def all_pairs_holm(p_values: Mapping[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """Holm-adjusted p-values of every test in ``p_values``, adjusted as one family."""
    keys = list(p_values)
    return dict(zip(keys, holm_adjust([p_values[key] for key in keys]), strict=True))


def significance_groups(
    order: Sequence[str], p_values: Mapping[tuple[str, str], float], alpha: float = 0.05
) -> dict[str, int]:
    """Groups of models the tests do not tell apart from a leader, best first.

    ``order`` lists the models best first; ``p_values[(leader, other)]`` is the raw p-value of
    the test of ``other`` against ``leader``, for every pair with ``leader`` above ``other``.
    All of them are Holm-adjusted as one family (:class:`GroupingProcedure`). Group 1 is the
    best model and every model whose adjusted p-value against it is not below ``alpha``.
    Group 2 is led by the best model outside group 1 and holds those still unplaced that are
    not told apart from it, and so on.

    By hand: six tests, sorted 0.0001 x 6 = 0.0006, 0.001 x 5 = 0.005, 0.002 x 4 = 0.008,
    0.3 x 3 = 0.9, then 1: a is apart from c and d, c leads group 2 with d (0.9).

    >>> p = {("a", "b"): 0.5, ("a", "c"): 0.001, ("a", "d"): 0.0001, ("b", "c"): 0.6,
    ...      ("b", "d"): 0.002, ("c", "d"): 0.3}
    >>> significance_groups(["a", "b", "c", "d"], p)
    {'a': 1, 'b': 1, 'c': 2, 'd': 2}
    """
    adjusted = all_pairs_holm(p_values)
    groups: dict[str, int] = {}
    remaining = list(order)
    number = 0
    while remaining:
        number += 1
        leader, others = remaining[0], remaining[1:]
        groups[leader] = number
        for other in others:
            if adjusted[(leader, other)] >= alpha:
                groups[other] = number
        remaining = [model for model in remaining if model not in groups]
    return groups


@dataclass(frozen=True)
class Swap:
    """Two models in a different order on two rankings: ``above_first`` ranks above
    ``above_second`` on the first ranking and below it on the second."""

    above_first: str
    above_second: str


@dataclass(frozen=True)
class RankAgreement:
    models: int
    tau: float | None
    reason: str | None
    swaps: tuple[Swap, ...]


def rank_agreement(
    first: Mapping[str, float | None], second: Mapping[str, float | None]
) -> RankAgreement:
    """Kendall's tau-b between two scorings of the same models (accuracy on all pairs and on
    validated pairs, say), and the pairs of models whose order reverses: strictly above on one,
    strictly below on the other (a tie on either side is not a swap). Models without a value on
    either side are left out. Swaps are listed by the first ranking's order.

    >>> agreement = rank_agreement({"a": 0.8, "b": 0.7, "c": 0.6}, {"a": 0.7, "b": 0.8, "c": 0.5})
    >>> round(agreement.tau, 3), agreement.swaps
    (0.333, (Swap(above_first='a', above_second='b'),))
    """
    models = [m for m in first if first[m] is not None and second.get(m) is not None]
    x = [float(first[m]) for m in models]  # type: ignore[arg-type]  # None filtered out above
    y = [float(second[m]) for m in models]  # type: ignore[arg-type]
    ranked = sorted(range(len(models)), key=lambda i: (-x[i], models[i]))
    swaps = tuple(
        Swap(models[i], models[j])
        for position, i in enumerate(ranked)
        for j in ranked[position + 1 :]
        if x[i] > x[j] and y[i] < y[j]
    )
    if len(models) < 2:
        return RankAgreement(len(models), None, "fewer than two models to rank", swaps)
    if len(set(x)) == 1 or len(set(y)) == 1:
        return RankAgreement(len(models), None, "every model has the same accuracy", swaps)
    tau = float(stats.kendalltau(x, y).statistic)
    return RankAgreement(len(models), tau, None, swaps)
