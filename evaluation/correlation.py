"""How benchmark accuracy per reward model relates to downstream results (Best-of-N, PPO).

Correlations (Pearson, Spearman, Kendall, with Fisher intervals) and the ranking measures the
paper uses: NDCG, rank-biased overlap (Corsi and Urbano's RBO^a with ties) and weighted
Kendall's tau (:func:`ranking_agreement`, with bootstrap intervals over models, and no
p-value). With :data:`FEW_MODELS` models or fewer, the correlations' p-values are exact
permutation p-values, ``smallest_p`` and ``note`` say when no p-value could fall below 0.05,
and only Pearson keeps an interval (Fisher's, from 4 models on): Spearman, Kendall and the
ranking measures get none, and each one's ``reason`` says why in its own terms, as it says
why any other figure is missing or why an interval shown is marked ``reliable = False``.
Pure functions over numbers.
"""

import functools
import itertools
import math
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

# Bootstrap resamples over models for the ranking measures' intervals.
RESAMPLES = 2000


@dataclass(frozen=True)
class Correlation:
    """One measure of agreement between benchmark accuracy and a downstream result.

    ``interval`` says how ``ci_low`` and ``ci_high`` were found: ``fisher`` (Fisher's z) or
    ``bootstrap`` (percentile, resampling models), and ``None`` when there is none, with
    ``reason`` saying why for this measure (too few models for its interval to keep its level,
    every resample giving the same value, a coefficient that is undefined and which series makes
    it so). ``p_method`` says how ``p_value`` was found: ``exact permutation`` (every order of
    the downstream values, for few models), ``t`` / ``exact`` / ``normal`` (scipy's, for more).
    The ranking measures have no p-value.
    """

    method: str
    n: int
    coefficient: float | None
    p_value: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    interval: str | None = "fisher"
    p_method: str | None = None
    reason: str | None = None
    # False: the interval is shown but does not keep its level at this many models (reason).
    reliable: bool = True
    # The smallest p-value the exact test can give with these models and ties, and the note
    # that says when even that is not below 0.05.
    smallest_p: float | None = None
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# With at most this many models, p-values come from every permutation of the downstream
# values (9! = 362,880 orders, under a second), and no interval resamples the models: a
# percentile bootstrap over 4 models covers 0.83 and is of zero width 17 % of the time
# (bench/coverage_bench.py), its coverage over a handful depends on the unknown correlation,
# and Fisher's z for rank correlations rests on asymptotic variance factors. Pearson's Fisher
# interval stays (see FISHER_VARIANCE). Above it, scipy's tests and the intervals stand.
FEW_MODELS = 9
# Why Spearman and Kendall have no interval at FEW_MODELS or fewer: they keep their test.
FEW_MODELS_RANK_CORRELATION_REASON = (
    "no interval with {n} models: at {limit} models or fewer a percentile bootstrap falls well "
    "short of its level (bench/coverage_bench.py) and Fisher's z for a rank correlation rests "
    "on asymptotic variance factors; its exact permutation p-value is the test"
)
# Why NDCG, RBO and weighted tau have no interval there: they have no p-value either.
FEW_MODELS_RANKING_REASON = (
    "no interval with {n} models: a bootstrap over {limit} models or fewer falls well short of "
    "its level (bench/coverage_bench.py), and this measure has no p-value: the figure describes "
    "these {n} models and tests nothing"
)
DEGENERATE_REASON = "no interval: every resample gave the same value (a zero-width interval)"
UNDEFINED_REASON = "undefined for these values"

# Variance factors of Fisher's z for each coefficient, and the number subtracted from n:
# var(z) = factor / (n - offset). Pearson's 1 / (n - 3) is an approximation that rests on
# bivariate normal values (simulated there, its interval covered 0.94 to 0.97 at 4 to 9 models:
# tests/evaluation/test_correlate_reasons.py); Spearman's is Bonett and
# Wright's (2000) 1 + r^2 / 2, which holds 0.936 or more at 10 to 40 models up to rho = 0.95
# where Fieller, Hartley and Pearson's constant 1.06 covered 0.86 to 0.91
# (bench/coverage_bench.py), computed from r in fisher_interval (the table's 1.06 is unused);
# Kendall's is Fieller's 0.437, short near tau = 1 below KENDALL_RELIABLE models.
FISHER_VARIANCE = {"pearson": (1.0, 3), "spearman": (1.06, 3), "kendall": (0.437, 4)}
KENDALL_RELIABLE = 40
KENDALL_REASON = (
    "Fisher's z for Kendall's tau covers as little as 0.90 at 10 to 20 models where the "
    "correlation is high (bench/coverage_bench.py): not reliable below {limit} models"
)
# A percentile bootstrap over this many models or fewer has not been shown to keep its level
# (NDCG's covered 0.84 to 0.92 at 10 to 15 models, simulated): shown, marked unreliable.
BOOTSTRAP_RELIABLE = 15
BOOTSTRAP_REASON = (
    "a bootstrap over {n} models falls short of its level (NDCG's covered 0.84 to 0.92 at 10 "
    "to 15 models, simulated): not reliable at {limit} models or fewer"
)
SIGNIFICANCE_LEVEL = 0.05
IMPOSSIBLE_NOTE = (
    "with {n} models no {method} p-value can fall below {smallest:.3f} (the exact test's "
    "smallest): significance at {level:g} is impossible, whatever the data"
)


def fisher_interval(
    coefficient: float, n: int, method: str, confidence: float = 0.95
) -> tuple[float, float] | None:
    """Confidence interval of a correlation through Fisher's z transform.

    >>> [round(bound, 3) for bound in fisher_interval(0.5, 50, "pearson")]
    [0.257, 0.683]
    """
    factor, offset = FISHER_VARIANCE[method]
    if n - offset <= 0 or math.isnan(coefficient):
        return None
    clipped = min(max(coefficient, -1 + 1e-12), 1 - 1e-12)
    if method == "spearman":
        factor = 1 + clipped**2 / 2
    z = math.atanh(clipped)
    half = float(stats.norm.ppf(0.5 + confidence / 2)) * math.sqrt(factor / (n - offset))
    return math.tanh(z - half), math.tanh(z + half)


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of ``x`` with each row of ``y`` (nan where a row or ``x`` is constant)."""
    dx = x - x.mean()
    dy = y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (dy @ dx) / np.sqrt((dx @ dx) * (dy * dy).sum(axis=1))


def _kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of ``x`` with each row of ``y``."""
    first, second = np.triu_indices(len(x), k=1)
    sx = np.sign(x[second] - x[first])
    sy = np.sign(y[:, second] - y[:, first])
    with np.errstate(invalid="ignore", divide="ignore"):
        return (sy @ sx) / np.sqrt(np.count_nonzero(sx) * np.count_nonzero(sy, axis=1))


def _statistic_rows(method: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if method == "pearson":
        return _pearson_rows(x, y)
    if method == "spearman":  # Pearson's r of the mid-ranks
        return _pearson_rows(stats.rankdata(x), stats.rankdata(y, axis=1))
    return _kendall_rows(x, y)


@functools.cache
def all_orders(n: int) -> np.ndarray:
    """Every permutation of ``range(n)``, one a row (kept: 9! rows take a moment to build)."""
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def permutation_p_value(method: str, x: Sequence[float], y: Sequence[float]) -> float | None:
    """The p-value of :func:`permutation_test`."""
    return permutation_test(method, x, y)[0]


def permutation_test(
    method: str, x: Sequence[float], y: Sequence[float]
) -> tuple[float | None, float]:
    """Exact two-sided permutation p-value of ``method`` (pearson, spearman or kendall):
    the share of all ``n!`` orders of ``y`` whose coefficient is at least as far from 0 as
    the observed one. The observed order is one of them, so p is at least ``1 / n!`` (with 3
    models at best 2 / 6 = 0.333, two orders being as extreme); ties are permuted like any
    value. ``None`` when the coefficient is undefined.

    Worked by hand: x = 1, 2, 3 and y = 1, 2, 3 have Spearman 1; of the 6 orders of y, 1 2 3
    gives 1 and 3 2 1 gives -1, so p = 2 / 6.

    The second figure is the smallest p-value any order could give: the share of orders as
    extreme as the most extreme one (2 / 4! = 0.083 for 4 models without ties).

    >>> [round(p, 4) for p in permutation_test("spearman", [1, 2, 3], [1, 2, 3])]
    [0.3333, 0.3333]
    """
    values = np.asarray(x, dtype=float)
    orders = np.asarray(y, dtype=float)[all_orders(len(y))]
    everything = np.abs(_statistic_rows(method, values, orders))
    defined = ~np.isnan(everything)
    most = float(np.max(everything[defined])) if defined.any() else math.nan
    # A tolerance, so that an order as extreme as another up to rounding counts.
    smallest = float(np.count_nonzero(defined & (everything >= most - 1e-12)) / len(orders))
    observed = _statistic_rows(method, values, np.asarray(y, dtype=float)[None, :])[0]
    if math.isnan(observed):
        return None, smallest
    extreme = everything >= abs(observed) - 1e-12
    return float(np.count_nonzero(extreme & defined) / len(orders)), smallest


def correlations(
    x: Sequence[float], y: Sequence[float], *, confidence: float = 0.95
) -> list[Correlation]:
    """Pearson, Spearman and Kendall (tau-b) between ``x`` and ``y``, with p-values and
    intervals.

    With :data:`FEW_MODELS` models or fewer, every p-value is the exact permutation p-value
    and the rank correlations get no interval (``reason`` says why); Pearson keeps its Fisher
    interval where ``n > 3``, an approximation that rests on bivariate normal values. With
    more, scipy's tests and Fisher intervals.

    >>> [round(c.coefficient, 2) for c in correlations([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])]
    [0.8, 0.8, 0.6]
    """
    if len(x) != len(y):
        raise ValueError("x and y must have the same length")
    if len(x) < 3:
        raise ValueError("a correlation needs at least 3 models")
    n = len(x)
    few = n <= FEW_MODELS
    results = []
    for method, function in (
        ("pearson", stats.pearsonr),
        ("spearman", stats.spearmanr),
        ("kendall", stats.kendalltau),
    ):
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a constant series: nan, said below in words
            result = function(x, y)
        coefficient = float(result.statistic)
        if math.isnan(coefficient):
            results.append(_undefined(method, n, confidence, undefined_reason(method, x, y)))
            continue
        smallest, note = None, None
        if few:
            p_value, smallest = permutation_test(method, x, y)
            p_method = "exact permutation"
            if smallest >= SIGNIFICANCE_LEVEL:
                note = IMPOSSIBLE_NOTE.format(
                    n=n, method=method, smallest=smallest, level=SIGNIFICANCE_LEVEL
                )
        else:
            p_value, p_method = float(result.pvalue), SCIPY_P_METHODS[method]
        reason = None
        interval = None
        reliable = True
        if few and method != "pearson":
            reason = FEW_MODELS_RANK_CORRELATION_REASON.format(n=n, limit=FEW_MODELS)
        else:
            interval = fisher_interval(coefficient, n, method, confidence)
            if interval is None:
                offset = FISHER_VARIANCE[method][1]
                reason = f"no interval: Fisher's z needs more than {offset} models"
            elif method == "kendall" and n < KENDALL_RELIABLE:
                reliable, reason = False, KENDALL_REASON.format(limit=KENDALL_RELIABLE)
        results.append(
            Correlation(
                method=method,
                n=n,
                coefficient=coefficient,
                p_value=p_value,
                confidence=confidence,
                **_interval_fields(interval, "fisher"),
                p_method=p_method,
                reason=reason,
                reliable=reliable,
                smallest_p=smallest,
                note=note,
            )
        )
    return results


# How scipy finds each p-value for more than FEW_MODELS models (pearsonr: Student's t;
# spearmanr: Student's t on the ranks; kendalltau: exact without ties below 50 models, else
# the normal approximation).
SCIPY_P_METHODS = {"pearson": "t", "spearman": "t", "kendall": "exact or normal (scipy)"}


def _interval_fields(interval: tuple[float, float] | None, kind: str) -> dict[str, Any]:
    """A Correlation's ``ci_low``, ``ci_high`` and ``interval`` from the interval ``kind``
    ("fisher", "bootstrap") found, or from None when it found none."""
    low, high = interval if interval else (None, None)
    return {"ci_low": low, "ci_high": high, "interval": kind if interval else None}


def _undefined(method: str, n: int, confidence: float, reason: str) -> Correlation:
    return Correlation(
        method=method,
        n=n,
        coefficient=None,
        p_value=None,
        ci_low=None,
        ci_high=None,
        confidence=confidence,
        interval=None,
        reason=reason,
    )


def undefined_reason(method: str, x: Sequence[float], y: Sequence[float]) -> str:
    """Why ``method`` of benchmark values ``x`` against downstream values ``y`` came out
    undefined. NDCG is undefined only when every gain is 0; the correlations and weighted tau
    (scipy's ``weightedtau``) whenever either series is constant, so the reason names it.

    >>> undefined_reason("weighted_tau", [0.6, 0.7, 0.8], [0.5, 0.5, 0.5])
    'undefined: all 3 downstream values are 0.5'
    >>> undefined_reason("ndcg", [0.6, 0.7, 0.8], [0, 0, 0])
    'undefined: all 3 downstream values are 0, and NDCG has no gain to rank by'
    """
    if method == "ndcg" and not any(y):
        return f"undefined: all {len(y)} downstream values are 0, and NDCG has no gain to rank by"
    constant = [
        f"all {len(values)} {name} values are {values[0]:g}"
        for name, values in (("benchmark", x), ("downstream", y))
        if len(set(values)) == 1
    ]
    return f"undefined: {' and '.join(constant)}" if constant else UNDEFINED_REASON


def paired_values(
    bench: Mapping[str, float], downstream: Mapping[str, float]
) -> tuple[list[str], list[float], list[float]]:
    """Models present in both mappings, sorted, with their two values."""
    models = sorted(set(bench) & set(downstream))
    return models, [bench[m] for m in models], [downstream[m] for m in models]


def ranking_order(scores: Sequence[float]) -> list[int]:
    """Indices of ``scores``, highest first; equal scores keep their input order."""
    return sorted(range(len(scores)), key=lambda index: (-scores[index], index))


def ndcg(predicted: Sequence[float], gains: Sequence[float], k: int | None = None) -> float:
    """Normalised discounted cumulative gain of ranking items by ``predicted``, highest first,
    when item ``i`` is worth ``gains[i]`` (Järvelin and Kekäläinen 2002: linear gains, a
    discount of ``1 / log2(1 + rank)``), over the first ``k`` ranks (default all).

    Items with equal ``predicted`` share the mean discount of the ranks they span (McSherry and
    Najork 2008), so the order of ties cannot change the value. Gains must not be negative; all
    zero gives ``nan``.

    The textbook example, six documents of relevance 3, 2, 3, 0, 1, 2 in that order:
    DCG = 6.861, ideal DCG (3, 3, 2, 2, 1, 0) = 7.141.

    >>> round(ndcg([6, 5, 4, 3, 2, 1], [3, 2, 3, 0, 1, 2]), 3)
    0.961
    """
    if len(predicted) != len(gains):
        raise ValueError("one gain per predicted score")
    if any(gain < 0 for gain in gains):
        raise ValueError("NDCG needs gains that are not negative")
    depth = len(gains) if k is None else min(k, len(gains))
    discounts = np.array([1 / math.log2(rank + 2) for rank in range(len(gains))])
    discounts[depth:] = 0.0
    ideal = float(np.sort(np.asarray(gains, dtype=float))[::-1] @ discounts)
    if ideal == 0:
        return math.nan
    order = ranking_order(predicted)
    shared = np.zeros(len(gains))
    start = 0
    while start < len(order):
        end = start
        while end < len(order) and predicted[order[end]] == predicted[order[start]]:
            end += 1
        shared[start:end] = discounts[start:end].mean()
        start = end
    actual = float(sum(gains[index] * shared[rank] for rank, index in enumerate(order)))
    return actual / ideal


def rank_biased_overlap(
    first: Sequence[Hashable], second: Sequence[Hashable], persistence: float = 0.9
) -> float:
    """Rank-biased overlap of two rankings of the same length, best first (Webber, Moffat and
    Zobel 2010, extrapolated form, eq. 32):

        RBO = (X_k / k) p^k + (1 - p) / p * sum_{d=1..k} (X_d / d) p^d

    where ``X_d`` is the number of items the two rankings share in their first ``d`` places and
    ``p`` the persistence: the weight of the first ``d`` places is ``1 - p^d``. 1 for identical
    rankings, 0 for disjoint ones. For two orders of the same items, the agreement beyond the
    last place is 1, and this is their exact RBO.

    Worked by hand: a, b, c, d against b, a, d, c with p = 0.9 overlap in 0, 2, 2 and 4 items at
    depths 1 to 4: 0.1 / 0.9 * (0 + 0.81 + 2/3 * 0.729 + 0.6561) + 0.6561 = 0.873.

    >>> round(rank_biased_overlap("abcd", "badc", 0.9), 3)
    0.873
    """
    if len(first) != len(second):
        raise ValueError("RBO here compares rankings of the same length")
    if not 0 < persistence < 1:
        raise ValueError("the persistence p must be between 0 and 1")
    if not first:
        return math.nan
    seen_first: set[Hashable] = set()
    seen_second: set[Hashable] = set()
    overlap = 0
    total = 0.0
    for depth, (a, b) in enumerate(zip(first, second, strict=True), start=1):
        overlap += (a in seen_second) + (b in seen_first) + (a == b)
        seen_first.add(a)
        seen_second.add(b)
        total += overlap / depth * persistence**depth
    k = len(first)
    return overlap / k * persistence**k + (1 - persistence) / persistence * total


def top_share(scores: Sequence[float]) -> np.ndarray:
    """``share[i, d - 1]``: how much of item ``i`` the first ``d`` places hold when the items
    are ranked by ``scores``, highest first: 1 from the last place of its tie group on, 0
    before the group's first place ``a``, and ``(d - a + 1) / size`` of the group between."""
    values = np.asarray(scores, dtype=float)
    n = len(values)
    above = np.array([np.count_nonzero(values > value) for value in values])
    level = np.array([np.count_nonzero(values == value) for value in values])
    depths = np.arange(1, n + 1)
    inside = (depths[None, :] - above[:, None]) / level[:, None]
    return np.clip(inside, 0.0, 1.0)


def rbo_of_scores(x: Sequence[float], y: Sequence[float], persistence: float = 0.9) -> float:
    """Rank-biased overlap of the items ranked by ``x`` and by ``y``, highest first, with ties:
    Corsi and Urbano's (2024) RBO^a, the mean RBO over every way of breaking the ties of both.

    Equal scores are a tie, not an order, so the value must not depend on how ties are broken.
    The first ``d`` places of a ranking hold an item of a tie group spanning places ``a..b``
    with probability ``(d - a + 1) / (b - a + 1)`` between 0 and 1, when the tie is broken at
    random (:func:`top_share`); the expected overlap at depth ``d`` is
    ``X_d = sum_i m_i m'_i`` over those shares in the two rankings, the two ties broken
    independently. The rest is the formula of :func:`rank_biased_overlap`, which is linear in
    the ``X_d``, so this is the mean of the RBO of every pair of tie-breakings, and Webber's RBO
    when there are no ties. Two rankings with the same ties score below 1 (2, 2, 1 against
    itself: 0.75 at p = 0.5), since each tie may be broken either way on each side.

    Worked by hand, p = 0.5: x = 3, 2, 2, 1 (b and c tied) against y = 4, 3, 2, 1 gives
    X_d = 1, 1 + 0.5, 3, 4, so RBO = 4/4 * 0.0625 + (0.5 + 0.75 * 0.25 + 0.125 + 0.0625) =
    0.9375, the mean of 1 (b before c) and 0.875 (c before b); x = 2, 2, 1 against
    y = 3, 2, 1 gives X_d = 0.5, 2, 3 and RBO = 0.125 + (0.25 + 0.25 + 0.125) = 0.75; and
    x = y = 2, 2, 1 gives X_d = 0.25 + 0.25, 2, 3 and RBO = 0.125 + (0.25 + 0.25 + 0.125) = 0.75,
    the mean of 1 (the same break) and 0.5 (the other).

    >>> rbo_of_scores([3, 2, 2, 1], [4, 3, 2, 1], 0.5), rbo_of_scores([2, 2, 1], [3, 2, 1], 0.5)
    (0.9375, 0.75)
    >>> rbo_of_scores([2, 2, 1], [2, 2, 1], 0.5)
    0.75
    """
    if len(x) != len(y):
        raise ValueError("RBO here compares rankings of the same length")
    if not 0 < persistence < 1:
        raise ValueError("the persistence p must be between 0 and 1")
    if not len(x):
        return math.nan
    overlap = (top_share(x) * top_share(y)).sum(axis=0)
    depths = np.arange(1, len(x) + 1)
    k = len(x)
    total = float(np.sum(overlap / depths * persistence**depths))
    return float(overlap[-1] / k * persistence**k + (1 - persistence) / persistence * total)


def weighted_tau(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Weighted Kendall's tau (Vigna 2015) with hyperbolic weights ``1 / (rank + 1)``: a swap
    among the top ranks costs more than one at the bottom. Symmetric in ``x`` and ``y`` (the
    mean over ranking by each); :func:`scipy.stats.weightedtau` computes it."""
    return float(stats.weightedtau(x, y).statistic)


def bootstrap_over_models(
    statistic: Callable[[np.ndarray, np.ndarray], float],
    x: Sequence[float],
    y: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``statistic(x, y)``, resampling models (pairs of values)
    with replacement; resamples where it is undefined (every x equal, say) are dropped."""
    if resamples <= 0 or len(x) < 2:
        return None
    values = np.asarray(x, dtype=float)
    targets = np.asarray(y, dtype=float)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(values), size=(resamples, len(values)))
    with np.errstate(invalid="ignore", divide="ignore"):
        results = np.array([statistic(values[rows], targets[rows]) for rows in draws])
    results = results[~np.isnan(results)]
    if not len(results):
        return None
    tail = (1 - confidence) / 2
    low, high = np.quantile(results, [tail, 1 - tail])
    return float(low), float(high)


RANKING_METHODS = ("ndcg", "rbo", "weighted_tau")


def ranking_agreement(
    x: Sequence[float],
    y: Sequence[float],
    *,
    persistence: float = 0.9,
    resamples: int = RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[Correlation]:
    """How well ranking models by benchmark accuracy ``x`` recovers their ranking by a
    downstream result ``y``: NDCG (``y`` as the gains), rank-biased overlap with persistence
    ``persistence`` (ties aware), and weighted Kendall's tau, each with a bootstrap interval
    over models when there are more than :data:`FEW_MODELS` of them and the interval is not
    of zero width (marked ``reliable = False`` up to :data:`BOOTSTRAP_RELIABLE` models);
    otherwise ``reason`` says why there is none. None has a p-value.

    NDCG is left out when a downstream value is negative (gains cannot be).

    >>> [(c.method, round(c.coefficient, 3)) for c in ranking_agreement(
    ...     [4, 3, 2, 1], [4, 3, 1, 2], resamples=0)]
    [('ndcg', 0.991), ('rbo', 0.973), ('weighted_tau', 0.813)]
    """
    if len(x) != len(y):
        raise ValueError("x and y must have the same length")
    if len(x) < 3:
        raise ValueError("a ranking comparison needs at least 3 models")
    measures: list[tuple[str, Callable[[np.ndarray, np.ndarray], float]]] = []
    if all(value >= 0 for value in y):
        measures.append(("ndcg", lambda a, b: ndcg(list(a), list(b))))
    measures += [
        ("rbo", lambda a, b: rbo_of_scores(list(a), list(b), persistence)),
        ("weighted_tau", lambda a, b: weighted_tau(a, b)),
    ]
    n = len(x)
    results = []
    for method, statistic in measures:
        coefficient = statistic(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        interval, reason = _ranking_interval(
            statistic, x, y, resamples=resamples, confidence=confidence, seed=seed
        )
        if math.isnan(coefficient):
            interval, reason = None, undefined_reason(method, x, y)
        reliable = interval is None or n > BOOTSTRAP_RELIABLE
        if not reliable:
            reason = BOOTSTRAP_REASON.format(n=n, limit=BOOTSTRAP_RELIABLE)
        results.append(
            Correlation(
                method=method,
                n=n,
                coefficient=None if math.isnan(coefficient) else coefficient,
                p_value=None,
                confidence=confidence,
                **_interval_fields(interval, "bootstrap"),
                reason=reason,
                reliable=reliable,
            )
        )
    return results


def _ranking_interval(
    statistic: Callable[[np.ndarray, np.ndarray], float],
    x: Sequence[float],
    y: Sequence[float],
    **options: Any,
) -> tuple[tuple[float, float] | None, str | None]:
    """The bootstrap interval over models, or ``None`` and why: too few models, no resamples
    asked for, or every resample giving the same value."""
    if len(x) <= FEW_MODELS:
        return None, FEW_MODELS_RANKING_REASON.format(n=len(x), limit=FEW_MODELS)
    if options["resamples"] <= 0:
        return None, "no interval: no resamples asked for"
    interval = bootstrap_over_models(statistic, x, y, **options)
    if interval is None:
        return None, "no interval: the measure is undefined on every resample"
    if interval[1] - interval[0] <= 1e-12:
        return None, DEGENERATE_REASON
    return interval, None
