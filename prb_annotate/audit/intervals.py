"""Confidence intervals for agreement coefficients, and whether to trust them: pure functions.

A coefficient is given as a statistic of weighted groups of equal units (``agreement``'s
shapes: ``patterns`` is groups x values, the answer counts every unit of a group shares, and a
row of ``weights`` says how much each group counts). An interval method draws rows of weights
and reads the statistic's spread:

- ``percentile``: the unit bootstrap (multinomial draws of n units), percentile interval;
- ``bca``: the same draws, bias-corrected and accelerated (Efron 1987; the acceleration from
  the jackknife over units);
- ``bayesian``: the Bayesian bootstrap (Rubin 1981), flat Dirichlet weights over the units;
- ``bayesian_prior``: the Bayesian bootstrap with two pseudo-units of prior weight spread evenly
  over every answer pattern the units could have shown (every way to split the modal number of
  ratings over the values). A sample without a single disagreement then still has resamples
  that do, so 30 unanimous pairs no longer give the interval [1, 1].

``bench/agreement_coverage.py`` measures their coverage on simulated audits and
``docs/statistics.md`` quotes the table: ``bayesian_prior`` is the method the audit uses
(``DEFAULT_METHOD``). Whatever the method, few pairs, an extreme prevalence or many degenerate
resamples make an interval unreliable (:func:`reliability`), and it says why.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# (patterns: groups x values, weights: rows x groups) -> the coefficient for each row.
Statistic = Callable[[IntArray, FloatArray], FloatArray]
Method = Literal["percentile", "bca", "bayesian", "bayesian_prior"]
METHODS: tuple[Method, ...] = ("percentile", "bca", "bayesian", "bayesian_prior")
DEFAULT_METHOD: Method = "bayesian_prior"

# The measured limits of the default method (docs/statistics.md): below 30 pairs rated twice,
# above a prevalence of 0.95, or with more than a fifth of the resamples degenerate, coverage
# falls short of 0.93 in the simulations and the interval is marked unreliable.
MIN_UNITS = 30
MAX_PREVALENCE = 0.95
MAX_DEGENERATE_SHARE = 0.2
# Total weight of the prior pseudo-units of ``bayesian_prior`` (two units' worth: one
# pulled too little at prevalence 0.95, four pulled careful pools too far; docs/statistics.md).
PRIOR_WEIGHT = 2.0
# A coefficient this close to 1 is a resample without any disagreement.
PERFECT = 1.0 - 1e-9


@dataclass(frozen=True)
class Interval:
    """A confidence interval and the evidence for trusting it.

    ``reason`` always gives the figures the verdict rests on (pairs rated twice, prevalence,
    share of degenerate resamples) and, when ``reliable`` is False, which limit they cross.
    """

    low: float | None
    high: float | None
    method: str
    reliable: bool
    reason: str
    resamples: int
    degenerate_share: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "ci_low": self.low,
            "ci_high": self.high,
            "method": self.method,
            "reliable": self.reliable,
            "reason": self.reason,
            "resamples": self.resamples,
            "degenerate_share": self.degenerate_share,
        }


# --------------------------------------------------------------------------------------------
# What the data say about trusting an interval


def pairable_units(patterns: IntArray, sizes: IntArray) -> int:
    """Units with two ratings or more: the ones any agreement coefficient reads."""
    return int(sizes[patterns.sum(axis=1) >= 2].sum())


def prevalence(patterns: IntArray, sizes: IntArray) -> float | None:
    """Share of the most common value among the ratings of units rated twice or more."""
    pairable = patterns.sum(axis=1) >= 2
    totals = (patterns[pairable] * sizes[pairable, None]).sum(axis=0)
    if totals.sum() == 0:
        return None
    return float(totals.max() / totals.sum())


def reliability(units: int, share: float | None, degenerate_share: float) -> tuple[bool, str]:
    """(reliable, reason): the measured limits of ``DEFAULT_METHOD`` (module constants)."""
    figures = (
        f"n = {units} pairs rated twice, prevalence "
        f"{'undefined' if share is None else f'{share:.2f}'}, "
        f"{degenerate_share:.0%} of resamples degenerate"
    )
    failures = []
    if units < MIN_UNITS:
        failures.append(f"fewer than {MIN_UNITS} pairs")
    if share is not None and share > MAX_PREVALENCE:
        failures.append(f"prevalence above {MAX_PREVALENCE:.2f}")
    if degenerate_share > MAX_DEGENERATE_SHARE:
        failures.append(
            f"more than {MAX_DEGENERATE_SHARE:.0%} of resamples without disagreement or undefined"
        )
    if failures:
        return False, f"{'; '.join(failures)} ({figures})"
    return True, figures


# --------------------------------------------------------------------------------------------
# Drawing weights


def multinomial_weights(sizes: IntArray, resamples: int, rng: np.random.Generator) -> FloatArray:
    """Rows of how many of n units drawn with replacement fall in each group."""
    total = int(sizes.sum())
    if total == 0:
        return np.zeros((resamples, len(sizes)))
    return rng.multinomial(total, sizes / total, size=resamples).astype(np.float64)


def dirichlet_weights(
    shapes: FloatArray, total: float, resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Rows of Dirichlet(shapes) weights per group, scaled to sum to ``total``.

    A group of m units with flat Dirichlet weights over its units carries the sum of m
    Exp(1) draws, a Gamma(m) draw: one number per group, whatever the number of units.
    """
    gammas = rng.gamma(np.where(shapes > 0, shapes, 1.0), size=(resamples, len(shapes)))
    gammas = np.where(shapes > 0, gammas, 0.0)
    sums = gammas.sum(axis=1, keepdims=True)
    return np.where(sums > 0, gammas / np.where(sums > 0, sums, 1.0) * total, 0.0)


def all_patterns(raters: int, values: int) -> IntArray:
    """Every way to split ``raters`` ratings over ``values`` values (rows of counts)."""
    found = [
        np.bincount(np.asarray(combo, dtype=np.int64), minlength=values)
        for combo in itertools.combinations_with_replacement(range(values), raters)
    ]
    return np.asarray(found, dtype=np.int64).reshape(-1, values)


def with_prior_patterns(patterns: IntArray, sizes: IntArray) -> tuple[IntArray, FloatArray]:
    """The observed groups followed by every pattern of the modal number of ratings, with the
    Dirichlet shapes of ``bayesian_prior``: the units' counts plus the prior spread evenly."""
    raters = patterns.sum(axis=1)
    pairable = raters >= 2
    if not pairable.any():
        return patterns, sizes.astype(np.float64)
    weights_by_raters = np.bincount(raters[pairable], weights=sizes[pairable])
    modal = int(np.argmax(weights_by_raters))
    prior = all_patterns(modal, patterns.shape[1])
    shapes = np.concatenate(
        [sizes.astype(np.float64), np.full(len(prior), PRIOR_WEIGHT / len(prior))]
    )
    return np.vstack([patterns, prior]), shapes


# --------------------------------------------------------------------------------------------
# Intervals


def _quantiles(samples: FloatArray, levels: tuple[float, float]) -> tuple[float, float]:
    low, high = np.quantile(samples, levels)
    return float(low), float(high)


def _bca_levels(
    point: float,
    samples: FloatArray,
    jackknife: FloatArray,
    multiplicity: FloatArray,
    confidence: float,
) -> tuple[float, float] | None:
    """BCa's adjusted percentile levels; None when the jackknife gives no acceleration."""
    below = float((samples < point).mean() + 0.5 * (samples == point).mean())
    below = min(max(below, 0.5 / len(samples)), 1 - 0.5 / len(samples))
    z0 = float(stats.norm.ppf(below))
    finite = np.isfinite(jackknife)
    if not finite.all():
        return None
    centre = float((jackknife * multiplicity).sum() / multiplicity.sum())
    spread = centre - jackknife
    squares = float((multiplicity * spread**2).sum())
    acceleration = (
        0.0 if squares == 0 else float((multiplicity * spread**3).sum()) / (6 * squares**1.5)
    )
    levels = []
    for tail in ((1 - confidence) / 2, 1 - (1 - confidence) / 2):
        z = z0 + float(stats.norm.ppf(tail))
        levels.append(float(stats.norm.cdf(z0 + z / (1 - acceleration * z))))
    return levels[0], levels[1]


def _jackknife(statistic: Statistic, patterns: IntArray, sizes: IntArray) -> FloatArray:
    """The statistic with one unit of each group left out (one row per group)."""
    rows = np.tile(sizes.astype(np.float64), (len(sizes), 1))
    rows[np.arange(len(sizes)), np.arange(len(sizes))] -= 1
    return statistic(patterns, rows)


def interval(
    statistic: Statistic,
    patterns: IntArray,
    sizes: IntArray,
    point: float,
    *,
    method: Method = DEFAULT_METHOD,
    resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> Interval:
    """The ``method`` interval of the coefficient ``statistic`` around ``point``.

    The interval is widened (never narrowed) to hold ``point``: with few units the resamples
    can be so skewed that it would miss the number printed beside it. Undefined resamples are
    left out of the quantiles and counted as degenerate, as are those without disagreement.
    """
    rng = np.random.default_rng(seed)
    total = float(sizes.sum())
    drawn_patterns = patterns
    if method in ("percentile", "bca"):
        weights = multinomial_weights(sizes, resamples, rng)
    elif method == "bayesian":
        weights = dirichlet_weights(sizes.astype(np.float64), total, resamples, rng)
    elif method == "bayesian_prior":
        drawn_patterns, shapes = with_prior_patterns(patterns, sizes)
        weights = dirichlet_weights(shapes, total, resamples, rng)
    else:
        raise ValueError(f"unknown interval method {method!r}")
    samples = statistic(drawn_patterns, weights)
    finite = samples[np.isfinite(samples)]
    degenerate = 1.0 - float((np.isfinite(samples) & (samples < PERFECT)).mean())
    reliable, reason = reliability(
        pairable_units(patterns, sizes), prevalence(patterns, sizes), degenerate
    )
    if len(finite) == 0 or not math.isfinite(point):
        return Interval(None, None, method, False, reason, 0, degenerate)
    tail = (1 - confidence) / 2
    levels = (tail, 1 - tail)
    if method == "bca":
        adjusted = _bca_levels(
            point,
            finite,
            _jackknife(statistic, patterns, sizes),
            sizes.astype(np.float64),
            confidence,
        )
        if adjusted is None:
            reason += "; jackknife undefined, percentile levels used"
        else:
            levels = adjusted
    low, high = _quantiles(finite, levels)
    return Interval(
        min(low, point), max(high, point), method, reliable, reason, len(finite), degenerate
    )


def unreliable_text(reason: str) -> str:
    """How an interval that cannot be trusted is shown in place of its bounds."""
    return f"unreliable: {reason}"
