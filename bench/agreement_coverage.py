"""Coverage of the agreement intervals on simulated audits, through the audit's own functions.

Run by hand: ``python bench/agreement_coverage.py`` (four to six minutes on one core) or
``python bench/agreement_coverage.py --quick`` (a minute or two, 150 replicates a cell);
``--methods bayesian_prior`` runs one method. docs/statistics.md quotes the table.

Each replicate is one simulated audit of the rubric-fit question (chosen / rejected / tie):
n pairs, each answered by 3 annotators drawn from a pool of 10. A pair's expected answer is
"chosen" with probability ``prevalence`` and "rejected" or "tie" otherwise. Two pools:

- ``careful``: all 10 give the expected answer 98 % of the time (another answer otherwise);
- ``mixed``: 8 careful ones as above and 2 noisy ones right 75 % of the time.

The true value of a coefficient is its value on 400,000 simulated pairs of the same pool. For
every (pool, pairs, prevalence, method) the table gives the share of replicates whose 95 %
interval holds the true value (an interval that could not be computed misses), their mean
width, the share the audit marks unreliable, and the coverage of the intervals it calls
reliable. ``AgreementData.estimate`` computes every interval, as the audit does.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prb_annotate.audit import agreement, intervals

DOMAIN = [0.0, 1.0, 2.0]
POOL_SIZE = 10
RATERS = 3
CAREFUL_ERROR = 0.02
NOISY_ERROR = 0.25
POOLS = {"careful": 0, "mixed": 2}  # pool -> noisy annotators among the 10
PAIRS = (20, 30, 40, 100)
PREVALENCES = (0.85, 0.90, 0.95)
COEFFICIENTS: dict[str, tuple[agreement.Coefficient, dict[str, Any]]] = {
    "alpha": ("alpha", {"level": "nominal"}),
    "ac1": ("gwet", {"weights": "identity"}),
}
TRUTH_PAIRS = 400_000


def simulate(pairs: int, prevalence: float, noisy: int, rng: np.random.Generator) -> np.ndarray:
    """Annotators x pairs codes (NaN where an annotator did not see the pair)."""
    errors = np.array([NOISY_ERROR] * noisy + [CAREFUL_ERROR] * (POOL_SIZE - noisy))
    expected = np.where(rng.random(pairs) < prevalence, 0, rng.integers(1, 3, pairs))
    data = np.full((POOL_SIZE, pairs), np.nan)
    chosen = np.argsort(rng.random((pairs, POOL_SIZE)), axis=1)[:, :RATERS]
    for column in range(RATERS):
        who = chosen[:, column]
        wrong = rng.random(pairs) < errors[who]
        other = (expected + rng.integers(1, 3, pairs)) % 3
        data[who, np.arange(pairs)] = np.where(wrong, other, expected)
    return data


def true_values(prevalence: float, noisy: int) -> dict[str, float]:
    data = simulate(TRUTH_PAIRS, prevalence, noisy, np.random.default_rng(12345))
    prepared = agreement.AgreementData.from_data(data, DOMAIN)
    values = {}
    for name, (coefficient, options) in COEFFICIENTS.items():
        value = prepared.estimate(coefficient, **options).value
        assert value is not None
        values[name] = value
    return values


@dataclass
class Cell:
    covered: int = 0
    width: float = 0.0
    widths: int = 0
    unreliable: int = 0
    reliable_covered: int = 0
    replicates: int = 0

    def add(self, estimate: agreement.Estimate, truth: float) -> None:
        self.replicates += 1
        low, high = estimate.ci_low, estimate.ci_high
        hit = low is not None and high is not None and low - 1e-12 <= truth <= high + 1e-12
        self.covered += hit
        if low is not None and high is not None:
            self.width += high - low
            self.widths += 1
        if estimate.reliable:
            self.reliable_covered += hit
        else:
            self.unreliable += 1

    def row(self) -> tuple[float, float, float, float | None]:
        reliable = self.replicates - self.unreliable
        return (
            self.covered / self.replicates,
            self.width / max(self.widths, 1),
            self.unreliable / self.replicates,
            self.reliable_covered / reliable if reliable else None,
        )


Row = tuple[str, int, float, str, str, tuple[float, float, float, float | None]]


def run(
    replicates: int, methods: tuple[intervals.Method, ...], resamples: int, seed: int
) -> list[Row]:
    rows: list[Row] = []
    for pool, noisy in POOLS.items():
        for prevalence in PREVALENCES:
            truth = true_values(prevalence, noisy)
            for pairs in PAIRS:
                cells = {(m, c): Cell() for m in methods for c in COEFFICIENTS}
                rng = np.random.default_rng([seed, pairs, int(prevalence * 100), noisy])
                for replicate in range(replicates):
                    data = simulate(pairs, prevalence, noisy, rng)
                    prepared = agreement.AgreementData.from_data(data, DOMAIN)
                    for method in methods:
                        bootstrap = agreement.Bootstrap(resamples, replicate, method)
                        for name, (coefficient, options) in COEFFICIENTS.items():
                            estimate = prepared.estimate(coefficient, bootstrap, **options)
                            cells[method, name].add(estimate, truth[name])
                for (method, name), cell in cells.items():
                    rows.append((pool, pairs, prevalence, method, name, cell.row()))
    return rows


def table(rows: list[Row]) -> str:
    lines = [
        "| pool | pairs | prevalence | coefficient | method | coverage | mean width "
        "| unreliable | coverage if reliable |",
        "|---|---:|---:|---|---|---:|---:|---:|---:|",
    ]
    for pool, pairs, prevalence, method, name, (coverage, width, unreliable, kept) in sorted(
        rows, key=lambda row: (row[0], row[4], row[1], row[2], row[3])
    ):
        kept_text = "—" if kept is None else f"{kept:.3f}"
        lines.append(
            f"| {pool} | {pairs} | {prevalence:.2f} | {name} | {method} | {coverage:.3f} "
            f"| {width:.3f} | {unreliable:.0%} | {kept_text} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="150 replicates a cell")
    parser.add_argument("--replicates", type=int, default=None)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--methods", default=",".join(intervals.METHODS))
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    replicates = args.replicates or (150 if args.quick else 1000)
    unknown = set(args.methods.split(",")) - set(intervals.METHODS)
    if unknown:
        parser.error(f"unknown methods {sorted(unknown)}; choose from {intervals.METHODS}")
    methods = tuple(method for method in intervals.METHODS if method in args.methods.split(","))
    started = time.perf_counter()
    rows = run(replicates, methods, args.resamples, args.seed)
    print(table(rows))
    print(
        f"\n{replicates} replicates a cell, {args.resamples} resamples an interval, "
        f"{time.perf_counter() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
