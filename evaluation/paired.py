"""Two models on the same pairs: the interval for the difference of their accuracies, and the
smallest difference the exact McNemar test can find with the pairs there are.

Pure functions over counts (numpy and scipy, no torch). On the ``n`` pairs both models decided,
``b`` pairs only the first got right and ``c`` only the second; the difference of accuracies is
``(b - c) / n``.

- :func:`paired_difference_interval`: Tango's score interval for a difference of paired
  proportions (Tango 1998, Statistics in Medicine 17:891), with a continuity correction of half
  a count. :data:`TANGO_CC` is the method object: its ``words`` are what the pages, ``compare``
  and the paper print, and every :class:`PairedDifference` carries its ``method``.
- :func:`tango_bounds`: the same bounds for arrays of tables at once (exact enumeration).
- :func:`detectable_difference`: the smallest difference of accuracies the exact McNemar test
  at a level finds 80 % of the time, given the discordant pairs observed.

Why Tango's interval: the percentile bootstrap it replaces resamples the observed table, so
with few discordant pairs it collapses ([0, 0] whenever ``b = c = 0``) and covered 0.70 at 20
pairs when one model is right alone on 2 to 5 % more pairs (docs/evaluation.md, table 4b);
the score interval inverts the test at each candidate difference with the variance that
difference implies, so it is never a point. The half-count correction is what holds exact
coverage at 0.95 or more for every table from 20 to 500 pairs (plain Tango dips to 0.930;
``bench/coverage_bench.py``).
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from evaluation.significance import Codes, discordant_counts, z_value

BISECTION_STEPS = 60
POWER = 0.8


@dataclass(frozen=True)
class IntervalMethod:
    """An interval's method: ``key`` for files, ``words`` for people, ``name`` for a column
    header, ``citation`` a BibTeX key of the paper's references."""

    key: str
    words: str
    name: str
    citation: str
    correction: float


TANGO_CC = IntervalMethod(
    key="tango_cc",
    words="Tango's score interval for paired proportions, continuity-corrected by half a pair",
    name="Tango",
    citation="tango1998",
    correction=0.5,
)


@dataclass(frozen=True)
class PairedDifference:
    """``difference``: accuracy of the first minus the second on the ``pairs`` both decided,
    with its interval and the interval's ``method`` (``IntervalMethod.key``)."""

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    pairs: int
    method: str = TANGO_CC.key


def tango_statistic(
    b: np.ndarray, c: np.ndarray, n: int, delta: np.ndarray, correction: float
) -> np.ndarray:
    """Tango's score statistic at the candidate difference ``delta``: ``b - c - n delta`` over
    its standard deviation when ``delta`` is true, with ``p01`` at its maximum-likelihood value
    under that constraint (the root of ``2n p^2 + W p - c delta (1 - delta) = 0``). The
    correction shrinks the distance by ``correction`` counts (never past zero)."""
    w = -b - c + (2 * n - b + c) * delta
    p01 = (np.sqrt(np.maximum(w * w + 8 * n * c * delta * (1 - delta), 0.0)) - w) / (4 * n)
    distance = b - c - n * delta
    distance = np.sign(distance) * np.maximum(np.abs(distance) - correction, 0.0)
    spread = np.sqrt(np.maximum(n * (2 * p01 + delta * (1 - delta)), 0.0))
    safe = np.where(spread > 0, spread, 1.0)
    # A zero spread happens only at delta = +-1; the distance's sign then decides.
    return np.where(
        spread > 0, distance / safe, np.where(distance == 0, 0.0, np.copysign(np.inf, distance))
    )


def tango_bounds(
    b: np.ndarray | int,
    c: np.ndarray | int,
    n: int,
    confidence: float = 0.95,
    method: IntervalMethod = TANGO_CC,
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds for each table ``(b, c)`` of ``n`` pairs: the differences whose
    score statistic stays within ``z``. The statistic falls as ``delta`` rises, so each bound
    is found by bisection on its side of the estimate, for all tables at once."""
    b_arr = np.asarray(b, dtype=float)
    c_arr = np.asarray(c, dtype=float)
    z = z_value(confidence)
    estimate = (b_arr - c_arr) / n
    below, above = np.full_like(estimate, -1.0), estimate.copy()
    for _ in range(BISECTION_STEPS):
        middle = (below + above) / 2
        outside = tango_statistic(b_arr, c_arr, n, middle, method.correction) > z
        below, above = np.where(outside, middle, below), np.where(outside, above, middle)
    low = below
    below, above = estimate.copy(), np.full_like(estimate, 1.0)
    for _ in range(BISECTION_STEPS):
        middle = (below + above) / 2
        outside = tango_statistic(b_arr, c_arr, n, middle, method.correction) < -z
        below, above = np.where(outside, below, middle), np.where(outside, middle, above)
    return low, above


def paired_difference_interval(
    b: int, c: int, n: int, confidence: float = 0.95
) -> tuple[float, float] | None:
    """The interval for ``(b - c) / n``; ``None`` when no pair was decided by both.

    Bentur et al. (2009), as Fagerland, Lydersen & Laake (2014) use it: 1 pair only the first
    got right, 7 only the second, 21 in all; and no discordant pair of 20 is not a point:

    >>> [round(bound, 3) for bound in paired_difference_interval(1, 7, 21)]
    [-0.539, 0.002]
    >>> [round(bound, 3) for bound in paired_difference_interval(0, 0, 20)]
    [-0.2, 0.2]
    """
    if n <= 0:
        return None
    if b < 0 or c < 0 or b + c > n:
        raise ValueError(f"discordant pairs must be between 0 and n ({n}): b = {b}, c = {c}")
    low, high = tango_bounds(b, c, n, confidence)
    return float(low), float(high)


def paired_difference(first: Codes, second: Codes, confidence: float = 0.95) -> PairedDifference:
    """Accuracy of ``first`` minus accuracy of ``second`` on the pairs neither left out, with
    Tango's interval: the same pairs the McNemar test reads.

    >>> paired_difference([1, 1, 0, 1, None], [1, 0, 0, 0, 1]).difference
    0.5
    """
    b, c, n = discordant_counts(first, second)
    interval = paired_difference_interval(b, c, n, confidence)
    if interval is None:
        return PairedDifference(None, None, None, 0)
    return PairedDifference((b - c) / n, interval[0], interval[1], n)


def mcnemar_power(discordant: int, share: float, level: float) -> float:
    """The chance that the exact two-sided McNemar test at ``level`` rejects, with
    ``discordant`` pairs of which each goes one way with probability ``share``."""
    counts = np.arange(discordant + 1)
    tails = stats.binom.cdf(np.minimum(counts, discordant - counts), discordant, 0.5)
    rejects = np.minimum(1.0, 2 * tails) <= level
    return float(stats.binom.pmf(counts, discordant, share)[rejects].sum())


def detectable_difference(discordant: int, pairs: int, level: float) -> float | None:
    """The smallest difference of accuracies (a share of ``pairs``) that the exact McNemar test
    at ``level`` finds with probability 0.8, when ``discordant`` of the pairs are discordant;
    ``None`` when even a one-sided split of them would not be found that often.

    A difference ``d`` with ``D`` discordant pairs of ``n`` means the discordant pairs split
    ``(1 + d n / D) / 2`` one way; power rises with that share, so bisection finds it.

    >>> round(detectable_difference(40, 200, 0.05), 3)
    0.089
    """
    if discordant <= 0 or pairs <= 0:
        return None
    if mcnemar_power(discordant, 1.0, level) < POWER:
        return None
    low, high = 0.5, 1.0
    for _ in range(BISECTION_STEPS):
        middle = (low + high) / 2
        low, high = (
            (low, middle) if mcnemar_power(discordant, middle, level) >= POWER else (middle, high)
        )
    return discordant * (2 * high - 1) / pairs
