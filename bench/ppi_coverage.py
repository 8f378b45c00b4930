"""Prediction-powered intervals, simulated: do they cover the true validated share whatever the
model's accuracy and bias, and how much narrower are they than the humans' alone?
Run by hand: ``python bench/ppi_coverage.py`` (under a minute; ``--replicates`` for more);
``--designs`` prints the second table instead (``--quick`` for a check in seconds), ``--small``
the active design at small human budgets (``bench/ppi_small_bench.py``, 400 replicates a row,
about a minute).

Each setting is a synthetic dataset of three categories (300, 500 and 800 pairs, validated
shares 0.6, 0.8 and 0.9) and a model annotator that agrees with the human verdict on a known
share of each category's pairs (60 to 95 %), its errors biased in a known direction: *up*
(false validations first: the model's share is too high), *down* (false exclusions first: too
low) or *even* (half each way). Every replicate draws the model's pairs (the whole dataset, or
a random half of it) and, inside them, the stratified human sample a plan for ±5 points overall
takes (61, 101 and 162 pairs), drawn without replacement, and runs
``audit/ppi.py`` beside the humans-only estimate of ``audit/sampling.py``. The truth is the
dataset's human validated share, per category and overall.

The second table (``--designs``, ``bench/ppi_designs_bench.py``) puts the designs of
``audit/ppi_designs.py`` side by side on a model that gives every pair a probability.

docs/ppi.md quotes the output; ``tests/audit/test_ppi_coverage.py`` runs a cheap version.
"""

import argparse
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prb_annotate.audit import ppi, sampling

NOMINAL = 0.95
# Category -> (pairs, human validated share).
DATASET = {"a": (300, 0.6), "b": (500, 0.8), "c": (800, 0.9)}
# The human sample a campaign planned for ±5 points overall at p = 0.5 takes: 61, 101 and 162.
PLAN = sampling.plan_sample(
    {name: size for name, (size, _) in DATASET.items()}, sampling.PlanTargets(half_width=0.05), k=3
)
# Category -> (pairs, human validated share, human sample size).
CATEGORIES: dict[str, tuple[int, float, int]] = {
    name: (size, share, PLAN.sizes()[name]) for name, (size, share) in DATASET.items()
}
AGREEMENTS = (0.6, 0.7, 0.8, 0.9, 0.95)
BIASES = ("up", "down", "even")


@dataclass(frozen=True)
class Setting:
    agreement: float
    bias: str
    model_share_of_dataset: float = 1.0  # the model's pairs: all of them, or a random share


def cells(population: int, share: float, agreement: float, bias: str) -> np.ndarray:
    """Pair counts (both validated, humans only, model only, neither) of a category whose
    model is wrong on ``1 - agreement`` of the pairs, its errors placed as ``bias`` says."""
    validated = round(population * share)
    errors = round(population * (1 - agreement))
    if bias == "constant":  # the model validates every pair: it carries no information
        return np.array([validated, 0, population - validated, 0])
    if bias == "up":
        false_validations = min(errors, population - validated)
    elif bias == "down":
        false_validations = errors - min(errors, validated)
    else:
        false_validations = min(errors // 2, population - validated)
    false_exclusions = errors - false_validations
    return np.array(
        [
            validated - false_exclusions,
            false_exclusions,
            false_validations,
            population - validated - false_validations,
        ]
    )


def replicates(setting: Setting, count: int, seed: int) -> Iterator[list[ppi.PPIStratum]]:
    """``count`` draws of the model's pairs and the human sample inside them."""
    rng = np.random.default_rng(seed)
    dataset = {
        name: cells(size, share, setting.agreement, setting.bias)
        for name, (size, share, _) in CATEGORIES.items()
    }
    for _ in range(count):
        strata = []
        for name, (size, _, sample) in CATEGORIES.items():
            model_pairs = max(sample, round(size * setting.model_share_of_dataset))
            covered = rng.multivariate_hypergeometric(dataset[name], model_pairs)
            drawn = rng.multivariate_hypergeometric(covered, sample)
            strata.append(
                ppi.PPIStratum(
                    category=name,
                    population=size,
                    model_pairs=model_pairs,
                    model_validated=int(covered[0] + covered[2]),
                    sample=ppi.AgreementTable(*(int(x) for x in drawn)),
                )
            )
        yield strata


def truths() -> dict[str, float]:
    found = {name: round(size * share) / size for name, (size, share, _) in CATEGORIES.items()}
    total = sum(size for size, _, _ in CATEGORIES.values())
    found["overall"] = sum(round(size * share) / total for size, share, _ in CATEGORIES.values())
    return found


def _covers(entry: Mapping[str, float | None], truth: float) -> bool:
    low, high = entry["ci_low"], entry["ci_high"]
    return low is not None and high is not None and low - 1e-12 <= truth <= high + 1e-12


def run_setting(setting: Setting, count: int, seed: int) -> dict[str, dict[str, float]]:
    """Per category and overall: PPI and humans-only coverage, mean half-widths, mean worth."""
    truth = truths()
    names = [*CATEGORIES, "overall"]
    tally = {
        name: dict.fromkeys(("ppi", "humans", "ppi_width", "humans_width", "wider"), 0.0)
        for name in names
    }
    worth = 0.0
    widest = dict.fromkeys(names, 0.0)
    for strata in replicates(setting, count, seed):
        estimate = ppi.ppi_estimate(strata)
        rows = {row["category"]: row for row in estimate["per_category"]}
        rows["overall"] = estimate["overall"]
        for name in names:
            row = rows[name]
            tally[name]["ppi"] += _covers(row["ppi"], truth[name])
            tally[name]["humans"] += _covers(row["humans_only"], truth[name])
            tally[name]["ppi_width"] += row["ppi"]["half_width"]
            tally[name]["humans_width"] += row["humans_only"]["half_width"]
            # Per audit: is this replicate's interval wider than the humans' alone, and by how much.
            ratio = row["ppi"]["half_width"] / row["humans_only"]["half_width"]
            tally[name]["wider"] += ratio > 1 + 1e-9
            widest[name] = max(widest[name], ratio)
        worth += estimate["overall"]["worth"]
    result = {
        name: {key: value / count for key, value in row.items()} for name, row in tally.items()
    }
    for name in names:
        result[name]["widest"] = widest[name]
    result["overall"]["worth"] = worth / count
    return result


def settings() -> list[Setting]:
    found = [Setting(a, b) for a in AGREEMENTS for b in BIASES]
    # The constant model validates every pair; its agreement is the humans' share.
    return [*found, *(Setting(a, "up", 0.5) for a in (0.7, 0.95)), Setting(0.0, "constant")]


def table(count: int, seed: int) -> tuple[list[str], float]:
    """The printed lines and the lowest PPI coverage of any category or overall."""
    sampled = sum(sample for _, _, sample in CATEGORIES.values())
    lines = [
        f"{count} replicates per setting; {sampled} human pairs of "
        f"{sum(size for size, _, _ in CATEGORIES.values())}; nominal {NOMINAL:.0%}",
        "agreement bias     model  | PPI coverage a / b / c / all | humans all | "
        "width PPI/humans all | worth (pairs) | audits wider: a / b / c / all | widest",
    ]
    lowest = 1.0
    wider, widest = 0.0, 0.0
    for number, setting in enumerate(settings()):
        result = run_setting(setting, count, seed + number)
        coverage = [result[name]["ppi"] for name in [*CATEGORIES, "overall"]]
        lowest = min(lowest, *coverage)
        overall = result["overall"]
        lines.append(
            f"{setting.agreement:>9.0%} {setting.bias:<8} "
            f"{setting.model_share_of_dataset:>5.0%}  | "
            + " / ".join(f"{value:.3f}" for value in coverage)
            + f"      | {overall['humans']:.3f}      | "
            f"{overall['ppi_width'] / overall['humans_width']:.3f}"
            f" ({overall['ppi_width']:.3f}/{overall['humans_width']:.3f}) | "
            f"{overall['worth']:.0f} | "
            + " / ".join(f"{result[name]['wider']:.2f}" for name in [*CATEGORIES, "overall"])
            + f" | {max(result[name]['widest'] for name in result):.3f}"
        )
        wider = max(wider, *(result[name]["wider"] for name in result))
        widest = max(widest, *(result[name]["widest"] for name in result))
    lines.append(
        f"per audit: wider than the humans' alone in at most {wider:.0%} of replicates (any "
        f"category or overall), by at most {widest - 1:.1%}"
    )
    return lines, lowest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replicates", type=int, help="2000; 400 with --small")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--designs", action="store_true", help="the designs' table")
    parser.add_argument("--small", action="store_true", help="the active design's small budgets")
    parser.add_argument("--quick", action="store_true", help="200 replicates, for a check")
    args = parser.parse_args()
    count = 200 if args.quick else args.replicates or (400 if args.small else 2000)
    if args.small:
        from bench import ppi_small_bench

        lines, lowest = ppi_small_bench.table(count, args.seed)
        print("\n".join(lines))
        print(f"lowest coverage of a printed interval: {lowest:.3f}")
        return
    if args.designs:
        from bench import ppi_designs_bench

        lines, lowest = ppi_designs_bench.table(count, args.seed)
        print("\n".join(lines))
        print(f"lowest coverage of any design: {lowest:.3f}")
        return
    lines, lowest = table(count, args.seed)
    print("\n".join(lines))
    print(f"lowest PPI coverage: {lowest:.3f}")


if __name__ == "__main__":
    main()
