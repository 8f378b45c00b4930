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
(``DEFAULT_METHOD``).

What an interval can be trusted with depends on how much it reads: a coefficient is one minus
observed over expected disagreement, and a resample of few pairs cannot say how many
disagreements a new sample would hold. :func:`reliability` therefore counts the pairs rated
twice or more and those among them with a disagreement, and compares them with what the
coefficient's family needs (``NEEDS``, measured per family, alpha's or Gwet's, and number of
ratings a pair). The pairs rated twice are what binds: one pair with a disagreement is enough
where there are 20 (Gwet's), 60 or 100 (alpha's) of them; an audit without a single
disagreement says so in words. A reliable AC1 or AC2
interval of the default method is centred on the estimate it sits beside (the draws shifted
by the estimate minus their median and capped at 1, ``CENTRED``; the interval records it as
``Interval.centred``); alpha's keeps the prior's pull towards chance, which is what holds its
coverage when disagreements are few (docs/statistics.md). Every interval is then widened,
never narrowed, to hold its estimate. :func:`adjustment_text` says both in words.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from prb_annotate.audit.phrases import Phrase
from prb_annotate.audit.words import gettext_noop

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# (patterns: groups x values, weights: rows x groups) -> the coefficient for each row.
Statistic = Callable[[IntArray, FloatArray], FloatArray]
Method = Literal["percentile", "bca", "bayesian", "bayesian_prior"]
METHODS: tuple[Method, ...] = ("percentile", "bca", "bayesian", "bayesian_prior")
DEFAULT_METHOD: Method = "bayesian_prior"
# How every page, report and paper names each method: one definition (the paper's methods
# text adds the citations).
# Marked for translation, kept English in the report (``phrases.py``).
METHOD_PHRASES: dict[str, str] = {
    "bayesian_prior": gettext_noop(
        "Bayesian bootstrap interval over pairs with a weak prior of two "
        "pseudo-pairs spread over the possible answer patterns"
    ),
    "bayesian": gettext_noop("flat-prior Bayesian bootstrap interval over pairs"),
    "percentile": gettext_noop("percentile bootstrap interval over pairs"),
    "bca": gettext_noop("bias-corrected and accelerated (BCa) bootstrap interval over pairs"),
}
SHORT_NAMES: dict[str, str] = {
    "bayesian_prior": gettext_noop("Bayesian bootstrap with a weak prior"),
    "bayesian": gettext_noop("flat-prior Bayesian bootstrap"),
    "percentile": gettext_noop("percentile bootstrap"),
    "bca": gettext_noop("BCa bootstrap"),
}

# Which coefficients share a reliability rule: those whose chance agreement comes from the
# answers' marginal shares (alpha at every level, Fleiss' kappa) and Gwet's (AC1, AC2, and
# percent agreement, which has no chance term at all).
Family = Literal["alpha", "gwet"]
FAMILY_NAMES: dict[Family, str] = {
    "alpha": gettext_noop("alpha and kappa"),
    # xgettext:no-python-format
    "gwet": gettext_noop("AC1, AC2 and % agreement"),
}
# What an interval needs before it is called reliable, per family and ratings a pair (2, or 3
# and more): (pairs with a disagreement, pairs rated twice), the smallest needs under which no
# cell of bench/agreement_coverage.py's grid had its reliable intervals cover less than 0.93
# by more than the Monte-Carlo error (docs/statistics.md); below its 20 pairs nothing was
# measured. More pairs with a disagreement did not help: it keeps the audits whose estimate
# happens to be low.
NEEDS: dict[tuple[Family, int], tuple[int, int]] = {
    ("alpha", 2): (1, 60),
    ("alpha", 3): (1, 100),
    ("gwet", 2): (1, 20),
    ("gwet", 3): (1, 20),
}
# Whether a reliable interval is centred on its estimate. Not alpha's: when one answer
# dominates its estimate is itself far too high or too low, and the prior's pull is what holds
# the interval's coverage (centred, careful annotators at prevalence 0.95-0.97 were covered
# 0.84 at 60 pairs instead of 0.95; docs/statistics.md).
CENTRED: dict[Family, bool] = {"alpha": False, "gwet": True}
# Total weight of the prior pseudo-units of ``bayesian_prior`` (two units' worth: one
# pulled too little at prevalence 0.95, four pulled careful pools too far; docs/statistics.md).
PRIOR_WEIGHT = 2.0


@dataclass(frozen=True)
class Interval:
    """A confidence interval and the evidence for trusting it.

    ``reason`` always gives the figures the verdict rests on (pairs rated twice, pairs with a
    disagreement, what the coefficient needs) and, when ``reliable`` is False, says in words
    what is missing. ``centred``: the draws were shifted to centre the interval on the
    estimate.
    """

    low: float | None
    high: float | None
    method: str
    reliable: bool
    reason: str
    resamples: int
    centred: bool = False


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


def disagreeing_units(patterns: IntArray, sizes: IntArray) -> int:
    """Units rated twice or more whose ratings are not all the same value."""
    raters = patterns.sum(axis=1)
    split = (raters >= 2) & (patterns.max(axis=1) < raters)
    return int(sizes[split].sum())


def ratings_per_unit(patterns: IntArray, sizes: IntArray) -> int:
    """The most common number of ratings among the units rated twice or more (0 if none)."""
    raters = patterns.sum(axis=1)
    pairable = raters >= 2
    if not pairable.any():
        return 0
    return int(np.argmax(np.bincount(raters[pairable], weights=sizes[pairable])))


@dataclass(frozen=True)
class Evidence:
    """What an agreement interval has to read: pairs rated twice or more, how many of them hold
    a disagreement, and the usual number of ratings a pair."""

    units: int
    disagreeing: int
    raters: int

    @classmethod
    def of(cls, patterns: IntArray, sizes: IntArray) -> Evidence:
        return cls(
            pairable_units(patterns, sizes),
            disagreeing_units(patterns, sizes),
            ratings_per_unit(patterns, sizes),
        )


def needed(family: Family, raters: int) -> tuple[int, int]:
    """(pairs with a disagreement, pairs rated twice) a reliable interval needs; more than
    three ratings a pair take the rule measured at three."""
    return NEEDS[family, measured_raters(raters)]


def measured_raters(raters: int) -> int:
    """The ratings a pair whose measured rule applies: 2, or 3 for three and more."""
    return min(max(raters, 2), 3)


# Why an interval is or is not trusted, in the words the report keeps (``phrases.py``).
NO_UNITS = gettext_noop("no pair was rated by two annotators, so nothing can be compared")
NO_SPLIT = Phrase(
    gettext_noop(
        "no two annotators disagreed on any of the %(units)s pairs rated twice or more: "
        "agreement may be perfect, but these pairs cannot show how much lower it could be"
    )
)
FIGURES = {
    # One pair with a disagreement, or several: two sentences, so that each reads right.
    True: Phrase(
        gettext_noop(
            "%(split)s of the %(units)s pairs rated twice or more hold a disagreement; "
            "%(family)s need at least %(least_split)s pair with a disagreement and "
            "%(least_units)s pairs with %(raters)s ratings a pair"
        )
    ),
    False: Phrase(
        gettext_noop(
            "%(split)s of the %(units)s pairs rated twice or more hold a disagreement; "
            "%(family)s need at least %(least_split)s pairs with a disagreement and "
            "%(least_units)s pairs with %(raters)s ratings a pair"
        )
    ),
}
TOO_FEW_SPLIT = Phrase(
    gettext_noop("too few pairs with a disagreement to trust the interval: %(figures)s")
)
TOO_FEW_UNITS = Phrase(gettext_noop("too few pairs rated twice to trust the interval: %(figures)s"))
UNRELIABLE = Phrase(gettext_noop("unreliable: %(reason)s"))
RULE_NEEDS = gettext_noop("%(split)s of %(units)s pairs with %(raters)s ratings a pair")
RULE_FAMILY = gettext_noop("%(family)s: %(needs)s; %(centred)s")
RULE_CENTRED = {True: gettext_noop("centred on the estimate"), False: gettext_noop("not centred")}
RULE = gettext_noop(
    "an interval is reliable when enough pairs are rated twice or more, one of them at least "
    "with a disagreement: %(families)s"
)
# What :func:`interval` does to the quantiles of the draws after the method has drawn them, in
# words beside the method's phrase (:func:`adjustment_text`): the centring of the intervals
# whose ``Interval.centred`` is true, and the widening every interval gets.
CENTRING = gettext_noop(
    "the intervals of %(coefficients)s are shifted so that the median of their draws sits on "
    "the estimate and are capped at one"
)
WIDENING = gettext_noop("each interval is widened where needed to hold its estimate")


def reliability(family: Family, evidence: Evidence) -> tuple[bool, str]:
    """(reliable, reason in plain words): the measured needs of ``DEFAULT_METHOD``."""
    units, split = evidence.units, evidence.disagreeing
    if units == 0:
        return False, NO_UNITS
    if split == 0:
        return False, NO_SPLIT(units=units)
    least_split, least_units = needed(family, evidence.raters)
    figures = FIGURES[least_split == 1](
        split=split,
        units=units,
        family=FAMILY_NAMES[family],
        least_split=least_split,
        least_units=least_units,
        raters=measured_raters(evidence.raters),
    )
    if split < least_split:
        return False, TOO_FEW_SPLIT(figures=figures)
    if units < least_units:
        return False, TOO_FEW_UNITS(figures=figures)
    return True, figures


def rule_text(words: Callable[[str], str] = str) -> str:
    """The reliability rule in one clause, rendered from ``NEEDS`` and ``CENTRED``; ``words``
    translates each of its words (``gettext`` for a page; English by default)."""
    parts = []
    for family, name in FAMILY_NAMES.items():
        needs = [
            words(RULE_NEEDS) % {"split": split, "units": units, "raters": raters}
            for raters in (2, 3)
            for split, units in [NEEDS[family, raters]]
        ]
        parts.append(
            words(RULE_FAMILY)
            % {
                "family": words(name),
                "needs": ", ".join(needs),
                "centred": words(RULE_CENTRED[CENTRED[family]]),
            }
        )
    return words(RULE) % {"families": "; ".join(parts)}


def adjustment_text(centred: Sequence[str], words: Callable[[str], str] = str) -> str:
    """What :func:`interval` did after drawing, in one clause: ``centred`` names the
    coefficients whose intervals were centred (``Interval.centred``, carried as ``centred`` in
    the audit's coefficients; none, and no centring is named), then the widening to hold the
    estimate that every interval of :func:`interval` gets. ``words`` translates (English by
    default)."""
    parts = []
    if centred:
        names = list(dict.fromkeys(centred))
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
        parts.append(words(CENTRING) % {"coefficients": listed})
    parts.append(words(WIDENING))
    return "; ".join(parts)


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
    family: Family = "alpha",
    centring: bool = True,
) -> Interval:
    """The ``method`` interval of the coefficient ``statistic`` around ``point``.

    ``family`` picks the reliability rule (:func:`reliability`). A reliable ``bayesian_prior``
    interval is centred on ``point`` when ``centring`` (the bench turns it off to show the
    interval before); any interval is then widened (never narrowed) to hold ``point``.
    Undefined resamples are left out of the quantiles.
    """
    rng = np.random.default_rng(seed)
    drawn_patterns, weights = _draw(method, patterns, sizes, resamples, rng)
    samples = statistic(drawn_patterns, weights)
    finite = samples[np.isfinite(samples)]
    reliable, reason = reliability(family, Evidence.of(patterns, sizes))
    if len(finite) == 0 or not math.isfinite(point):
        return Interval(None, None, method, False, reason, 0)
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
    centred = centring and reliable and CENTRED[family] and method == "bayesian_prior"
    if centred:
        finite = np.minimum(finite + (point - float(np.median(finite))), 1.0)
    low, high = _quantiles(finite, levels)
    return Interval(
        min(low, point),
        max(high, point),
        method,
        reliable,
        reason,
        len(finite),
        centred,
    )


def _draw(
    method: Method, patterns: IntArray, sizes: IntArray, resamples: int, rng: np.random.Generator
) -> tuple[IntArray, FloatArray]:
    """The answer patterns the draws weight, and the rows of weights ``method`` draws."""
    total = float(sizes.sum())
    if method in ("percentile", "bca"):
        return patterns, multinomial_weights(sizes, resamples, rng)
    if method == "bayesian":
        return patterns, dirichlet_weights(sizes.astype(np.float64), total, resamples, rng)
    if method == "bayesian_prior":
        drawn_patterns, shapes = with_prior_patterns(patterns, sizes)
        return drawn_patterns, dirichlet_weights(shapes, total, resamples, rng)
    raise ValueError(f"unknown interval method {method!r}")


def unreliable_text(reason: str) -> str:
    """How an interval that cannot be trusted is shown in place of its bounds."""
    return UNRELIABLE(reason=reason)
