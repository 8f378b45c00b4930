"""The prediction-powered designs of ``audit/ppi_designs.py``, simulated: coverage per category
and overall, and the mean overall half-width against the humans' alone at the same number of
human pairs. Printed by ``python bench/ppi_coverage.py --designs`` (``--quick`` for a check).

The dataset is ``ppi_coverage``'s (300, 500 and 800 pairs, validated shares 0.6, 0.8 and 0.9),
made once per seed as a fixed finite population: each pair has a probability ``q`` of being
validated by the humans, logit-normal within its category (``logit q = mu_h + s Z``, ``mu_h``
giving the category its share), and its human verdict is drawn once from it. The model reports
``sigmoid(TEMPER * logit q + LEAN)``: informative but overconfident and leaning to validate, so
that its probabilities need recalibrating; its hard verdict is that probability above one half.
A second table bends those probabilities further out (``_bent``): the same hard verdicts, a
miscalibration the logistic recalibration cannot undo. ``s`` is set so that the hard verdicts
agree with the humans' on ``AGREEMENT`` of the dataset's pairs. Each replicate draws only the
human sample: the plan's sizes (324 pairs in all, as ``ppi_coverage``) uniformly within each
category, the same budget allocated across categories (Neyman), or the same expected budget
drawn actively (Poisson sampling, probability rising with the model's uncertainty, floored). The
truth is the population's human validated share, per category and overall.

The factor-of-2 bound (Dorner, Nastl & Hardt 2025): a model no better than the humans can at
most halve the human sample a precision needs, a width ratio of 1/sqrt(2) = 0.707. The table
prints each design's sample-size factor, (humans' width / design's width)^2, beside it.
"""

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from bench.ppi_coverage import CATEGORIES
from prb_annotate.audit import ppi_designs

AGREEMENT = 0.85
TEMPER = 1.5  # the model's logits, too confident by half
LEAN = 0.5  # and shifted towards validating
BEND = 0.4  # the "bent" shape: |2q - 1| raised to this power
PLANNED_HALF_WIDTH = 0.05
BOUND = 2.0  # Dorner, Nastl & Hardt (2025): the largest sample-size factor


@dataclass(frozen=True)
class Population:
    """The fixed dataset of a seed: per category the model's reported probabilities and the
    human verdicts of every pair."""

    reported: Mapping[str, np.ndarray]
    human: Mapping[str, np.ndarray]

    def truths(self) -> dict[str, float]:
        found = {name: float(values.mean()) for name, values in self.human.items()}
        total = sum(values.size for values in self.human.values())
        found["overall"] = sum(float(values.sum()) for values in self.human.values()) / total
        return found

    def agreement(self) -> float:
        agreed = sum(
            int(np.sum((self.reported[c] > 0.5) == (self.human[c] == 1))) for c in self.human
        )
        return agreed / sum(values.size for values in self.human.values())


def _sigmoid(values: np.ndarray) -> np.ndarray:
    return np.asarray(1 / (1 + np.exp(-values)))


def _centre(z: np.ndarray, spread: float, share: float) -> float:
    """mu with mean sigmoid(mu + spread z) = share, by bisection."""
    low, high = -20.0, 20.0
    for _ in range(80):
        middle = (low + high) / 2
        low, high = (
            (middle, high) if _sigmoid(middle + spread * z).mean() < share else (low, middle)
        )
    return (low + high) / 2


def _bent(reported: np.ndarray) -> np.ndarray:
    """The reported probabilities pushed further out by a power of their distance from one
    half: the same hard verdicts, a miscalibration no logistic fit on the logits undoes."""
    distance = 2 * reported - 1
    return np.asarray(0.5 + 0.5 * np.sign(distance) * np.abs(distance) ** BEND)


# How the model's reported probabilities are miscalibrated: of the logistic form, or not.
SHAPES = {"logistic": lambda reported: reported, "bent": _bent}


def population(seed: int, spread: float, shape: str = "logistic") -> Population:
    rng = np.random.default_rng(seed)
    reported, human = {}, {}
    for name, (size, share, _) in CATEGORIES.items():
        z = rng.standard_normal(size)
        logits = _centre(z, spread, share) + spread * z
        human[name] = (rng.random(size) < _sigmoid(logits)).astype(int)
        reported[name] = SHAPES[shape](_sigmoid(TEMPER * logits + LEAN))
    return Population(reported, human)


def population_at_agreement(
    seed: int, agreement: float = AGREEMENT, shape: str = "logistic"
) -> Population:
    """The seed's population with the spread whose hard verdicts agree on ``agreement`` (the
    shape moves no probability across one half, so it leaves the agreement as it is)."""
    low, high = 0.1, 8.0
    for _ in range(40):
        middle = (low + high) / 2
        if population(seed, middle).agreement() < agreement:
            low = middle
        else:
            high = middle
    return population(seed, (low + high) / 2, shape)


def _fixed_draw(size: int, sample: int, rng: np.random.Generator) -> np.ndarray:
    return np.sort(rng.choice(size, size=sample, replace=False))


@dataclass(frozen=True)
class Design:
    """A row of the table: how the human sample is drawn and what the model gives."""

    name: str
    probabilities: bool  # the model's probabilities, or its hard verdicts only
    allocated: bool  # Neyman across categories, or the plan's sizes
    active: bool  # Poisson with active probabilities, or a fixed uniform draw


DESIGNS = (
    Design("humans only", probabilities=False, allocated=False, active=False),
    Design("PPI++, hard verdicts", probabilities=False, allocated=False, active=False),
    Design("recalibrated PPI", probabilities=True, allocated=False, active=False),
    Design("recalibrated, allocated", probabilities=True, allocated=True, active=False),
    Design("active", probabilities=True, allocated=False, active=True),
    Design("active, allocated", probabilities=True, allocated=True, active=True),
)


def sizes(design: Design, world: Population) -> dict[str, int]:
    planned = {name: sample for name, (_, _, sample) in CATEGORIES.items()}
    if not design.allocated:
        return planned
    populations = {name: values.size for name, values in world.reported.items()}
    sigmas = {
        name: ppi_designs.design_spread(values, design.active)[0]
        for name, values in world.reported.items()
    }
    return ppi_designs.neyman_allocation(populations, sigmas, sum(planned.values()))


def sampler(
    design: Design, world: Population
) -> Callable[[np.random.Generator], list[ppi_designs.ScoredStratum]]:
    """A function that draws one replicate's human sample under ``design``."""
    budgets = sizes(design, world)
    scored: dict[str, np.ndarray] = {}
    inclusion: dict[str, np.ndarray] = {}
    for name, reported in world.reported.items():
        if design.name == "humans only":
            scored[name] = np.full(reported.size, 0.5)
        else:
            scored[name] = reported if design.probabilities else (reported > 0.5).astype(float)
        if design.active:
            inclusion[name] = ppi_designs.active_probabilities(reported, budgets[name])
        else:
            inclusion[name] = np.full(reported.size, budgets[name] / reported.size)

    def draw(rng: np.random.Generator) -> list[ppi_designs.ScoredStratum]:
        strata = []
        for name, scores in scored.items():
            if design.active:
                drawn = ppi_designs.poisson_draw(inclusion[name], rng)
            else:
                drawn = _fixed_draw(scores.size, budgets[name], rng)
            strata.append(
                ppi_designs.ScoredStratum(
                    name, scores, inclusion[name], drawn, world.human[name][drawn]
                )
            )
        return strata

    return draw


def run_design(design: Design, world: Population, count: int, seed: int) -> dict[str, float]:
    """Coverage per category and overall, the mean overall half-width and human pairs."""
    rng = np.random.default_rng(seed)
    truth = world.truths()
    draw = sampler(design, world)
    covered = dict.fromkeys(truth, 0.0)
    width, pairs = 0.0, 0.0
    for _ in range(count):
        estimate = ppi_designs.design_estimate(draw(rng))
        rows = {row["category"]: row["estimate"] for row in estimate["per_category"]}
        rows["overall"] = estimate["overall"]["estimate"]
        for name, row in rows.items():
            low, high = row["ci_low"], row["ci_high"]
            covered[name] += low is not None and low - 1e-12 <= truth[name] <= high + 1e-12
        width += rows["overall"]["half_width"] or math.inf
        pairs += estimate["overall"]["sample_pairs"]
    return {
        **{name: value / count for name, value in covered.items()},
        "width": width / count,
        "pairs": pairs / count,
    }


def table(count: int, seed: int) -> tuple[list[str], float]:
    """The printed lines and the lowest coverage of any design, category or overall: every
    design on the model of the logistic shape, then on the bent one."""
    world = population_at_agreement(seed)
    truth = world.truths()
    lines = [
        f"{count} replicates per design; {sum(v.size for v in world.human.values())} pairs, "
        f"true shares "
        + " / ".join(f"{truth[name]:.3f}" for name in truth)
        + f"; hard verdicts agree on {world.agreement():.1%}; nominal 95%",
    ]
    lowest = 1.0
    for shape in SHAPES:
        shaped = population_at_agreement(seed, shape=shape)
        lines.append(f"the model's probabilities miscalibrated, {shape} shape:")
        found, shape_lowest = design_rows(shaped, count, seed)
        lines += found
        lowest = min(lowest, shape_lowest)
    plan = ppi_designs.plan_against_uniform(world.reported, PLANNED_HALF_WIDTH)
    pairs = {name: plan[name]["human_pairs"] for name in ("humans_only", "uniform", "active")}
    lines.append(
        f"planned for ±{PLANNED_HALF_WIDTH * 100:.0f} points overall, the model's probabilities "
        f"taken as calibrated: humans only {pairs['humans_only']}, recalibrated "
        f"{pairs['uniform']}, active {pairs['active']} human pairs (Neyman-allocated; "
        "logistic shape)"
    )
    return lines, lowest


def design_rows(world: Population, count: int, seed: int) -> tuple[list[str], float]:
    """One row per design: its coverage, its mean overall half-width against the humans'."""
    truth = world.truths()
    lines = [
        "design                   | human pairs | coverage a / b / c / all      | "
        f"half-width | ratio | sample factor (bound x{BOUND:.0f})"
    ]
    lowest, reference = 1.0, None
    for number, design in enumerate(DESIGNS):
        result = run_design(design, world, count, seed + number)
        coverage = [result[name] for name in truth]
        lowest = min(lowest, *coverage)
        reference = reference or result["width"]
        ratio = result["width"] / reference
        lines.append(
            f"{design.name:<24} | {result['pairs']:>11.1f} | "
            + " / ".join(f"{value:.3f}" for value in coverage)
            + f" | {result['width']:.4f}     | {ratio:.3f} | x{1 / ratio**2:.2f} "
            f"({(1 / ratio**2 - 1) / (BOUND - 1):.0%} of the way)"
        )
    return lines, lowest
