"""Active planned samples: a campaign's human sample drawn where a model annotator is unsure,
and the dataset's validated share estimated from it. Pure functions; no ORM
(``campaigns/planned_sample.py`` draws it, ``audit/model_answers.py`` reads it for the audit).

1. **Plan.** A model annotator answered every pair of the dataset and kept a probability ``q_i``
   per pair that it is validated (``ppi_designs.pair_probabilities``). Each category's human
   budget is what active sampling expects to need for the plan's targets
   (``ppi_designs.plan_against_uniform``: Neyman-allocated for an overall half-width, the
   category's own for a per-category one, the larger of the two with both), the probabilities
   taken as calibrated; the plan keeps beside it what the humans alone and a uniform sample
   with the model's help would need for the same targets.
2. **Draw.** Each pair of a category is drawn independently with its inclusion probability
   ``pi_i`` (``ppi_designs.active_probabilities``: proportional to ``sqrt(q_i (1 - q_i))``, never
   below ``floor`` times the uniform ``budget / N``, at most 1; they sum to the budget). The
   uniform numbers that decide it come from a generator seeded with the campaign seed and the
   category, one per pair in record-id order, so the same seed draws the same pairs. The
   sample's size is random, with mean the budget (Poisson sampling).
3. **Estimate.** ``ppi_designs.design_estimate`` on the model's probabilities over every pair,
   each drawn pair's recorded ``pi_i`` and the humans' verdicts: the inverse-probability
   weighted difference estimator with the finite-population correction, its method and
   citations read from the ``Method`` that produced each number. Undecided drawn pairs are left
   out of the share and counted as all excluded, then all validated, for the bounds, as the
   uniform sample's estimate counts them.
4. **Small samples.** A category with fewer decided drawn pairs than ``SMALL_SAMPLES.minimum``,
   or with one kind of verdict among them, prints no interval and says why (``withheld``), and
   so does the overall; the minimum and the coverage it stands on were measured by
   ``bench/ppi_coverage.py --small``. The plan warns when a category's budget is below it
   (``sample_report.small_budgets``).

A drawn sample cannot be extended: the weights are the probabilities the pairs had when they
were drawn, and a second draw would change them. A new campaign draws a larger sample.
"""

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from django.utils.translation import gettext as _

from prb_annotate.audit import ppi_designs, rule
from prb_annotate.audit.sampling import CategoryPlan, PlanError, PlanTargets, SamplePlan

UNIFORM = ppi_designs.UNIFORM
ACTIVE = ppi_designs.ACTIVE
DESIGN_NAMES = (UNIFORM, ACTIVE)
# What the plan compares: the humans alone, the model's help on a uniform sample, and active.
COMPARED = ppi_designs.DESIGNS


@dataclass(frozen=True)
class SampleDesign:
    """How a planned sample is drawn: ``uniform`` (a seeded prefix of each category) or
    ``active`` (each pair with its own probability; ``floor``: the share of the uniform
    probability no pair falls below)."""

    name: str = UNIFORM
    floor: float = ppi_designs.ACTIVE_FLOOR

    @property
    def active(self) -> bool:
        return self.name == ACTIVE

    def check(self) -> None:
        if self.name not in DESIGN_NAMES:
            raise PlanError("design", f"must be one of {', '.join(DESIGN_NAMES)}")
        if not 0 < self.floor <= 1:
            raise PlanError("floor", "must be above 0 and at most 1")


@dataclass(frozen=True)
class SmallSamples:
    """When the active estimate prints an interval, measured by ``bench/ppi_coverage.py
    --small`` (docs/ppi.md section 8): a category needs ``minimum`` decided drawn pairs and
    both kinds of verdict among them (with one kind only, the recalibration fitted on the draw
    has nothing to separate and the interval is narrow around 0 or 1); the overall needs every
    category's. ``below``: the lowest coverage of any category or the overall measured with
    fewer pairs per category (``below_budget`` expected); ``at_minimum``: the lowest coverage of
    a printed interval over every budget measured (``budgets``, ``replicates`` each)."""

    minimum: int
    below: float
    below_budget: int
    at_minimum: float
    budgets: tuple[int, ...]
    replicates: int

    def too_few(self, decided: int) -> str:
        return _(
            "too few human pairs drawn in this category for the active estimate: %(decided)s "
            "decided, at least %(minimum)s needed (coverage measured in docs/ppi.md: as low as "
            "%(below)s with %(budget)s pairs expected per category)"
        ) % {
            "decided": decided,
            "minimum": self.minimum,
            "below": f"{self.below:.2f}",
            "budget": self.below_budget,
        }

    def one_kind(self, decided: int, validated: int) -> str:
        kind = _("validated") if validated else _("excluded")
        return _(
            "all %(decided)s decided human pairs drawn in this category are %(kind)s: the "
            "model's probabilities cannot be recalibrated on them, and the active estimate's "
            "interval would be too narrow (coverage measured in docs/ppi.md)"
        ) % {"decided": decided, "kind": kind}

    def reason(self, decided: int, validated: int) -> str | None:
        """Why a category with ``decided`` decided drawn pairs, ``validated`` of them
        validated, gets no interval; None when it gets one."""
        if decided < self.minimum:
            return self.too_few(decided)
        if validated in (0, decided):
            return self.one_kind(decided, validated)
        return None


SMALL_SAMPLES = SmallSamples(30, 0.907, 30, 0.919, (15, 20, 30, 40, 60, 80, 120), 1500)

OVERALL = "overall"


def withheld(counts: Mapping[str, tuple[int, int]]) -> dict[str, str | None]:
    """Category (and ``OVERALL``) -> why its active interval is withheld, or None:
    ``counts`` gives each category's decided drawn pairs and how many are validated. The
    overall adds up the categories' variances, so it is withheld with any of them."""
    found = {c: SMALL_SAMPLES.reason(d, v) for c, (d, v) in counts.items()}
    short = [c or _("(no category)") for c, reason in found.items() if reason is not None]
    found[OVERALL] = (
        _("no interval for category %(categories)s") % {"categories": ", ".join(short)}
        if short
        else None
    )
    return found


@dataclass(frozen=True)
class ModelRun:
    """The model-annotator run an active sample is drawn from: its id and its name."""

    run: int
    model: str


# --------------------------------------------------------------------------------------------
# Planning


def design_sizes(
    scores: Mapping[str, Sequence[float] | np.ndarray], targets: PlanTargets
) -> dict[str, dict[str, int]]:
    """Human pairs per category each design (``COMPARED``) expects to need for ``targets``:
    the overall target Neyman-allocated, the per-category one per category, the larger with
    both."""
    sizes = {name: dict.fromkeys(scores, 0) for name in COMPARED}
    confidence = targets.confidence
    if targets.half_width is not None:
        plan = ppi_designs.plan_against_uniform(scores, targets.half_width, confidence)
        for name in COMPARED:
            sizes[name].update(plan[name]["per_category"])
    if targets.category_half_width is not None:
        for category, values in scores.items():
            plan = ppi_designs.plan_against_uniform(
                {category: values}, targets.category_half_width, confidence
            )
            for name in COMPARED:
                sizes[name][category] = max(sizes[name][category], plan[name]["human_pairs"])
    return sizes


def expected_half_widths(
    scores: Mapping[str, np.ndarray], sizes: Mapping[str, int], confidence: float
) -> dict[str, Any]:
    """The half-widths active sampling expects with ``sizes`` human pairs, overall and per
    category, the probabilities taken as calibrated (``ppi_designs.planned_half_width``)."""
    populations = {category: len(values) for category, values in scores.items()}
    spreads = {c: ppi_designs.design_spread(v, active=True) for c, v in scores.items()}
    per_category = {
        c: ppi_designs.planned_half_width({c: populations[c]}, {c: spreads[c]}, sizes, confidence)
        for c in scores
    }
    overall = ppi_designs.planned_half_width(populations, spreads, sizes, confidence)
    return {"overall": overall, "per_category": per_category}


def active_plan(
    scores: Mapping[str, Sequence[float] | np.ndarray],
    targets: PlanTargets,
    k: int,
    design: SampleDesign,
    model: ModelRun,
) -> SamplePlan:
    """The active plan over the model's probabilities per category (a preview: each
    category's ``pairs`` is its expected sample, the budget its probabilities sum to)."""
    targets.check()
    design.check()
    if k < 1:
        raise PlanError("k", "must be at least 1")
    checked = {
        category: ppi_designs.checked_scores(values, f"category {category!r} scores")
        for category, values in sorted(scores.items())
        if len(values)
    }
    if not checked:
        raise PlanError("dataset", "has no pairs to sample")
    sizes = design_sizes(checked, targets)
    budgets = sizes[ACTIVE]
    rows = tuple(
        CategoryPlan(category, len(values), budgets[category], float(np.mean(values)))
        for category, values in checked.items()
    )
    block = {
        "name": ACTIVE,
        "floor": design.floor,
        "run": model.run,
        "model": model.model,
        "expected_pairs": dict(budgets),
        "compared": {
            name: {"human_pairs": sum(sizes[name].values()), "per_category": sizes[name]}
            for name in COMPARED
        },
        "expected_half_width": expected_half_widths(checked, budgets, targets.confidence),
    }
    return SamplePlan(targets=targets, k=k, categories=rows, design=block)


# --------------------------------------------------------------------------------------------
# Drawing


def inclusion_probabilities(plan: SamplePlan, category: str, scores: np.ndarray) -> np.ndarray:
    """The category's inclusion probabilities under the plan's design, one per pair in
    record-id order (``ppi_designs.active_probabilities`` at the category's budget)."""
    design = plan.design or {}
    budget = float(design["expected_pairs"][category])
    return ppi_designs.active_probabilities(scores, budget, float(design["floor"]))


def poisson_draw(inclusion: np.ndarray, seed: int, category: str) -> list[int]:
    """The drawn pairs' positions: each pair independently with its probability, the uniform
    numbers from a generator seeded with text (SHA-512 of the string, the same on every run
    and platform), one per pair in order."""
    generator = random.Random(f"prb-active-sample/{seed}/{category}")
    return [index for index, pi in enumerate(inclusion) if generator.random() < pi]


def draw(
    plan: SamplePlan,
    pools: Mapping[str, Sequence[str]],
    scores: Mapping[str, np.ndarray],
    seed: int,
) -> tuple[dict[str, float], SamplePlan]:
    """Record id -> inclusion probability of every drawn pair, and the plan as drawn (each
    category's ``pairs`` the pairs drawn). ``pools``: each category's record ids sorted, with
    ``scores`` in the same order."""
    drawn: dict[str, float] = {}
    rows = []
    for row in plan.categories:
        inclusion = inclusion_probabilities(plan, row.category, scores[row.category])
        chosen = poisson_draw(inclusion, seed, row.category)
        drawn.update({pools[row.category][i]: float(inclusion[i]) for i in chosen})
        rows.append(replace(row, pairs=len(chosen)))
    return drawn, replace(plan, categories=tuple(rows))


# --------------------------------------------------------------------------------------------
# Estimating


@dataclass(frozen=True)
class Population:
    """One category of the plan as the audit reads it: its pairs (ids, in record-id order)
    and the model's probability on each."""

    pairs: list[int]
    scores: np.ndarray


def audit_estimate(
    plan_json: Mapping[str, Any],
    populations: Mapping[str, Population],
    drawn: Mapping[int, float],
    verdict_rows: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """The dataset's validated share from an actively drawn sample, per category and overall,
    shaped as ``sampling.audit_estimate`` (share, and the bounds with undecided pairs), with the
    design and its method. ``drawn``: pair id -> the inclusion probability recorded with it;
    ``populations``: per planned category, as the model's run covers it (a category it does not
    cover in full leaves the estimate open, with the reason). A row the small-sample rule
    withholds (``withheld``) has empty figures and its ``withheld`` reason."""
    plan = SamplePlan.from_json(plan_json)
    confidence = plan.targets.confidence
    by_pair = {int(row["pair_id"]): row for row in verdict_rows}
    counts = {row.category: _counts(row.category, drawn, by_pair) for row in plan.categories}
    reason = _uncovered(plan, populations)
    if reason is not None:
        return _open_estimate(plan, counts, reason)
    strata = {
        bound: [
            _stratum(plan, row.category, populations[row.category], drawn, by_pair, bound)
            for row in plan.categories
        ]
        for bound in ("share", "low", "high")
    }
    found = {bound: ppi_designs.design_estimate(rows, confidence) for bound, rows in strata.items()}
    share = found["share"]
    reasons = withheld(
        {
            c: (count["validated"] + count["excluded"], count["validated"])
            for c, count in counts.items()
        }
    )
    per_category = [
        _withhold(_row(plan, row, counts[row.category], found, index), reasons[row.category])
        for index, row in enumerate(plan.categories)
    ]
    overall = _withhold(_overall_row(plan, counts, found), reasons[OVERALL])
    return {
        "available": True,
        "confidence": confidence,
        "design": ACTIVE,
        "floor": (plan.design or {}).get("floor"),
        "run": (plan.design or {}).get("run"),
        "model": (plan.design or {}).get("model"),
        "method": share["method"],
        "method_words": share["method_words"],
        "citations": share["citations"],
        "overall": overall,
        "per_category": per_category,
        "plan": plan.as_json(),
    }


def _uncovered(plan: SamplePlan, populations: Mapping[str, Population]) -> str | None:
    for row in plan.categories:
        found = populations.get(row.category)
        covered = 0 if found is None else len(found.pairs)
        if covered != row.population:
            return _(
                "the model's probabilities the sample was drawn with cover %(covered)s of the "
                "%(population)s pairs of category %(category)s"
            ) % {"covered": covered, "population": row.population, "category": repr(row.category)}
    return None


def _counts(
    category: str, drawn: Mapping[int, float], by_pair: Mapping[int, Mapping[str, Any]]
) -> dict[str, int]:
    verdicts = [
        by_pair[pair]["verdict"]
        for pair in drawn
        if pair in by_pair and by_pair[pair]["category"] == category
    ]
    validated = sum(v == rule.VALIDATED for v in verdicts)
    excluded = sum(v == rule.EXCLUDED for v in verdicts)
    return {
        "validated": validated,
        "excluded": excluded,
        "undecided": len(verdicts) - validated - excluded,
    }


def _stratum(
    plan: SamplePlan,
    category: str,
    population: Population,
    drawn: Mapping[int, float],
    by_pair: Mapping[int, Mapping[str, Any]],
    bound: str,
) -> ppi_designs.ScoredStratum:
    """The category for ``design_estimate``: every pair's probability, the plan's inclusion
    probabilities with each drawn pair's recorded one in its place, and the verdicts of the
    drawn pairs (``share``: the decided ones; ``low`` / ``high``: undecided ones as 0 / 1)."""
    inclusion = inclusion_probabilities(plan, category, population.scores)
    positions, human = [], []
    for index, pair in enumerate(population.pairs):
        if pair not in drawn or pair not in by_pair:
            continue
        inclusion[index] = drawn[pair]
        verdict = by_pair[pair]["verdict"]
        if verdict == rule.UNDECIDED and bound == "share":
            continue
        positions.append(index)
        human.append(
            int(verdict == rule.VALIDATED or (verdict == rule.UNDECIDED and bound == "high"))
        )
    return ppi_designs.ScoredStratum(
        category,
        population.scores,
        inclusion,
        np.array(positions, dtype=int),
        np.array(human, dtype=int),
    )


def _estimate(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An interval as the planned sample's estimate shows it."""
    return {key: entry.get(key) for key in ("share", "ci_low", "ci_high", "half_width", "method")}


def _reached(estimate: Mapping[str, Any], target: float | None) -> bool | None:
    if target is None or estimate["half_width"] is None:
        return None
    return bool(estimate["half_width"] <= target)


def _row(
    plan: SamplePlan,
    planned: CategoryPlan,
    counts: Mapping[str, int],
    found: Mapping[str, Mapping[str, Any]],
    index: int,
) -> dict[str, Any]:
    share = _estimate(found["share"]["per_category"][index]["estimate"])
    target = plan.targets.category_half_width
    return {
        "category": planned.category,
        "population": planned.population,
        **counts,
        "sampled": sum(counts.values()),
        "decided": counts["validated"] + counts["excluded"],
        "target_half_width": target,
        "share": share,
        "low": _estimate(found["low"]["per_category"][index]["estimate"]),
        "high": _estimate(found["high"]["per_category"][index]["estimate"]),
        "target_reached": _reached(share, target),
    }


def _withhold(row: dict[str, Any], reason: str | None) -> dict[str, Any]:
    """The row with its share and bounds left empty when the small-sample rule withholds its
    interval (``SMALL_SAMPLES``), and why; ``withheld`` is None when it prints one."""
    if reason is None:
        return {**row, "withheld": None}
    empty = dict.fromkeys(("share", "ci_low", "ci_high", "half_width"))
    empty["method"] = ppi_designs.ACTIVE_PPI.key
    return {
        **row,
        "share": dict(empty),
        "low": dict(empty),
        "high": dict(empty),
        "target_reached": None,
        "withheld": reason,
    }


def _overall_row(
    plan: SamplePlan,
    counts: Mapping[str, Mapping[str, int]],
    found: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    share = _estimate(found["share"]["overall"]["estimate"])
    target = plan.targets.half_width
    undecided = sum(row["undecided"] for row in counts.values())
    decided = sum(row["validated"] + row["excluded"] for row in counts.values())
    return {
        "population": plan.population,
        "sampled": decided + undecided,
        "decided": decided,
        "undecided": undecided,
        "share": share,
        "low": _estimate(found["low"]["overall"]["estimate"]),
        "high": _estimate(found["high"]["overall"]["estimate"]),
        "target_half_width": target,
        "target_reached": _reached(share, target),
    }


def _open_estimate(
    plan: SamplePlan, counts: Mapping[str, Mapping[str, int]], reason: str
) -> dict[str, Any]:
    """The estimate's shape with no figure in it, and why."""
    empty = dict.fromkeys(("share", "ci_low", "ci_high", "half_width"))
    empty["method"] = ppi_designs.ACTIVE_PPI.key
    rows: list[dict[str, Any]] = []
    for row in plan.categories:
        count = counts[row.category]
        decided = count["validated"] + count["excluded"]
        rows.append(
            {
                "category": row.category,
                "population": row.population,
                **count,
                "sampled": decided + count["undecided"],
                "decided": decided,
                "target_half_width": plan.targets.category_half_width,
                "share": dict(empty),
                "low": dict(empty),
                "high": dict(empty),
                "target_reached": None,
                "withheld": None,
            }
        )
    overall = {
        "population": plan.population,
        "sampled": sum(r["sampled"] for r in rows),
        "decided": sum(r["decided"] for r in rows),
        "undecided": sum(r["undecided"] for r in rows),
        "share": dict(empty),
        "low": dict(empty),
        "high": dict(empty),
        "target_half_width": plan.targets.half_width,
        "target_reached": None,
        "withheld": None,
    }
    method = ppi_designs.ACTIVE_PPI
    design = plan.design or {}
    return {
        "available": False,
        "reason": reason,
        "confidence": plan.targets.confidence,
        "design": ACTIVE,
        "floor": design.get("floor"),
        "run": design.get("run"),
        "model": design.get("model"),
        "method": method.key,
        "method_words": method.words,
        "citations": method.citations,
        "overall": overall,
        "per_category": rows,
        "plan": plan.as_json(),
    }


def is_active(plan_json: Mapping[str, Any] | None) -> bool:
    """Whether a stored plan was drawn actively."""
    return bool(plan_json) and (plan_json or {}).get("design", {}).get("name") == ACTIVE
