"""Prediction-powered designs that spend fewer human judgements: the model's probabilities in
the estimate, human samples drawn where the model is unsure, and the human budget allocated
across categories. Pure functions over arrays; no ORM.

Per category (stratum ``h``) there are ``N`` pairs and the model gave each pair ``i`` a
probability ``q_i`` that it is validated (a hard verdict is the probability 0 or 1). The human
sample is drawn by **Poisson sampling** (Hájek 1964; Särndal, Swensson & Wretman 1992, §3.5):
each pair independently with its own inclusion probability ``pi_i``, fixed before any human
answer, so the sample is without replacement and its size is random with mean ``sum pi_i``.
Uniform ``pi_i = n / N`` is the planned sample's design up to the random size; **active**
sampling (Zrnic & Candès 2024) takes ``pi_i`` proportional to the model's uncertainty
``sqrt(q_i (1 - q_i))`` (the standard deviation of a verdict the model calls with
probability ``q_i``), never below ``floor * n / N`` so that every pair can be drawn, and never
above 1.

The estimate is the **difference estimator** with the model's probabilities recalibrated on
the sample (Cochran 1977 §7; Särndal et al. 1992 §6.5, model-assisted estimation; the
recalibration of Ji, Lei & Zrnic 2025, Platt's logistic form, whose slope plays the part of
PPI++'s power-tuned weight, Angelopoulos, Duchi & Zrnic 2024): ``g_i = sigmoid(c + d logit
q_i)``, with ``(c, d)`` the logistic fit of ``y`` on the model's logits over the sample
weighted by ``1 / pi_i``, and

    theta = mean_N(g) + (1/N) sum_sample (y_i - g_i) / pi_i = mean_N(g)

(the weighted fit's residuals sum to zero). It is consistent for any ``q``, however wrong or
miscalibrated the model is: the fit only chooses which prediction's errors to correct.
Its variance is estimated by Poisson sampling's Horvitz-Thompson formula on the residuals,
finite-population correction ``1 - pi_i`` included, with two degrees of freedom for the fit:

    V = (1/N^2) sum_sample (1 - pi_i) / pi_i^2 e_i^2 * n / (n - 2)

which at uniform ``pi = n/N`` is ``(1/n - 1/N) S_e^2``, the planned sample's variance of the
difference estimator. One pseudo-pair with the Bernoulli variance of the shrunk share is added
to the residuals so that a sample the model happened to fit exactly does not claim an exact
estimate. The interval is Wilson's at the effective size ``p q / V`` with half a pair of
continuity correction, as ``ppi`` and ``sampling`` read theirs.

Invariants: a model with no information (the same probability for every sampled pair) under
the uniform design gives exactly ``sampling.category_estimate``, the humans-only interval;
hard verdicts under the uniform design are read by ``ppi.stratum_estimate`` (PPI++ on the 2 x 2
table), so the probabilities are used only where the model has them.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from prb_annotate.audit import ppi, rule, sampling

# One pseudo-pair whose squared residual is p q at the shrunk share (see the docstring).
PSEUDO_RESIDUAL_PAIRS = 1.0
# Parameters fitted by the recalibration (intercept and slope): the variance's degrees of freedom.
FITTED_PARAMETERS = 2
# Active sampling's default floor: no pair below 0.4 of the uniform inclusion probability
# (measured: 0.25 left a category's coverage at 0.925 for a model miscalibrated unlike Platt).
ACTIVE_FLOOR = 0.4
# A ridge on the recalibration's slope, one pseudo-observation's worth: it keeps the fit
# finite when the sample separates perfectly (a model right on every sampled pair).
RIDGE = 1.0

UNIFORM = "uniform"
ACTIVE = "active"


@dataclass(frozen=True)
class Method:
    """An estimate's method: its key (written in JSON), its words and its citations."""

    key: str
    words: str
    citations: str


HUMANS_ONLY = Method(
    "wilson_cc_fpc",
    "the humans' share with a continuity-corrected Wilson interval",
    "Newcombe 1998",
)
HARD_PPI = Method(
    ppi.PPI_METHOD,
    "prediction-powered inference on the model's verdicts, power-tuned (PPI++)",
    "Angelopoulos et al. 2023; Angelopoulos, Duchi & Zrnic 2024",
)
RECALIBRATED_PPI = Method(
    "recalibrated_ppi_wilson_cc",
    "prediction-powered inference on the model's probabilities, recalibrated on the sample",
    "Angelopoulos, Duchi & Zrnic 2024; Ji, Lei & Zrnic 2025",
)
ACTIVE_PPI = Method(
    "active_ppi_wilson_cc",
    "active inference: humans drawn with probability rising with the model's uncertainty, "
    "inverse-probability weighted, on the model's recalibrated probabilities",
    "Zrnic & Candès 2024; Särndal, Swensson & Wretman 1992",
)
METHODS = {method.key: method for method in (HUMANS_ONLY, HARD_PPI, RECALIBRATED_PPI, ACTIVE_PPI)}


class DesignError(ValueError):
    """Bad input to a design, naming the field."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def checked_scores(scores: Sequence[float] | np.ndarray, field: str = "scores") -> np.ndarray:
    """The model's probabilities as floats in [0, 1], or a clear error naming the first bad one."""
    values = np.asarray(scores, dtype=float)
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0) | (values > 1))
    if bad.size:
        raise DesignError(f"{field}[{bad[0]}]", f"{values[bad[0]]!r} is not a probability")
    return values


def uncertainty(scores: Sequence[float] | np.ndarray) -> np.ndarray:
    """sqrt(q (1 - q)): the standard deviation of a verdict the model calls with probability q
    (0 for a hard verdict, 1/2 at q = 1/2)."""
    values = checked_scores(scores)
    return np.sqrt(values * (1 - values))


def inclusion_probabilities(
    weights: Sequence[float] | np.ndarray, budget: float, floor: float = ACTIVE_FLOOR
) -> np.ndarray:
    """pi_i = min(1, max(floor * budget / N, c w_i)) with c such that sum pi_i = budget.

    ``weights`` (the model's uncertainty for active sampling) may be all zero: then every pair
    gets budget / N, the uniform design. ``floor`` in (0, 1] is the share of the uniform
    probability no pair falls below (1: uniform)."""
    values = np.asarray(weights, dtype=float)
    size = values.size
    if size == 0:
        raise DesignError("weights", "no pairs to draw from")
    if np.any(~np.isfinite(values) | (values < 0)):
        raise DesignError("weights", "must be finite and not negative")
    if not 0 < budget <= size:
        raise DesignError("budget", f"must be above 0 and at most the {size} pairs")
    if not 0 < floor <= 1:
        raise DesignError("floor", "must be above 0 and at most 1")
    lowest = floor * budget / size
    if values.sum() <= 0 or floor == 1:
        return np.full(size, budget / size)

    def spent(scale: float) -> float:
        return float(np.minimum(1.0, np.maximum(lowest, scale * values)).sum())

    # spent() rises with the scale from N * lowest <= budget to N >= budget: bisect on it.
    low, high = 0.0, 1.0
    while spent(high) < budget:
        high *= 2
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if spent(middle) < budget else (low, middle)
    return np.minimum(1.0, np.maximum(lowest, high * values))


def active_probabilities(
    scores: Sequence[float] | np.ndarray, budget: float, floor: float = ACTIVE_FLOOR
) -> np.ndarray:
    """Active sampling's inclusion probabilities: proportional to the model's uncertainty."""
    return inclusion_probabilities(uncertainty(scores), budget, floor)


def poisson_draw(inclusion: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The drawn pairs' indices: each pair independently with its inclusion probability."""
    return np.flatnonzero(rng.random(inclusion.size) < inclusion)


@dataclass(frozen=True)
class ScoredStratum:
    """One category: the model's probability on each of its ``N`` pairs, each pair's inclusion
    probability, and the human verdicts (1 validated, 0 not) of the decided drawn pairs."""

    category: str
    scores: np.ndarray  # N probabilities
    inclusion: np.ndarray  # N inclusion probabilities, fixed before any human answer
    drawn: np.ndarray  # indices into scores of the decided drawn pairs
    human: np.ndarray  # their verdicts, in the same order

    @property
    def population(self) -> int:
        return int(self.scores.size)

    @property
    def sample(self) -> int:
        return int(self.drawn.size)

    def check(self) -> None:
        """A clear error naming the category and the field that does not fit."""
        where = f"category {self.category!r}"
        checked_scores(self.scores, f"{where} scores")
        if self.inclusion.shape != self.scores.shape:
            raise DesignError(f"{where} inclusion", "needs one probability per pair")
        if np.any(~(self.inclusion > 0) | (self.inclusion > 1)):
            raise DesignError(f"{where} inclusion", "must be above 0 and at most 1")
        if self.drawn.shape != self.human.shape:
            raise DesignError(f"{where} human", "needs one verdict per drawn pair")
        if self.sample and (self.drawn.min() < 0 or self.drawn.max() >= self.population):
            raise DesignError(f"{where} drawn", "names a pair outside the category")
        if np.unique(self.drawn).size != self.sample:
            raise DesignError(f"{where} drawn", "names a pair twice")
        if not np.all(np.isin(self.human, (0, 1))):
            raise DesignError(f"{where} human", "verdicts must be 0 or 1")


def _uniform(stratum: ScoredStratum) -> bool:
    return bool(np.ptp(stratum.inclusion) <= 1e-12)


def _hard(scores: np.ndarray) -> bool:
    return bool(np.all((scores == 0) | (scores == 1)))


def difference_estimate(stratum: ScoredStratum, predictions: np.ndarray) -> tuple[float, float]:
    """The Horvitz-Thompson difference estimator for fixed predictions ``g`` (one per pair of
    the category) and its variance estimate under Poisson sampling:

        theta = mean_N(g) + (1/N) sum_sample (y_i - g_i) / pi_i
        V     = (1/N^2) sum_sample (1 - pi_i) / pi_i^2 (y_i - g_i)^2

    both unbiased over the draws for any fixed ``g`` (Särndal et al. 1992, §3.5)."""
    pi = stratum.inclusion[stratum.drawn]
    residuals = stratum.human - predictions[stratum.drawn]
    population = stratum.population
    share = float(predictions.mean()) + float(np.sum(residuals / pi)) / population
    variance = float(np.sum((1 - pi) / pi**2 * residuals**2)) / population**2
    return share, variance


def logistic_recalibration(stratum: ScoredStratum) -> tuple[np.ndarray, float]:
    """g = sigmoid(c + d logit q) for every pair, with (c, d) the logistic fit of the human
    verdicts on the model's logits over the sample, weighted by 1 / pi (Platt 1999), the
    slope under a ``RIDGE`` penalty; and d. The intercept's score equation makes the weighted
    residuals sum to zero, so the estimate is mean_N(g). A model whose sampled probabilities
    do not vary gets d = 0: g is the sample's weighted share."""
    logits = _logits(stratum.scores)
    x = logits[stratum.drawn]
    weights = 1 / stratum.inclusion[stratum.drawn]
    y = stratum.human.astype(float)
    design = np.column_stack([np.ones_like(x), x])
    coefficients = np.zeros(2)
    for _ in range(50):
        fitted = _sigmoid(design @ coefficients)
        gradient = design.T @ (weights * (y - fitted)) - RIDGE * np.array([0, coefficients[1]])
        hessian = design.T @ (design * (weights * fitted * (1 - fitted))[:, None])
        hessian[1, 1] += RIDGE
        step = np.linalg.solve(hessian + 1e-12 * np.eye(2), gradient)
        coefficients += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return _sigmoid(coefficients[0] + coefficients[1] * logits), float(coefficients[1])


def _sigmoid(values: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x) without overflow for large |x|."""
    return np.asarray(np.exp(-np.logaddexp(0.0, -values)))


def _logits(scores: np.ndarray) -> np.ndarray:
    clipped = np.clip(scores, 1e-6, 1 - 1e-6)
    return np.asarray(np.log(clipped / (1 - clipped)))


@dataclass(frozen=True)
class StratumFigures:
    """A category's estimate: share, variance, the shrunk share its effective size uses, the
    human pairs it rests on, and the method that produced it."""

    share: float
    variance: float
    shrunk: float
    sample: int
    method: Method
    slope: float | None = None


def stratum_figures(stratum: ScoredStratum) -> StratumFigures | None:
    """The category's figures under its design; None below three decided drawn pairs (the
    fit takes two degrees of freedom)."""
    stratum.check()
    n, population = stratum.sample, stratum.population
    if n < FITTED_PARAMETERS + 1:
        return None
    validated = int(stratum.human.sum())
    shrunk = sampling.shrunk_share(validated, n)
    if _uniform(stratum) and np.ptp(stratum.scores[stratum.drawn]) == 0:
        # No information in the model: exactly the humans' own estimate.
        variance = sampling.sample_variance(shrunk, n, population)
        return StratumFigures(validated / n, variance, shrunk, n, HUMANS_ONLY)
    predictions, slope = logistic_recalibration(stratum)
    share, raw = difference_estimate(stratum, predictions)
    mean_pi = float(stratum.inclusion[stratum.drawn].mean())
    pseudo = PSEUDO_RESIDUAL_PAIRS * (1 - mean_pi) / mean_pi**2 * shrunk * (1 - shrunk)
    variance = (raw + pseudo / population**2) * n / (n - FITTED_PARAMETERS)
    method = RECALIBRATED_PPI if _uniform(stratum) else ACTIVE_PPI
    clipped = min(1.0, max(0.0, share))
    return StratumFigures(
        clipped, variance, sampling.shrunk_share(clipped * n, n), n, method, slope
    )


def _interval(
    share: float, variance: float, shrunk: float, sample: int, confidence: float, method: Method
) -> dict[str, Any]:
    size = math.inf if variance <= 0 else shrunk * (1 - shrunk) / variance
    found = ppi.effective_interval(share, size, confidence, sample, method.key)
    return {**found, "effective_size": None if math.isinf(size) else size}


def _open(method: Method) -> dict[str, Any]:
    return {
        "share": None,
        "ci_low": None,
        "ci_high": None,
        "half_width": None,
        "method": method.key,
    }


def _design_method(strata: Sequence[ScoredStratum]) -> Method:
    if any(not _uniform(s) for s in strata):
        return ACTIVE_PPI
    return RECALIBRATED_PPI


def stratum_estimate(stratum: ScoredStratum, confidence: float = 0.95) -> dict[str, Any]:
    """One category's estimate with its interval; hard verdicts under a uniform design are
    read by PPI++ on their 2 x 2 table (``ppi.stratum_estimate``)."""
    if _uniform(stratum) and _hard(stratum.scores):
        return _hard_row(stratum, confidence)
    figures = stratum_figures(stratum)
    row: dict[str, Any] = {"category": stratum.category, "population": stratum.population}
    if figures is None:
        return {**row, "sample_pairs": stratum.sample, "estimate": _open(_design_method([stratum]))}
    return {
        **row,
        "sample_pairs": figures.sample,
        "slope": figures.slope,
        "estimate": _interval(
            figures.share,
            figures.variance,
            figures.shrunk,
            figures.sample,
            confidence,
            figures.method,
        ),
    }


def _hard_table(stratum: ScoredStratum) -> ppi.PPIStratum:
    model = stratum.scores[stratum.drawn].astype(int)
    human = stratum.human.astype(int)
    table = ppi.AgreementTable(
        both_validated=int(np.sum((human == 1) & (model == 1))),
        human_only=int(np.sum((human == 1) & (model == 0))),
        model_only=int(np.sum((human == 0) & (model == 1))),
        neither=int(np.sum((human == 0) & (model == 0))),
    )
    return ppi.PPIStratum(
        stratum.category,
        stratum.population,
        stratum.population,
        int(stratum.scores.sum()),
        table,
    )


def _hard_row(stratum: ScoredStratum, confidence: float) -> dict[str, Any]:
    stratum.check()
    row = ppi.stratum_estimate(_hard_table(stratum), confidence)
    estimate = dict(row["ppi"])
    if estimate["share"] is not None:
        estimate["effective_size"] = row.get("effective_size")
    return {
        "category": stratum.category,
        "population": stratum.population,
        "sample_pairs": stratum.sample,
        "slope": row["lambda"],
        "estimate": ppi.json_finite(estimate),
    }


def design_estimate(strata: Sequence[ScoredStratum], confidence: float = 0.95) -> dict[str, Any]:
    """Per category and overall (categories weighted by size): the estimate of the validated
    share under the strata's design, with the method named and cited. JSON-ready."""
    rows = [stratum_estimate(s, confidence) for s in strata]
    method = _design_method(strata)
    if all(_hard(s.scores) for s in strata) and method is RECALIBRATED_PPI:
        method = HARD_PPI
    found = {
        "confidence": confidence,
        "method": method.key,
        "method_words": method.words,
        "citations": method.citations,
        "per_category": rows,
    }
    return {**found, "overall": _overall(strata, confidence, method)}


def _overall(strata: Sequence[ScoredStratum], confidence: float, method: Method) -> dict[str, Any]:
    total = sum(s.population for s in strata)
    sampled = sum(s.sample for s in strata)
    figures = [_figures_for_overall(s) for s in strata]
    if total == 0 or any(f is None for f in figures):
        return {"population": total, "sample_pairs": sampled, "estimate": _open(method)}
    weights = [s.population / total for s in strata]
    found = [f for f in figures if f is not None]
    share = sum(w * f.share for w, f in zip(weights, found, strict=True))
    variance = sum(w**2 * f.variance for w, f in zip(weights, found, strict=True))
    shrunk = sum(w * f.shrunk for w, f in zip(weights, found, strict=True))
    return {
        "population": total,
        "sample_pairs": sampled,
        "estimate": _interval(share, variance, shrunk, sampled, confidence, method),
    }


def _figures_for_overall(stratum: ScoredStratum) -> StratumFigures | None:
    """A category's share and variance as the overall adds them up; hard verdicts under a
    uniform design as PPI++ computes them (its variance at the shrunk share)."""
    if not (_uniform(stratum) and _hard(stratum.scores)):
        return stratum_figures(stratum)
    stratum.check()
    hard = _hard_table(stratum)
    row = ppi.stratum_estimate(hard)
    if row["ppi"]["share"] is None or hard.sample.pairs < 2:
        return None
    shrunk = sampling.shrunk_share(hard.sample.human_validated, hard.sample.pairs)
    factor = ppi.variance_factor(
        hard.sample.pairs, hard.model_pairs, hard.population, row["residual_share"]
    )
    spread = ppi.human_spread(hard)
    return StratumFigures(
        row["ppi"]["share"], spread * factor, shrunk, hard.sample.pairs, HARD_PPI, row["lambda"]
    )


# --------------------------------------------------------------------------------------------
# Allocation and planning (normal approximation, the model's probabilities taken as calibrated)


def design_spread(scores: Sequence[float] | np.ndarray, active: bool) -> tuple[float, float]:
    """(sigma, tau^2) of a category for planning: a design with n human pairs has variance
    about sigma^2 / n - tau^2 / N if the model's probabilities are calibrated.

    Uniform: sigma^2 = tau^2 = mean q (1 - q), the residual variance of y - q. Active (pi
    proportional to sqrt(q (1 - q))): sigma = mean sqrt(q (1 - q)), by Cauchy-Schwarz the
    smallest sigma any design reaches, since sum e^2 / pi over the population is least with
    pi proportional to the residuals' standard deviations."""
    spread = uncertainty(scores)
    tau2 = float(np.mean(spread**2))
    sigma = float(np.mean(spread)) if active else math.sqrt(tau2)
    return sigma, tau2


def neyman_allocation(
    populations: Mapping[str, int],
    sigmas: Mapping[str, float],
    budget: int,
    minimum: int = FITTED_PARAMETERS + 1,
) -> dict[str, int]:
    """Human pairs per category minimising the overall variance sum W_h^2 sigma_h^2 / n_h for
    ``budget`` pairs (Neyman 1934; with the PPI variances per category, Fisch et al. 2024):
    n_h proportional to N_h sigma_h, each between ``minimum`` (so every category has an
    interval) and N_h, rounded to whole pairs by largest remainder."""
    categories = sorted(c for c, size in populations.items() if size)
    if budget > sum(populations[c] for c in categories):
        raise DesignError("budget", "is larger than the dataset")
    floors = {c: min(populations[c], minimum) for c in categories}
    if budget < sum(floors.values()):
        raise DesignError("budget", f"needs at least {minimum} pairs in every category")
    fixed: dict[str, float] = {}
    free = list(categories)
    while True:  # categories whose share falls outside [minimum, N_h] are fixed at the bound
        left = budget - sum(fixed.values())
        mass = sum(populations[c] * max(sigmas[c], 0.0) for c in free)
        shares = {
            c: left * populations[c] * max(sigmas[c], 0.0) / mass if mass else left / len(free)
            for c in free
        }
        out = {c: populations[c] for c in free if shares[c] > populations[c]}
        out.update({c: floors[c] for c in free if shares[c] < floors[c]})
        if not out:
            break
        fixed.update(out)
        free = [c for c in free if c not in out]
        if not free:
            break
    exact = {**fixed, **{c: shares[c] for c in free}} if free else fixed
    return _whole(exact, budget)


def _whole(exact: Mapping[str, float], budget: int) -> dict[str, int]:
    """Round to whole pairs summing to ``budget``, the largest remainders first."""
    found = {c: math.floor(value + 1e-9) for c, value in exact.items()}
    order = sorted(exact, key=lambda c: found[c] - exact[c])
    for category in order[: budget - sum(found.values())]:
        found[category] += 1
    return found


def planned_half_width(
    populations: Mapping[str, int],
    spreads: Mapping[str, tuple[float, float]],
    sizes: Mapping[str, float],
    confidence: float = 0.95,
) -> float:
    """z sqrt(sum W_h^2 (sigma_h^2 / n_h - tau_h^2 / N_h)): the overall half-width a design
    expects with ``sizes`` human pairs per category."""
    total = sum(populations.values())
    variance = 0.0
    for category, population in populations.items():
        if not population:
            continue
        sigma, tau2 = spreads[category]
        weight = population / total
        variance += weight**2 * max(0.0, sigma**2 / sizes[category] - tau2 / population)
    return sampling.z_value(confidence) * math.sqrt(variance)


def budget_for_half_width(
    populations: Mapping[str, int],
    spreads: Mapping[str, tuple[float, float]],
    half_width: float,
    confidence: float = 0.95,
) -> int:
    """The smallest Neyman-allocated human budget whose planned overall half-width reaches
    ``half_width``: n = (sum W_h sigma_h)^2 / ((e / z)^2 + sum W_h^2 tau_h^2 / N_h), rounded
    up, then checked against the whole allocation (bounds and rounding) and raised until it
    reaches."""
    if not 0 < half_width < 0.5:
        raise DesignError("half_width", "must be between 0 and 0.5 (0.05 is ±5 points)")
    total = sum(populations.values())
    categories = [c for c, size in populations.items() if size]
    weights = {c: populations[c] / total for c in categories}
    a = sum(weights[c] * spreads[c][0] for c in categories) ** 2
    b = sum(weights[c] ** 2 * spreads[c][1] / populations[c] for c in categories)
    limit = (half_width / sampling.z_value(confidence)) ** 2
    budget = max(len(categories) * (FITTED_PARAMETERS + 1), math.ceil(a / (limit + b) - 1e-9))
    sigmas = {c: spreads[c][0] for c in categories}
    while budget < total:
        sizes = neyman_allocation(populations, sigmas, budget)
        if planned_half_width(populations, spreads, sizes, confidence) <= half_width + 1e-12:
            break
        budget += 1
    return min(budget, total)


def plan_against_uniform(
    scores: Mapping[str, Sequence[float] | np.ndarray],
    half_width: float,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The human pairs ``half_width`` overall needs with the model's probabilities on every
    pair: humans only (at the share the probabilities give), recalibrated PPI on a uniform
    sample and active sampling, each Neyman-allocated; the probabilities are taken as
    calibrated, so the figures are what a plan expects, not what it guarantees."""
    populations = {c: len(values) for c, values in scores.items()}
    designs: dict[str, dict[str, tuple[float, float]]] = {
        "humans_only": {},
        UNIFORM: {},
        ACTIVE: {},
    }
    for category, values in scores.items():
        checked = checked_scores(values, f"category {category!r} scores")
        share = float(checked.mean())
        designs["humans_only"][category] = (math.sqrt(share * (1 - share)), share * (1 - share))
        designs[UNIFORM][category] = design_spread(checked, active=False)
        designs[ACTIVE][category] = design_spread(checked, active=True)
    found: dict[str, Any] = {"half_width": half_width, "confidence": confidence}
    for name, spreads in designs.items():
        budget = budget_for_half_width(populations, spreads, half_width, confidence)
        sigmas = {c: spreads[c][0] for c in populations}
        found[name] = {
            "human_pairs": budget,
            "per_category": neyman_allocation(populations, sigmas, budget),
        }
    return found


DESIGNS = ("humans_only", UNIFORM, ACTIVE)


def pilot_plan(
    strata: Sequence[ScoredStratum], targets: sampling.PlanTargets
) -> dict[str, Any] | None:
    """From a pilot, the human pairs each design expects to need for the plan's targets (per
    category at its category half-width, overall at its overall one), with the model's
    probabilities recalibrated on each category's sample first, so that an overconfident
    model does not make the plan optimistic. None below three decided pairs in a category."""
    if any(s.sample < FITTED_PARAMETERS + 1 for s in strata):
        return None
    calibrated = {s.category: logistic_recalibration(s)[0] for s in strata}
    found: dict[str, Any] = {"confidence": targets.confidence, "designs": list(DESIGNS)}
    if targets.category_half_width is not None:
        found["category_half_width"] = targets.category_half_width
        found["per_category"] = []
        for category, values in calibrated.items():
            plan = plan_against_uniform(
                {category: values}, targets.category_half_width, targets.confidence
            )
            found["per_category"].append(
                {"category": category, **{name: plan[name]["human_pairs"] for name in DESIGNS}}
            )
    if targets.half_width is not None:
        plan = plan_against_uniform(calibrated, targets.half_width, targets.confidence)
        found["half_width"] = targets.half_width
        found["overall"] = {name: plan[name]["human_pairs"] for name in DESIGNS}
    return found


# --------------------------------------------------------------------------------------------
# From the audit's rows


def pair_probabilities(rows: Iterable[tuple[int, str, str, float | None]]) -> dict[int, float]:
    """pair_id -> the model's probability that the pair is validated, from its answers' rows
    (pair, question, A/B order, probability of the validating choice): the mean over the two
    orders of P(chosen) times that of P(preference), its two conditions of the rule. Pairs
    without a probability in both orders of both questions are left out."""
    found: dict[int, dict[tuple[str, str], float]] = {}
    for pair, question, position, probability in rows:
        if probability is not None:
            found.setdefault(int(pair), {})[(question, position)] = float(probability)
    wanted = [(q, p) for q in ("rubric_fit", "differentiator") for p in ("A", "B")]
    return {
        pair: _mean(got, "rubric_fit") * _mean(got, "differentiator")
        for pair, got in found.items()
        if all(key in got for key in wanted)
    }


def _mean(got: Mapping[tuple[str, str], float], question: str) -> float:
    return (got[(question, "A")] + got[(question, "B")]) / 2


def audit_section(
    plan_json: Mapping[str, Any],
    verdict_rows: Sequence[Mapping[str, Any]],
    model: Mapping[int, tuple[str, float]],
) -> dict[str, Any]:
    """The audit's recalibrated estimate from a model annotator's probabilities on every pair
    of the plan's population (``model``: pair_id -> (category, probability)) and the planned
    sample's decided verdicts, drawn uniformly within each category; or why there is none
    (``reason``): the model's probabilities do not cover every pair of a category."""
    plan = sampling.SamplePlan.from_json(plan_json)
    strata = []
    for planned in plan.categories:
        pairs = sorted(
            pair for pair, (category, _) in model.items() if category == planned.category
        )
        if len(pairs) != planned.population:
            return {
                "available": False,
                "reason": f"the model's probabilities cover {len(pairs)} of the "
                f"{planned.population} pairs of category {planned.category!r}",
            }
        index = {pair: position for position, pair in enumerate(pairs)}
        decided = [
            row
            for row in verdict_rows
            if row["category"] == planned.category
            and row["verdict"] != rule.UNDECIDED
            and int(row["pair_id"]) in index
        ]
        scores = np.array([model[pair][1] for pair in pairs])
        share = max(len(decided), 1) / planned.population
        strata.append(
            ScoredStratum(
                planned.category,
                scores,
                np.full(planned.population, share),
                np.array([index[int(row["pair_id"])] for row in decided], dtype=int),
                np.array([int(row["verdict"] == rule.VALIDATED) for row in decided], dtype=int),
            )
        )
    return {
        "available": True,
        **design_estimate(strata, plan.targets.confidence),
        "planning": pilot_plan(strata, plan.targets),
    }
