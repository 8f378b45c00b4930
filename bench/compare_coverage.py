"""How often the leaderboard's intervals cover the truth, and how often its tests cry wolf.
Run by hand: ``python bench/compare_coverage.py`` (about a minute; ``--replicates`` for more).

Simulated pairs with known accuracies, each figure over ``--replicates`` simulated benchmarks:

1. Wilson interval of one accuracy with continuity correction (n pairs, true accuracy p):
   coverage of p.
2. Paired bootstrap interval of the difference of two models on the same pairs (their right
   answers correlated, as two reward models' are): coverage of the true difference.
3. Newcombe interval of validated minus excluded accuracy (two independent sets of pairs).
4. Exact McNemar at 0.05 when the two models are equally good (type I error), and Holm over
   four such comparisons (family-wise error: any of the four called significant).

Nominal level 95% for the intervals, 5% for the errors. docs/evaluation.md quotes the output.
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.significance import (
    corrected_wilson_interval,
    holm_adjust,
    mcnemar_of,
    newcombe_difference_interval,
    paired_bootstrap_difference,
)


def correlated_pair(
    rng: np.random.Generator, n: int, p1: float, p2: float, agreement: float
) -> tuple[np.ndarray, np.ndarray]:
    """Two models' 0/1 results on n pairs: the second copies the first with probability
    ``agreement`` where that keeps its own accuracy p2, else draws on its own."""
    first = (rng.random(n) < p1).astype(np.int8)
    return first, follower(rng, first, p2, agreement)


def follower(
    rng: np.random.Generator, first: np.ndarray, p2: float, agreement: float
) -> np.ndarray:
    """A second model's results: the first's with probability ``agreement``, else its own."""
    own = (rng.random(len(first)) < p2).astype(np.int8)
    return np.where(rng.random(len(first)) < agreement, first, own)


def true_difference(p1: float, p2: float, agreement: float) -> float:
    # The second model is right with probability agreement * p1 + (1 - agreement) * p2.
    return p1 - (agreement * p1 + (1 - agreement) * p2)


def wilson_coverage(replicates: int, rng: np.random.Generator) -> list[str]:
    lines = [
        "Wilson interval of one accuracy, continuity-corrected as the leaderboard gives it (95%)",
        f"{'n':>6} {'p':>5} {'coverage':>9}",
    ]
    for n in (20, 50, 200, 1000):
        for p in (0.5, 0.7, 0.9):
            hits = 0
            for successes in rng.binomial(n, p, size=replicates):
                low, high = corrected_wilson_interval(int(successes), n) or (0.0, 1.0)
                hits += low <= p <= high
            lines.append(f"{n:>6} {p:>5.2f} {hits / replicates:>9.3f}")
    return lines


def paired_coverage(replicates: int, rng: np.random.Generator) -> list[str]:
    lines = [
        "Paired bootstrap interval of a difference (95%, 1,000 resamples)",
        f"{'n':>6} {'p1':>5} {'p2':>5} {'agree':>6} {'coverage':>9}",
    ]
    for n in (30, 100, 400):
        for p1, p2, agreement in ((0.7, 0.7, 0.5), (0.75, 0.6, 0.6), (0.9, 0.8, 0.3)):
            truth = true_difference(p1, p2, agreement)
            hits = 0
            for seed in range(replicates):
                first, second = correlated_pair(rng, n, p1, p2, agreement)
                result = paired_bootstrap_difference(first, second, resamples=1000, seed=seed)
                low, high = result.ci_low, result.ci_high
                hits += low is not None and high is not None and low <= truth <= high
            lines.append(
                f"{n:>6} {p1:>5.2f} {p2:>5.2f} {agreement:>6.2f} {hits / replicates:>9.3f}"
            )
    return lines


def newcombe_coverage(replicates: int, rng: np.random.Generator) -> list[str]:
    lines = [
        "Newcombe interval of validated minus excluded accuracy (95%)",
        f"{'n_val':>6} {'n_exc':>6} {'p_val':>6} {'p_exc':>6} {'coverage':>9}",
    ]
    for n1, n2 in ((40, 10), (200, 50), (1000, 300)):
        for p1, p2 in ((0.7, 0.5), (0.85, 0.8), (0.95, 0.6)):
            hits = 0
            for x1, x2 in zip(
                rng.binomial(n1, p1, size=replicates),
                rng.binomial(n2, p2, size=replicates),
                strict=True,
            ):
                low, high = newcombe_difference_interval(int(x1), n1, int(x2), n2) or (-1, 1)
                hits += low <= p1 - p2 <= high
            lines.append(f"{n1:>6} {n2:>6} {p1:>6.2f} {p2:>6.2f} {hits / replicates:>9.3f}")
    return lines


def error_rates(replicates: int, rng: np.random.Generator) -> list[str]:
    lines = [
        "Equally good models: how often a difference is called significant at 0.05",
        f"{'n':>6} {'p':>5} {'McNemar':>8} {'Holm, 4 tests':>14}",
    ]
    for n in (50, 200, 1000):
        for p in (0.6, 0.8):
            single = family = 0
            for _ in range(replicates):
                best = (rng.random(n) < p).astype(np.int8)
                others = [follower(rng, best, p, 0.5) for _ in range(4)]
                raw = [mcnemar_of(best, other).p_value for other in others]
                single += raw[0] < 0.05
                family += min(holm_adjust(raw)) < 0.05
            lines.append(
                f"{n:>6} {p:>5.2f} {single / replicates:>8.3f} {family / replicates:>14.3f}"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{args.replicates} simulated benchmarks per row, seed {args.seed}\n")
    for section in (wilson_coverage, paired_coverage, newcombe_coverage, error_rates):
        print("\n".join(section(args.replicates, rng)))
        print()


if __name__ == "__main__":
    main()
