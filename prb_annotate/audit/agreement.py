"""Agreement between annotators: pure functions over arrays, no Django.

Shapes used throughout:

- ``data``: annotators x units (rows are annotators, columns are the rated units), floats,
  ``NaN`` where an annotator did not rate a unit. Categorical answers are passed as their codes
  (0, 1, 2, ...) or as any numbers that appear in ``value_domain``.
- ``value_domain``: every value an answer *could* take, in order (ordered for ordinal,
  interval and ratio data). Pass it explicitly: chance agreement depends on the number of
  categories, so a category nobody happened to use must still count (Gwet's AC1, ordinal
  distances), and a result must not change because a value was absent from this sample.
- ``counts``: units x values, how many annotators gave each value to each unit. Every
  coefficient here except Cohen's kappa is a function of these counts alone, which is what
  makes the unit-level bootstrap cheap: each coefficient is computed from sums of per-unit
  terms, units with equal counts have equal terms, and a resample only needs how often each
  group of equal units was drawn (see :class:`Bootstrap`). All resamples are then one matrix
  product over the groups, whatever the number of units.

Undefined results (no unit rated twice, every rating the same value, ...) come back as ``NaN``;
:func:`undefined_reason` says why in words, and :class:`Estimate` carries that note.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats

from prb_annotate.audit import intervals
from prb_annotate.audit.phrases import Phrase
from prb_annotate.audit.words import gettext_noop

Level = Literal["nominal", "ordinal", "interval", "ratio"]
WeightKind = Literal["identity", "linear", "quadratic", "ordinal"]
Coefficient = Literal["alpha", "percent_agreement", "gwet", "fleiss_kappa"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# Rows x units (or x groups of equal units): the weight of each in a weighted sum.
WeightArray = IntArray | FloatArray

DEFAULT_RESAMPLES = 1000
# Which reliability rule of ``intervals`` each coefficient's interval follows.
RELIABILITY_FAMILY: dict[Coefficient, intervals.Family] = {
    "alpha": "alpha",
    "fleiss_kappa": "alpha",
    "gwet": "gwet",
    "percent_agreement": "gwet",
}


@dataclass(frozen=True)
class Estimate:
    """A coefficient with its confidence interval and whether that interval can be trusted.

    ``value`` is None when the coefficient is undefined for these data; ``note`` says why.
    ``method``, ``reliable``, ``reason`` and ``centred`` describe the interval
    (``intervals.Interval``); they are None and "" when no interval was asked for. ``units``:
    the units a coefficient computed on a subset of them read (Fleiss' kappa, on the units
    with the most common number of ratings); None, and left out of :meth:`as_dict`, otherwise.
    """

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    note: str = ""
    resamples: int = 0
    method: str | None = None
    reliable: bool | None = None
    reason: str = ""
    centred: bool | None = None
    units: int | None = None

    @classmethod
    def with_interval(cls, value: float, interval: intervals.Interval, note: str) -> Estimate:
        return cls(
            value,
            interval.low,
            interval.high,
            note=note,
            resamples=interval.resamples,
            method=interval.method,
            reliable=interval.reliable,
            reason=interval.reason,
            centred=interval.centred,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "note": self.note,
            "resamples": self.resamples,
            "method": self.method,
            "reliable": self.reliable,
            "reason": self.reason,
            "centred": self.centred,
        } | ({} if self.units is None else {"units": self.units})


# --------------------------------------------------------------------------------------------
# Shapes


def as_data(data: npt.ArrayLike) -> FloatArray:
    """``data`` as a 2-D float array (annotators x units)."""
    array = np.asarray(data, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"data must be annotators x units (2-D), got shape {array.shape}")
    return array


def domain_of(data: FloatArray, value_domain: npt.ArrayLike | None) -> FloatArray:
    """The explicit value domain, checked against the data; or the values that occur."""
    present = np.unique(data[~np.isnan(data)])
    if value_domain is None:
        return present.astype(np.float64)
    domain = np.asarray(value_domain, dtype=np.float64)
    if domain.ndim != 1 or len(np.unique(domain)) != len(domain):
        raise ValueError("value_domain must be a list of distinct values")
    outside = present[~np.isin(present, domain)]
    if len(outside):
        raise ValueError(f"data has values outside the value domain: {outside.tolist()}")
    return domain


def value_counts(data: npt.ArrayLike, value_domain: npt.ArrayLike | None = None) -> IntArray:
    """Units x values: how many annotators gave each value of the domain to each unit."""
    array = as_data(data)
    domain = domain_of(array, value_domain)
    counts = np.zeros((array.shape[1], len(domain)), dtype=np.int64)
    annotators, units = np.nonzero(~np.isnan(array))
    np.add.at(counts, (units, codes_in(domain, array[annotators, units])), 1)
    return counts


def codes_in(domain: FloatArray, values: FloatArray) -> IntArray:
    """Position of each value in ``domain`` (the values must all be in it)."""
    order = np.argsort(domain)
    return order[np.searchsorted(domain, values, sorter=order)].astype(np.int64)


# The notes a coefficient carries, in the words the report keeps (``phrases.py``).
NO_PAIRS = gettext_noop("undefined: no unit was rated by two annotators")
NO_VARIATION = gettext_noop(
    "undefined: every rating has the same value, so agreement by chance is total"
)
UNDEFINED = gettext_noop("undefined for these ratings")
FLEISS_SUBSET = Phrase(
    gettext_noop(
        "computed on the %(kept)s of %(rated)s rated units that have exactly %(ratings)s ratings"
    )
)


def undefined_reason(counts: IntArray) -> str:
    """Why a chance-corrected coefficient is undefined for these counts, or "" when it is not."""
    raters = counts.sum(axis=1)
    pairable = counts[raters >= 2]
    if len(pairable) == 0:
        return NO_PAIRS
    if np.count_nonzero(pairable.sum(axis=0)) < 2:
        return NO_VARIATION
    return ""


# --------------------------------------------------------------------------------------------
# Weights between values (1 = full agreement, 0 = none)


def weight_matrix(value_domain: npt.ArrayLike, kind: WeightKind = "identity") -> FloatArray:
    """Agreement weights between domain values, as in Gwet (2014), ch. 3.

    ``identity``: exact matches only. ``linear`` / ``quadratic``: 1 - |k-l| / range, squared for
    quadratic, on the values themselves. ``ordinal``: on ranks, 1 - C(|k-l|+1, 2) / max.
    """
    domain = np.asarray(value_domain, dtype=np.float64)
    size = len(domain)
    if kind == "identity":
        return np.eye(size)
    if size < 2:
        return np.ones((size, size))
    if kind in ("linear", "quadratic"):
        spread = domain.max() - domain.min()
        distance = np.abs(domain[:, None] - domain[None, :]) / spread
        return 1.0 - (distance if kind == "linear" else distance**2)
    if kind == "ordinal":
        ranks = np.arange(size)
        span = np.abs(ranks[:, None] - ranks[None, :]) + 1.0
        pairs = span * (span - 1) / 2
        return 1.0 - pairs / pairs.max()
    raise ValueError(f"unknown weights {kind!r}")


# --------------------------------------------------------------------------------------------
# Coefficients from counts, for one or many unit weightings at once.
#
# ``unit_weights`` is resamples x units (a row of ones is the plain point estimate). Every
# function returns one value per row.


def _safe_divide(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        result = numerator / denominator
    return np.where(denominator == 0, np.nan, result)


def _distances(domain: FloatArray, level: Level, pairable_values: FloatArray) -> FloatArray:
    """Krippendorff's squared distances, resamples x V x V (ordinal depends on the marginals)."""
    resamples, size = pairable_values.shape
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(size), (resamples, size, size))
    if level == "interval":
        delta = (domain[:, None] - domain[None, :]) ** 2
        return np.broadcast_to(delta, (resamples, size, size))
    if level == "ratio":
        total = domain[:, None] + domain[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            delta = np.where(total == 0, 0.0, ((domain[:, None] - domain[None, :]) / total) ** 2)
        return np.broadcast_to(delta, (resamples, size, size))
    if level == "ordinal":
        # Sum of the marginals from value c to value k, minus half of both ends, squared.
        cumulative = np.cumsum(pairable_values, axis=1)
        low = np.minimum.outer(np.arange(size), np.arange(size))
        high = np.maximum.outer(np.arange(size), np.arange(size))
        between = cumulative[:, high] - cumulative[:, low] + pairable_values[:, low]
        ends = (pairable_values[:, :, None] + pairable_values[:, None, :]) / 2
        return (between - ends) ** 2
    raise ValueError(f"unknown level of measurement {level!r}")


@dataclass(frozen=True)
class UnitTerms:
    """A coefficient written as per-unit terms whose sums over units determine it.

    A resample weights each unit by how often it was drawn, so the resample's sums are one row
    of ``unit_weights @ terms``; ``combine`` turns rows of sums into the coefficient. Several
    coefficients share one matrix product (:func:`evaluate`), reading the resample matrix once.
    """

    terms: FloatArray  # units x columns
    combine: Callable[[FloatArray], FloatArray]  # rows x columns -> one value per row


def evaluate(
    coefficients: Sequence[UnitTerms], unit_weights: WeightArray | None = None
) -> list[FloatArray]:
    """Each coefficient for each row of ``unit_weights`` (or once, unweighted, when None)."""
    stacked = np.hstack([coefficient.terms for coefficient in coefficients])
    if unit_weights is None:
        sums = stacked.sum(axis=0, keepdims=True)
    else:
        sums = np.asarray(unit_weights, dtype=np.float64) @ stacked
    results = []
    start = 0
    for coefficient in coefficients:
        width = coefficient.terms.shape[1]
        results.append(coefficient.combine(sums[:, start : start + width]))
        start += width
    return results


def count_groups(counts: IntArray) -> IntArray:
    """A label per unit, the same for units with the same answer counts (so the same terms)."""
    base = int(counts.max(initial=0)) + 1
    if base ** counts.shape[1] < 2**62:
        # Each row as one integer: sorting integers is far cheaper than sorting rows.
        keys = counts.astype(np.int64) @ (base ** np.arange(counts.shape[1], dtype=np.int64))
        return np.unique(keys, return_inverse=True)[1].ravel()
    return np.unique(counts, axis=0, return_inverse=True)[1].ravel()


def count_patterns(counts: IntArray) -> tuple[IntArray, IntArray]:
    """(patterns, sizes): one row of answer counts per group of equal units, and its units."""
    groups = count_groups(counts)
    sizes = np.bincount(groups, minlength=int(groups.max(initial=-1)) + 1).astype(np.int64)
    first = np.unique(groups, return_index=True)[1]
    return counts[first], sizes


def unit_coincidences(counts: IntArray) -> FloatArray:
    """Each unit's contribution to Krippendorff's coincidence matrix, flattened: units x V*V."""
    counts_f = counts.astype(np.float64)
    raters = counts_f.sum(axis=1)
    size = counts.shape[1]
    pairs = counts_f[:, :, None] * counts_f[:, None, :]
    pairs[:, np.arange(size), np.arange(size)] -= counts_f
    scale = np.where(raters >= 2, 1.0 / np.maximum(raters - 1, 1), 0.0)
    return (pairs * scale[:, None, None]).reshape(len(counts), size * size)


def alpha_terms(counts: IntArray, value_domain: npt.ArrayLike, level: Level) -> UnitTerms:
    """Krippendorff's alpha: the terms are the units' coincidence matrices."""
    domain = np.asarray(value_domain, dtype=np.float64)
    size = len(domain)

    def combine(sums: FloatArray) -> FloatArray:
        observed = sums.reshape(len(sums), size, size)
        marginals = observed.sum(axis=2)
        total = marginals.sum(axis=1)
        expected = marginals[:, :, None] * marginals[:, None, :]
        expected[:, np.arange(size), np.arange(size)] -= marginals
        delta = _distances(domain, level, marginals)
        disagreement = (observed * delta).sum(axis=(1, 2))
        chance = (expected * delta).sum(axis=(1, 2))
        return 1.0 - _safe_divide((total - 1) * disagreement, chance)

    return UnitTerms(unit_coincidences(counts), combine)


def _weighted_unit_agreement(counts: IntArray, weights_vv: FloatArray) -> FloatArray:
    """Per unit: the share of ordered rater pairs that agree (with partial credit by weight)."""
    counts_f = counts.astype(np.float64)
    raters = counts_f.sum(axis=1)
    credited = counts_f @ weights_vv.T  # r*_uk = sum_l w_kl n_ul
    agreeing = (counts_f * (credited - 1.0)).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = agreeing / (raters * (raters - 1))
    return np.where(raters >= 2, share, 0.0)


def percent_agreement_terms(counts: IntArray, weights_vv: FloatArray | None = None) -> UnitTerms:
    """Mean share of agreeing rater pairs over units rated at least twice."""
    size = counts.shape[1]
    per_unit = _weighted_unit_agreement(counts, np.eye(size) if weights_vv is None else weights_vv)
    pairable = (counts.sum(axis=1) >= 2).astype(np.float64)
    return UnitTerms(
        np.column_stack([per_unit, pairable]), lambda sums: _safe_divide(sums[:, 0], sums[:, 1])
    )


def gwet_terms(counts: IntArray, weights_vv: FloatArray) -> UnitTerms:
    """Gwet's AC1 (identity weights) or AC2 (other weights), multiple raters, missing data.

    Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., ch. 3: percent agreement over
    units with two or more ratings; chance agreement from the category shares averaged over
    units with at least one rating, scaled by sum(weights) / (q (q - 1)).
    """
    size = counts.shape[1]
    counts_f = counts.astype(np.float64)
    raters = counts_f.sum(axis=1)
    rated = (raters >= 1).astype(np.float64)
    shares = counts_f / np.maximum(raters, 1)[:, None]
    agreement = percent_agreement_terms(counts, weights_vv)
    scale = weights_vv.sum() / (size * (size - 1))

    def combine(sums: FloatArray) -> FloatArray:
        observed = agreement.combine(sums[:, :2])
        prevalence = _safe_divide(sums[:, 3:], sums[:, 2:3])
        chance = scale * (prevalence * (1 - prevalence)).sum(axis=1)
        return _safe_divide(observed - chance, 1.0 - chance)

    return UnitTerms(np.column_stack([agreement.terms, rated, shares]), combine)


def fleiss_terms(counts: IntArray) -> UnitTerms:
    """Fleiss' kappa (1971). Units without ratings are ignored; the others need equal raters."""
    raters = counts.sum(axis=1)
    rated = raters > 0
    per_unit_raters = np.unique(raters[rated])
    if len(per_unit_raters) > 1:
        raise ValueError(
            "Fleiss' kappa needs the same number of raters on every unit; "
            f"found {per_unit_raters.tolist()}"
        )
    m = float(per_unit_raters[0]) if len(per_unit_raters) else 0.0
    counts_f = counts.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_unit = np.where(rated, ((counts_f**2).sum(axis=1) - m) / (m * (m - 1)), 0.0)

    def combine(sums: FloatArray) -> FloatArray:
        if m < 2:
            return np.full(len(sums), np.nan)
        observed = _safe_divide(sums[:, 0], sums[:, 1])
        proportions = _safe_divide(sums[:, 2:], (sums[:, 1] * m)[:, None])
        chance = (proportions**2).sum(axis=1)
        return _safe_divide(observed - chance, 1.0 - chance)

    return UnitTerms(np.column_stack([per_unit, rated.astype(np.float64), counts_f]), combine)


def alpha_from_counts(
    counts: IntArray,
    value_domain: npt.ArrayLike,
    level: Level,
    unit_weights: WeightArray | None = None,
) -> FloatArray:
    """Krippendorff's alpha for each row of ``unit_weights`` (vectorised; see module doc)."""
    return evaluate([alpha_terms(counts, value_domain, level)], unit_weights)[0]


def percent_agreement_from_counts(
    counts: IntArray, unit_weights: WeightArray | None = None
) -> FloatArray:
    return evaluate([percent_agreement_terms(counts)], unit_weights)[0]


def gwet_from_counts(
    counts: IntArray, weights_vv: FloatArray, unit_weights: WeightArray | None = None
) -> FloatArray:
    return evaluate([gwet_terms(counts, weights_vv)], unit_weights)[0]


def fleiss_from_counts(counts: IntArray, unit_weights: WeightArray | None = None) -> FloatArray:
    return evaluate([fleiss_terms(counts)], unit_weights)[0]


# --------------------------------------------------------------------------------------------
# Public coefficients over annotators x units data


def krippendorff_alpha(
    data: npt.ArrayLike, level: Level = "nominal", value_domain: npt.ArrayLike | None = None
) -> float:
    """Krippendorff's alpha through the ``krippendorff`` package; NaN when undefined.

    Undefined (see :func:`undefined_reason`): no unit rated twice, or every pairable rating
    has the same value. The package raises or divides by zero there; we return NaN instead.
    """
    array = as_data(data)
    domain = domain_of(array, value_domain)
    counts = value_counts(array, domain)
    if len(domain) < 2 or undefined_reason(counts):
        return math.nan
    return float(
        krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)
    )


def percent_agreement(data: npt.ArrayLike, value_domain: npt.ArrayLike | None = None) -> float:
    """Share of agreeing annotator pairs within a unit, averaged over units rated twice or more."""
    return float(percent_agreement_from_counts(value_counts(data, value_domain))[0])


def gwet_ac1(data: npt.ArrayLike, value_domain: npt.ArrayLike | None = None) -> float:
    """Gwet's AC1: chance-corrected agreement that stays stable when one category dominates."""
    array = as_data(data)
    domain = domain_of(array, value_domain)
    return float(gwet_from_counts(value_counts(array, domain), np.eye(len(domain)))[0])


def gwet_ac2(
    data: npt.ArrayLike, value_domain: npt.ArrayLike, weights: WeightKind = "ordinal"
) -> float:
    """Gwet's AC2: AC1 with partial credit between nearby values (ordinal ratings)."""
    array = as_data(data)
    domain = domain_of(array, value_domain)
    return float(gwet_from_counts(value_counts(array, domain), weight_matrix(domain, weights))[0])


def fleiss_kappa(data: npt.ArrayLike, value_domain: npt.ArrayLike | None = None) -> float:
    """Fleiss' kappa; every rated unit must have the same number of ratings (ValueError if not)."""
    return float(fleiss_from_counts(value_counts(data, value_domain))[0])


def fleiss_kappa_from_table(table: npt.ArrayLike) -> float:
    """Fleiss' kappa from the usual subjects x categories table of rater counts."""
    return float(fleiss_from_counts(np.asarray(table, dtype=np.int64))[0])


def cohen_kappa_from_table(table: npt.ArrayLike, weights_vv: npt.ArrayLike | None = None) -> float:
    """Cohen's kappa (weighted when ``weights_vv`` is given) from a V x V contingency table."""
    counts = np.asarray(table, dtype=np.float64)
    total = counts.sum()
    if total == 0:
        return math.nan
    weights = np.eye(len(counts)) if weights_vv is None else np.asarray(weights_vv, np.float64)
    joint = counts / total
    observed = (weights * joint).sum()
    chance = (weights * np.outer(joint.sum(axis=1), joint.sum(axis=0))).sum()
    if math.isclose(chance, 1.0):
        return math.nan
    return float((observed - chance) / (1.0 - chance))


def cohen_kappa(
    rater_a: npt.ArrayLike,
    rater_b: npt.ArrayLike,
    value_domain: npt.ArrayLike | None = None,
    weights: WeightKind = "identity",
) -> float:
    """Cohen's kappa between two annotators over the units both rated (NaN marks missing)."""
    both = as_data([np.asarray(rater_a, np.float64), np.asarray(rater_b, np.float64)])
    domain = domain_of(both, value_domain)
    common = ~np.isnan(both).any(axis=0)
    if common.sum() == 0 or len(domain) < 2:
        return math.nan
    codes = codes_in(domain, both[:, common])
    table = np.zeros((len(domain), len(domain)))
    np.add.at(table, (codes[0], codes[1]), 1)
    return cohen_kappa_from_table(table, weight_matrix(domain, weights))


@dataclass(frozen=True)
class PairwiseKappa:
    """Cohen's kappa for every pair of annotators (symmetric; NaN where undefined)."""

    kappa: FloatArray
    common_units: IntArray


def pairwise_cohen_kappa(
    data: npt.ArrayLike,
    value_domain: npt.ArrayLike | None = None,
    weights: WeightKind = "identity",
    *,
    min_common: int = 2,
) -> PairwiseKappa:
    """Cohen's kappa for each pair of annotators on the units they both rated."""
    array = as_data(data)
    domain = domain_of(array, value_domain)
    present = (~np.isnan(array)).astype(np.int64)
    common = present @ present.T
    kappa = np.full(common.shape, np.nan)
    for a, b in zip(*np.nonzero(np.triu(common >= min_common, k=1)), strict=True):
        kappa[a, b] = kappa[b, a] = cohen_kappa(array[a], array[b], domain, weights)
    return PairwiseKappa(kappa=kappa, common_units=common)


# --------------------------------------------------------------------------------------------
# Bootstrap over units


@dataclass(frozen=True)
class Bootstrap:
    """Resampled intervals: ``resamples`` draws of weights over the units, seeded.

    Units with equal answer counts contribute equal terms to every coefficient, so a resample
    is fully described by the weight its draw gives each group of equal units (a multinomial
    count for the unit bootstrap, a Gamma draw for the Bayesian one: see ``intervals``). The
    resamples are the same, in distribution, as weighting units one by one, but cost
    resamples x groups numbers (k annotators on a short scale give tens of groups) instead of
    resamples x units: 100,000 pairs take as little time and memory as 100. ``method`` is one
    of ``intervals.METHODS``; the default is the one whose coverage docs/statistics.md shows.
    """

    resamples: int = DEFAULT_RESAMPLES
    seed: int | None = 0
    method: intervals.Method = intervals.DEFAULT_METHOD
    # False gives the default method's interval as it was before centring (the bench's "before").
    centring: bool = True


@dataclass
class AgreementData:
    """One question's ratings prepared once for all its coefficients and resamples."""

    counts: IntArray
    value_domain: FloatArray

    @classmethod
    def from_data(cls, data: npt.ArrayLike, value_domain: npt.ArrayLike) -> AgreementData:
        array = as_data(data)
        domain = domain_of(array, value_domain)
        return cls(counts=value_counts(array, domain), value_domain=domain)

    def _terms(
        self, coefficient: Coefficient, counts: IntArray, options: Mapping[str, Any]
    ) -> UnitTerms:
        if coefficient == "alpha":
            return alpha_terms(counts, self.value_domain, options.get("level", "nominal"))
        if coefficient == "percent_agreement":
            return percent_agreement_terms(counts)
        if coefficient == "gwet":
            kind = options.get("weights", "identity")
            return gwet_terms(counts, weight_matrix(self.value_domain, kind))
        if coefficient == "fleiss_kappa":
            return fleiss_terms(counts)
        raise ValueError(f"unknown coefficient {coefficient!r}")

    def _undefined(self, coefficient: Coefficient, counts: IntArray) -> str:
        reason = undefined_reason(counts)
        if reason == NO_VARIATION and coefficient in ("percent_agreement", "gwet"):
            # Unanimity is perfect observed agreement; AC1 stays defined (= 1) where kappa-type
            # coefficients divide by zero: the prevalence paradox AC1 was made for.
            return ""
        return reason

    def _fleiss_counts(self) -> tuple[IntArray, str]:
        """Fleiss needs equal raters: keep the units with the most common count, and say so."""
        raters = self.counts.sum(axis=1)
        sizes, frequency = np.unique(raters[raters >= 2], return_counts=True)
        if len(sizes) == 0 or np.isin(raters[raters > 0], sizes[:1]).all():
            return self.counts, ""
        most = sizes[np.argmax(frequency)]
        note = FLEISS_SUBSET(
            kept=int(frequency.max()), rated=int((raters > 0).sum()), ratings=int(most)
        )
        return np.where((raters == most)[:, None], self.counts, 0), note

    def estimates(
        self,
        requests: Sequence[tuple[Coefficient, Mapping[str, Any]]],
        bootstrap: Bootstrap | None = None,
        *,
        confidence: float = 0.95,
    ) -> list[Estimate]:
        """Several coefficients (name, options) at once, each over the same seeded resamples.

        Terms are computed once per group of units with equal counts and weighted by the
        group's size (the point estimate) or by its weight in each resample (the interval).
        """
        results = []
        for coefficient, options in requests:
            if coefficient == "fleiss_kappa":
                counts, note = self._fleiss_counts()
                # Fleiss reads the units left with two ratings or more: its n.
                units: int | None = int((counts.sum(axis=1) >= 2).sum())
            else:
                counts, note, units = self.counts, "", None
            estimate = self._estimate(coefficient, options, counts, note, bootstrap, confidence)
            results.append(replace(estimate, units=units))
        return results

    def _estimate(
        self,
        coefficient: Coefficient,
        options: Mapping[str, Any],
        counts: IntArray,
        note: str,
        bootstrap: Bootstrap | None,
        confidence: float,
    ) -> Estimate:
        reason = self._undefined(coefficient, counts)
        if reason:
            return Estimate(value=None, note=_join(note, reason))
        patterns, sizes = count_patterns(counts)
        statistic = self.statistic(coefficient, options)
        point = float(statistic(patterns, sizes[None, :].astype(np.float64))[0])
        if not math.isfinite(point):
            return Estimate(value=None, note=_join(note, UNDEFINED))
        if bootstrap is None or not bootstrap.resamples:
            return Estimate(value=point, note=note)
        found = intervals.interval(
            statistic,
            patterns,
            sizes,
            point,
            method=bootstrap.method,
            resamples=bootstrap.resamples,
            seed=bootstrap.seed,
            confidence=confidence,
            family=RELIABILITY_FAMILY[coefficient],
            centring=bootstrap.centring,
        )
        return Estimate.with_interval(point, found, note)

    def statistic(
        self, coefficient: Coefficient, options: Mapping[str, Any]
    ) -> intervals.Statistic:
        """The coefficient as ``intervals`` reads it: of answer patterns and their weights."""

        def value(patterns: IntArray, weights: FloatArray) -> FloatArray:
            return evaluate([self._terms(coefficient, patterns, options)], weights)[0]

        return value

    def estimate(
        self,
        coefficient: Coefficient,
        bootstrap: Bootstrap | None = None,
        *,
        confidence: float = 0.95,
        **options: Any,
    ) -> Estimate:
        """Point estimate and, when ``bootstrap`` is given, its CI."""
        return self.estimates([(coefficient, options)], bootstrap, confidence=confidence)[0]


def _join(*parts: str) -> str:
    return "; ".join(part for part in parts if part)


def bootstrap_estimate(
    data: npt.ArrayLike,
    coefficient: Coefficient,
    *,
    value_domain: npt.ArrayLike | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
    **options: Any,
) -> Estimate:
    """A coefficient with a unit-level bootstrap interval (seeded: same seed, same interval).

    ``coefficient`` is "alpha" (option ``level``), "percent_agreement", "gwet" (option
    ``weights``: "identity" for AC1, "ordinal" etc. for AC2) or "fleiss_kappa".
    """
    array = as_data(data)
    prepared = AgreementData.from_data(array, domain_of(array, value_domain))
    return prepared.estimate(
        coefficient, Bootstrap(resamples, seed), confidence=confidence, **options
    )


# --------------------------------------------------------------------------------------------
# Proportions


def wilson_interval(successes: int, total: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927; Newcombe 1998, method 3)."""
    if total <= 0:
        return math.nan, math.nan
    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    share = successes / total
    denominator = 1 + z**2 / total
    centre = (share + z**2 / (2 * total)) / denominator
    half = z * math.sqrt(share * (1 - share) / total + z**2 / (4 * total**2)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def binomial_p_value(successes: int, total: int, expected: float = 0.5) -> float:
    """Two-sided exact binomial test p-value (NaN when there is nothing to test)."""
    if total <= 0:
        return math.nan
    return float(stats.binomtest(successes, total, expected).pvalue)


# --------------------------------------------------------------------------------------------
# Per-annotator agreement


def leave_one_out_agreement(
    data: npt.ArrayLike, value_domain: npt.ArrayLike | None = None
) -> tuple[FloatArray, IntArray]:
    """Per annotator: share of their answers that match the majority of the *other* annotators.

    The others' majority is their most frequent value when it is unique; units where the others
    tie, or where nobody else answered, are not counted. Returns (share, units counted).
    """
    agreeing, counted = leave_one_out_counts(data, value_domain)
    return _safe_divide(agreeing.astype(np.float64), counted.astype(np.float64)), counted


def leave_one_out_counts(
    data: npt.ArrayLike, value_domain: npt.ArrayLike | None = None
) -> tuple[IntArray, IntArray]:
    """Per annotator: (answers matching the others' unique majority, answers counted)."""
    array = as_data(data)
    domain = domain_of(array, value_domain)
    counts = value_counts(array, domain)
    annotators, units = np.nonzero(~np.isnan(array))
    codes = codes_in(domain, array[annotators, units])
    others = counts[units].copy()
    others[np.arange(len(units)), codes] -= 1
    top = others.max(axis=1)
    unique_top = (others == top[:, None]).sum(axis=1) == 1
    counted = (top > 0) & unique_top
    agrees = counted & (others.argmax(axis=1) == codes)
    n_annotators = array.shape[0]
    counted_per = np.bincount(annotators[counted], minlength=n_annotators).astype(np.int64)
    agree_per = np.bincount(annotators[agrees], minlength=n_annotators).astype(np.int64)
    return agree_per, counted_per
