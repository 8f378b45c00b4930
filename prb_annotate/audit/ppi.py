"""Prediction-powered inference: the validated share of a dataset from a model annotator on
every pair and humans on a planned sample. Pure functions over counts; no ORM.

Per category (stratum ``h``) there are ``N`` pairs; the model gave a verdict ``f`` (1 it
validates the pair, 0 it does not) on ``M`` of them, a simple random sample of the category
or the whole of it (``M = N``), which holds the humans' sample of ``n`` decided pairs with
their verdict ``y``. The estimate (Angelopoulos et al. 2023; PPI++, Angelopoulos, Duchi & Zrnic
2024) is

    theta = mean_n(y) - lambda * (mean_n(f) - mean_M(f))

the humans' share corrected by how far the model's share on the sample is from its share on
all its pairs. It is unbiased for every fixed ``lambda`` however wrong the model is: the
model's error enters only through its mean on the sample, which the sample estimates without
bias. The human sample lies inside the model's pairs (two-phase sampling without replacement,
Cochran 1977 §12), so its variance is

    V = (1/M - 1/N) S_y^2 + (1/n - 1/M) S_{y - lambda f}^2

with the finite-population correction of both phases (``M = N`` leaves the second term only,
the difference estimator of survey sampling). Power tuning (PPI++) takes the ``lambda`` that
minimises ``V``, the regression slope ``S_yf / S_f^2``, clipped to [0, 1]: at 0 the estimate
is the humans' alone, so a useless or adversarial model costs (almost) nothing.

Writing ``V = (1/M - 1/N) S_y^2 + (1/n - 1/M) r S_y^2``, ``r = S_{y - lambda f}^2 / S_y^2``
(``1 - rho^2`` at the tuned ``lambda``) is the share of the humans' variance the model leaves.
The interval is Wilson's at the effective size ``p q / V``, as the humans-only estimate of
``sampling`` is (which is the case ``r = 1``), and the same effective size says how many
human-annotated pairs the estimate is worth. ``lambda`` and ``r`` are computed from the 2 x 2
table of the sample with one pseudo-pair added to each cell, so that a small sample in which
the model happened to agree every time does not claim that the model is never wrong; ``S_y^2``
in ``V`` uses the share shrunk by two and two (Agresti & Coull 1998), as ``sampling`` does.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from prb_annotate.audit import model_agreement, rule, sampling

# One pseudo-pair in each cell of the human x model table (two agreements, two disagreements).
PSEUDO_PAIRS_PER_CELL = 1.0


@dataclass(frozen=True)
class AgreementTable:
    """Decided sampled pairs by human verdict (validated or not) and model verdict."""

    both_validated: int = 0
    human_only: int = 0  # humans validated, the model did not
    model_only: int = 0  # the model validated, humans did not
    neither: int = 0

    @property
    def pairs(self) -> int:
        return self.both_validated + self.human_only + self.model_only + self.neither

    @property
    def human_validated(self) -> int:
        return self.both_validated + self.human_only

    @property
    def model_validated(self) -> int:
        return self.both_validated + self.model_only

    @property
    def agreements(self) -> int:
        return self.both_validated + self.neither


@dataclass(frozen=True)
class PPIStratum:
    """One category: its size, the model's verdicts on its pairs and the sample's table."""

    category: str
    population: int
    model_pairs: int
    model_validated: int
    sample: AgreementTable


@dataclass(frozen=True)
class Moments:
    """Sample moments of (y, f) with n - 1 denominators."""

    var_y: float
    var_f: float
    cov: float


def moments(table: AgreementTable, pseudo: float = 0.0) -> Moments | None:
    """Variances and covariance of the human (y) and model (f) verdicts in ``table``, with
    ``pseudo`` pairs added to each cell; None below two pairs."""
    cells = [
        table.both_validated + pseudo,
        table.human_only + pseudo,
        table.model_only + pseudo,
        table.neither + pseudo,
    ]
    n = sum(cells)
    if n < 2:
        return None
    y_mean = (cells[0] + cells[1]) / n
    f_mean = (cells[0] + cells[2]) / n
    scale = n / (n - 1)
    return Moments(
        var_y=scale * y_mean * (1 - y_mean),
        var_f=scale * f_mean * (1 - f_mean),
        cov=scale * (cells[0] / n - y_mean * f_mean),
    )


def constant_model(table: AgreementTable) -> bool:
    """Whether the model gave one verdict on every sampled pair: then its answers carry no
    information about the humans', whatever the pseudo-pairs would suggest."""
    return table.model_validated in (0, table.pairs)


def tuned_lambda(table: AgreementTable) -> float:
    """The power-tuned weight on the model: S_yf / S_f^2 from the shrunk table, in [0, 1].

    0 for a model constant on the sample: the pseudo-pairs would give it a variance and a
    covariance it does not have (1 to 4 % narrower than the humans' interval, measured), and
    a model that says the same of every pair cannot tell the humans anything."""
    if constant_model(table):
        return 0.0
    found = moments(table, PSEUDO_PAIRS_PER_CELL)
    if found is None or found.var_f <= 0:
        return 0.0
    return min(1.0, max(0.0, found.cov / found.var_f))


def residual_share(table: AgreementTable, weight: float | None = None) -> float:
    """r = S_{y - lambda f}^2 / S_y^2 on the shrunk table: the share of the humans' variance
    left once the model's answers are used (1: no help; 0: the model is the humans)."""
    weight = tuned_lambda(table) if weight is None else weight
    if constant_model(table) or weight == 0:
        return 1.0
    found = moments(table, PSEUDO_PAIRS_PER_CELL)
    if found is None or found.var_y <= 0:
        return 1.0
    residual = found.var_y - 2 * weight * found.cov + weight**2 * found.var_f
    return min(1.0, max(0.0, residual / found.var_y))


def variance_factor(sample: int, model_pairs: int, population: int, residual: float) -> float:
    """V / S_y^2 = (1/M - 1/N) + (1/n - 1/M) r; 0 for a census of humans."""
    if sample >= population:
        return 0.0
    model_pairs = min(max(model_pairs, sample), population)
    return (1 / model_pairs - 1 / population) + (1 / sample - 1 / model_pairs) * residual


def effective_size(sample: int, model_pairs: int, population: int, residual: float) -> float:
    """p q / V: the binomial size with the estimate's variance (infinite when it has none).
    With r = 1 it is ``sampling.effective_size``, n (N - 1) / (N - n)."""
    factor = variance_factor(sample, model_pairs, population, residual)
    if factor <= 0:
        return math.inf
    return (population - 1) / population / factor


def human_pairs_worth(size: float, population: int) -> float:
    """The humans-only sample with the same variance: n' with n' (N - 1) / (N - n') = size."""
    if math.isinf(size):
        return float(population)
    return size * population / (population - 1 + size)


# PPI++ read through Wilson at the effective size with a continuity correction (above).
PPI_METHOD = "ppi_wilson_cc"


def effective_interval(
    share: float, size: float, confidence: float, sample: int, method: str = PPI_METHOD
) -> dict[str, Any]:
    """Wilson at the effective size with the humans-only estimate's continuity correction
    (half a pair of the human sample), so that a useless model gives the humans' interval.
    An infinite effective size (humans on every pair: a census) has no interval at all
    (``sampling.census``)."""
    if math.isinf(size):
        return sampling.census(share)
    low, high = sampling.wilson(share, size, confidence, sampling.half_step(sample))
    return {
        "share": share,
        "ci_low": low,
        "ci_high": high,
        "half_width": (high - low) / 2,
        "method": method,
    }


def _none() -> dict[str, Any]:
    return {"share": None, "ci_low": None, "ci_high": None, "half_width": None}


def stratum_estimate(stratum: PPIStratum, confidence: float = 0.95) -> dict[str, Any]:
    """One category: the PPI++ estimate, the humans-only one and the model-only share."""
    table, n = stratum.sample, stratum.sample.pairs
    model_pairs = max(stratum.model_pairs, n)
    model_share = stratum.model_validated / stratum.model_pairs if stratum.model_pairs else None
    row: dict[str, Any] = {
        "category": stratum.category,
        "population": stratum.population,
        "model_pairs": stratum.model_pairs,
        "model_validated": stratum.model_validated,
        "sample": {**asdict(table), "pairs": n, "agreements": table.agreements},
        "agreement": table.agreements / n if n else None,
        "model_only": {"share": model_share, "biased": True},
        "humans_only": sampling.category_estimate(
            table.human_validated, n, stratum.population, confidence
        ),
    }
    if n == 0 or model_share is None:
        return {**row, "lambda": None, "residual_share": None, "ppi": _none(), "worth": None}
    weight = tuned_lambda(table)
    residual = residual_share(table, weight)
    estimate = table.human_validated / n - weight * (table.model_validated / n - model_share)
    size = effective_size(n, model_pairs, stratum.population, residual)
    return {
        **row,
        "lambda": weight,
        "residual_share": residual,
        "ppi": effective_interval(min(1.0, max(0.0, estimate)), size, confidence, n),
        "effective_size": size,
        "worth": human_pairs_worth(size, stratum.population),
    }


def ppi_estimate(strata: Sequence[PPIStratum], confidence: float = 0.95) -> dict[str, Any]:
    """Per category and overall (weighted by category size): PPI++, humans only, model only,
    and the human pairs the estimate is worth. JSON-ready (no NaN or infinity)."""
    rows = [stratum_estimate(stratum, confidence) for stratum in strata]
    return {
        "confidence": confidence,
        "per_category": [json_finite(row) for row in rows],
        "overall": json_finite(_overall(strata, rows, confidence)),
    }


def _overall(
    strata: Sequence[PPIStratum], rows: Sequence[Mapping[str, Any]], confidence: float
) -> dict[str, Any]:
    total = sum(s.population for s in strata)
    sampled = sum(s.sample.pairs for s in strata)
    model_pairs = sum(s.model_pairs for s in strata)
    found: dict[str, Any] = {
        "population": total,
        "model_pairs": model_pairs,
        "sample_pairs": sampled,
        "agreement": sum(s.sample.agreements for s in strata) / sampled if sampled else None,
        "model_only": {"share": _model_only(strata), "biased": True},
        "humans_only": sampling.stratified_estimate(
            [(s.sample.human_validated, s.sample.pairs, s.population) for s in strata],
            confidence,
        ),
    }
    if total == 0 or any(row["ppi"]["share"] is None for row in rows):
        return {**found, "ppi": _none(), "worth": None}
    weights = [s.population / total for s in strata]
    share = sum(w * row["ppi"]["share"] for w, row in zip(weights, rows, strict=True))
    # S_y^2 from the shrunk share, times each category's variance factor.
    spread = [human_spread(s) for s in strata]
    variance = sum(
        w**2 * spread_h * variance_factor(s.sample.pairs, s.model_pairs, s.population, row_r)
        for w, spread_h, s, row_r in zip(
            weights, spread, strata, [row["residual_share"] for row in rows], strict=True
        )
    )
    smooth = sum(
        w * sampling.shrunk_share(s.sample.human_validated, s.sample.pairs)
        for w, s in zip(weights, strata, strict=True)
    )
    size = math.inf if variance == 0 else smooth * (1 - smooth) / variance
    return {
        **found,
        "ppi": effective_interval(share, size, confidence, sampled),
        "worth": _overall_worth(strata, weights, spread, variance),
    }


def _model_only(strata: Sequence[PPIStratum]) -> float | None:
    total = sum(s.population for s in strata)
    if total == 0 or any(s.model_pairs == 0 for s in strata if s.population):
        return None
    return sum(s.population / total * s.model_validated / s.model_pairs for s in strata)


def human_spread(stratum: PPIStratum) -> float:
    """S_y^2 = N / (N - 1) p q at the shrunk human share."""
    share = sampling.shrunk_share(stratum.sample.human_validated, stratum.sample.pairs)
    population = stratum.population
    return share * (1 - share) * (population / (population - 1) if population > 1 else 1.0)


def _overall_worth(
    strata: Sequence[PPIStratum], weights: Sequence[float], spread: Sequence[float], variance: float
) -> float:
    """The humans-only sample, allocated as this one but c times as large, with the same
    variance: sum W^2 S^2 (1/(c n) - 1/N) = V gives c = A / (V + B)."""
    sampled = sum(s.sample.pairs for s in strata)
    a = sum(w**2 * s2 / s.sample.pairs for w, s2, s in zip(weights, spread, strata, strict=True))
    b = sum(w**2 * s2 / s.population for w, s2, s in zip(weights, spread, strata, strict=True))
    total = sum(s.population for s in strata)
    if variance + b <= 0:
        return float(total)
    return min(float(total), sampled * a / (variance + b))


def json_finite(value: Any) -> Any:
    """Infinite effective sizes written as None, so JSON never carries Infinity."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {key: json_finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [json_finite(item) for item in value]
    return value


# --------------------------------------------------------------------------------------------
# Planning


def residual_from_agreement(agreement: float, share: float) -> float:
    """r for a model that agrees with the humans on ``agreement`` of the pairs, its errors
    split evenly between false validations and false exclusions (so its share is the humans'
    ``share``): r = 1 - rho^2 with Cov = P(y = f = 1) - p^2 and Var(f) = Var(y) = p q."""
    if not 0.0 <= agreement <= 1.0:
        raise sampling.PlanError("model_agreement", "must be between 0 and 1")
    if not 0.0 < share < 1.0:
        raise sampling.PlanError("expected_share", "must be strictly between 0 and 1")
    errors = 1 - agreement
    both = share - errors / 2
    if both < 0 or errors / 2 > 1 - share:
        raise sampling.PlanError(
            "model_agreement", "is too low for this share with errors split evenly"
        )
    spread = share * (1 - share)
    rho = (both - share**2) / spread
    return 1.0 if rho <= 0 else min(1.0, 1 - rho**2)


def reported_half_width(
    share: float,
    sample: int,
    population: int,
    residual: float,
    confidence: float = 0.95,
    model_pairs: int | None = None,
) -> float:
    """The half-width :func:`stratum_estimate` reports when the human sample of ``sample``
    pairs shows ``share`` and the model leaves ``residual`` of the variance: Wilson with the
    humans' continuity correction at the effective size (0 for a census of humans)."""
    model_pairs = population if model_pairs is None else min(model_pairs, population)
    size = effective_size(sample, model_pairs, population, residual)
    low, high = sampling.wilson(share, size, confidence, sampling.half_step(sample))
    return (high - low) / 2


def humans_needed(
    population: int,
    half_width: float,
    share: float,
    residual: float = 1.0,
    confidence: float = 0.95,
    model_pairs: int | None = None,
) -> int | None:
    """The smallest human sample whose reported interval reaches ``half_width`` when the
    observed share is ``share`` and the model leaves ``residual`` of the variance (1: humans
    only, the planned sample's own size). Sized with the interval the estimate is reported
    with, as the planned sample is. None when no sample of at most M pairs can: the model's
    own sample of M pairs is too small."""
    if population <= 0:
        return 0
    largest = population if model_pairs is None else min(model_pairs, population)

    def reaches(sample: int) -> bool:
        half = reported_half_width(share, sample, population, residual, confidence, model_pairs)
        # The tolerance keeps a half-width equal to the target up to rounding from failing it.
        return half <= half_width + 1e-12

    if not reaches(largest):
        return None
    return sampling.smallest_size(reaches, largest)


def plan_with_model(
    populations: Mapping[str, int],
    half_width: float,
    shares: Mapping[str, float],
    residuals: Mapping[str, float],
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Per category, the human pairs ``half_width`` needs with the model's help (it answers
    every pair) and without it; the overall sums. ``residuals`` from a pilot
    (``residual_share``) or from an agreement rate (``residual_from_agreement``)."""
    if not 0.0 < half_width < 0.5:
        raise sampling.PlanError("half_width", "must be between 0 and 0.5 (0.05 is ±5 points)")
    rows = []
    for category, population in sorted(populations.items()):
        share = shares[category]
        residual = residuals.get(category, 1.0)
        rows.append(
            {
                "category": category,
                "population": population,
                "expected_share": share,
                "residual_share": residual,
                "humans_only": humans_needed(population, half_width, share, 1.0, confidence),
                "with_model": humans_needed(population, half_width, share, residual, confidence),
            }
        )
    return {
        "half_width": half_width,
        "confidence": confidence,
        "per_category": rows,
        "humans_only": sum(row["humans_only"] for row in rows),
        "with_model": sum(row["with_model"] for row in rows),
    }


def pilot_plan(
    strata: Sequence[PPIStratum], half_width: float, confidence: float = 0.95
) -> dict[str, Any]:
    """``plan_with_model`` at a pilot's shrunk human shares and human-model tables."""
    return plan_with_model(
        {s.category: s.population for s in strata},
        half_width,
        {
            s.category: sampling.shrunk_share(s.sample.human_validated, s.sample.pairs)
            for s in strata
        },
        {s.category: residual_share(s.sample) for s in strata},
        confidence,
    )


# --------------------------------------------------------------------------------------------
# From the audit's rows


def model_verdicts(answers: pd.DataFrame) -> dict[int, int]:
    """pair_id -> 1 when the model's answers meet the rule's conditions it was asked, else 0.

    The model annotator answers two of the rule's questions: it validates a pair when its
    consistent answer (the same in both A/B orders) names personal preference as the main
    difference and prefers the dataset's chosen answer. It gives no quality ratings and no
    unusable flag, so those conditions are taken as met; a pair without a consistent answer to
    either question is not validated by it (it cast no vote for the pair).
    """
    differentiator = model_agreement.consistent_answers(answers, "differentiator")
    rubric_fit = model_agreement.consistent_answers(answers, "rubric_fit")
    pairs = {int(p) for p in answers["pair_id"].unique()}
    return {
        pair: int(differentiator.get(pair) == "preference" and rubric_fit.get(pair) == "chosen")
        for pair in sorted(pairs)
    }


def audit_strata(
    plan_json: Mapping[str, Any],
    verdict_rows: Sequence[Mapping[str, Any]],
    model: Mapping[int, tuple[str, int]],
) -> tuple[list[PPIStratum], int]:
    """The strata of a campaign's plan, and how many decided sampled pairs the model did not
    answer. ``verdict_rows``: the audit's ``verdicts`` (the sample's pairs); ``model``:
    pair_id -> (category, model verdict) over the model's pairs of the population."""
    plan = sampling.SamplePlan.from_json(plan_json)
    tables: dict[str, list[int]] = {row.category: [0, 0, 0, 0] for row in plan.categories}
    missing = 0
    cell = {(True, True): 0, (True, False): 1, (False, True): 2, (False, False): 3}
    for verdict in verdict_rows:
        if verdict["verdict"] == rule.UNDECIDED or verdict["category"] not in tables:
            continue
        if int(verdict["pair_id"]) not in model:
            missing += 1
            continue
        human = verdict["verdict"] == rule.VALIDATED
        machine = bool(model[int(verdict["pair_id"])][1])
        tables[verdict["category"]][cell[(human, machine)]] += 1
    strata = []
    for planned in plan.categories:
        verdicts = [f for category, f in model.values() if category == planned.category]
        strata.append(
            PPIStratum(
                category=planned.category,
                population=planned.population,
                model_pairs=min(len(verdicts), planned.population),
                model_validated=min(sum(verdicts), planned.population),
                sample=AgreementTable(*tables[planned.category]),
            )
        )
    return strata, missing


def audit_section(
    plan_json: Mapping[str, Any],
    verdict_rows: Sequence[Mapping[str, Any]],
    model: Mapping[int, tuple[str, int]],
) -> dict[str, Any]:
    """The audit's ``ppi`` entry for one model-annotator run: the estimate, or why there is
    none (the run does not hold every decided pair of the sample), and the planning figures at
    the plan's target half-width, per category."""
    plan = sampling.SamplePlan.from_json(plan_json)
    strata, missing = audit_strata(plan_json, verdict_rows, model)
    confidence = plan.targets.confidence
    if missing:
        return {"covers_sample": False, "sample_pairs_without_model": missing}
    target = plan.targets.category_half_width or plan.targets.half_width
    planning = None
    if target is not None and all(s.sample.pairs for s in strata):
        planning = pilot_plan(strata, target, confidence)
    return {
        "covers_sample": True,
        "sample_pairs_without_model": 0,
        **ppi_estimate(strata, confidence),
        "planning": planning,
    }


def plan_for_targets(
    populations: Mapping[str, int], targets: sampling.PlanTargets, k: int, agreement: float
) -> dict[str, Any]:
    """A sample plan's targets met with a model annotator on every pair that agrees with the
    humans on ``agreement`` of them (errors split evenly, ``residual_from_agreement``): the
    human pairs per category beside the humans-only plan. Each target is sized with the
    interval the estimate is reported with, as the humans-only plan is: per category
    :func:`humans_needed`; overall the smallest proportional allocation whose reported
    interval reaches it (:func:`expected_overall_half_width`)."""
    humans = sampling.plan_sample(populations, targets, k)
    share = targets.expected_share
    residual = residual_from_agreement(agreement, share)
    sizes = dict.fromkeys(humans.sizes(), 0)
    if targets.category_half_width is not None:
        for row in humans.categories:
            needed = humans_needed(
                row.population, targets.category_half_width, share, residual, targets.confidence
            )
            sizes[row.category] = needed or row.population
    if targets.half_width is not None:
        overall = _overall_allocation(humans, targets.half_width, share, residual)
        sizes = {c: max(sizes[c], overall[c]) for c in sizes}
    return {
        "model_agreement": agreement,
        "residual_share": residual,
        "per_category": [
            {
                "category": row.category,
                "population": row.population,
                "humans_only": row.pairs,
                "with_model": sizes[row.category],
            }
            for row in humans.categories
        ],
        "humans_only": humans.pairs,
        "with_model": sum(sizes.values()),
    }


def _overall_allocation(
    plan: sampling.SamplePlan, half_width: float, share: float, residual: float
) -> dict[str, int]:
    """The smallest proportional allocation (as ``sampling.overall_allocation``) whose overall
    interval, as :func:`_overall` reports it with the model on every pair, reaches the target
    at the expected share. With ``residual`` 1 it is the humans-only plan's own allocation."""
    populations = {row.category: row.population for row in plan.categories}

    def reaches(sample: int) -> bool:
        sizes = sampling.proportional_allocation(populations, sample)
        half = expected_overall_half_width(populations, sizes, share, residual, plan.targets)
        return half <= half_width + 1e-12

    total = sum(populations.values())
    return sampling.proportional_allocation(populations, sampling.smallest_size(reaches, total))


def expected_overall_half_width(
    populations: Mapping[str, int],
    sizes: Mapping[str, int],
    share: float,
    residual: float,
    targets: sampling.PlanTargets,
) -> float:
    """The overall half-width :func:`_overall` reports when each category's human sample of
    ``sizes`` shows ``share`` and a model on every pair leaves ``residual`` of the variance:
    the spread from the shrunk share, as ``sampling.stratified_estimate`` reads it, times each
    category's variance factor."""
    total = sum(populations.values())
    variance, smooth = 0.0, 0.0
    for category, population in populations.items():
        if not population:
            continue
        sample = sizes[category]
        shrunk = sampling.shrunk_share(share * sample, sample)
        spread = shrunk * (1 - shrunk) * (population / (population - 1) if population > 1 else 1)
        weight = population / total
        variance += weight**2 * spread * variance_factor(sample, population, population, residual)
        smooth += weight * shrunk
    size = math.inf if variance == 0 else smooth * (1 - smooth) / variance
    interval = effective_interval(share, size, targets.confidence, sum(sizes.values()))
    return float(interval["half_width"])
