"""Coverage of the intervals an audit reports, at the sizes audits run, through the project's
own functions. Run by hand: ``python bench/coverage_bench.py`` (a few minutes;
``--replicates`` for the simulated parts). docs/evaluation.md and docs/sampling.md quote it.

1. **RM accuracy** (``evaluation.metrics.accuracy_stats``): exact coverage, by enumerating
   every number right of n pairs, for accuracies 0.50 to 0.95 in steps of 0.005; the smallest
   and the mean over that grid, beside plain Wilson's (``significance.wilson_interval``).
2. **Planned sample, per category** (``audit.sampling.category_estimate``): exact coverage over
   the hypergeometric for every validated count from half the category to all of it, in
   categories of 10 to 300 pairs sampled at 5 % to 95 %; and the half-width a plan reaches
   when the observed share is the expected one (``category_sample_size``) against the normal
   approximation's size.
3. **Correlations over models** (``evaluation.correlation.correlations``, ``ranking_agreement``):
   the rejection rate of the exact permutation tests at 0.05 when accuracy and downstream
   result are independent (type I error), and, above the few-models cut-off, the coverage of
   the Fisher interval of Spearman's rho (bivariate normal, rho = 0.6, whose population
   Spearman is 6/pi asin(rho/2)) and how often a bootstrap interval of the ranking measures
   is left out as zero-width.
4. **Difference of two models on the same pairs** (``evaluation.paired.tango_bounds``, the
   interval the leaderboard reports): exact coverage over every table (b, c) of n pairs, for
   discordance 1 % to 90 % of the pairs and every split of it, beside plain Tango (no
   continuity correction) and the paired bootstrap it replaced (simulated).
5. **Significance groups** (``evaluation.significance.significance_groups``): with five equally
   good, correlated models, how often any of them is put outside group 1 (family-wise error),
   beside Holm over the tests against the observed best; and the power line
   (``evaluation.paired.detectable_difference``) at the sizes audits run.
"""

import argparse
import math
import sys
import time
from pathlib import Path
from types import ModuleType

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django

from evaluation.correlation import (
    FEW_MODELS,
    bootstrap_over_models,
    correlations,
    ranking_agreement,
)
from evaluation.metrics import accuracy_stats
from evaluation.significance import wilson_interval

ACCURACIES = np.round(np.arange(0.50, 0.9501, 0.005), 3)


def accuracy_coverage(n: int, reported: bool) -> list[float]:
    """Exact coverage at each accuracy of the grid: the reported interval or plain Wilson."""
    bounds: list[tuple[float, float]] = []
    for right in range(n + 1):
        if reported:
            s = accuracy_stats(["correct"] * right + ["wrong"] * (n - right))
            assert s.ci_low is not None and s.ci_high is not None  # noqa: PT018
            bounds.append((s.ci_low, s.ci_high))
        else:
            bounds.append(wilson_interval(right, n) or (0.0, 1.0))
    coverages = []
    for p in ACCURACIES:
        pmf = stats.binom.pmf(np.arange(n + 1), n, p)
        coverages.append(
            float(sum(q for q, (low, high) in zip(pmf, bounds, strict=True) if low <= p <= high))
        )
    return coverages


def accuracy_table() -> list[str]:
    lines = [
        "1. RM accuracy, exact coverage over accuracies 0.50-0.95 (step 0.005)",
        f"{'n':>5} {'reported: min':>14} {'mean':>6} {'plain Wilson: min':>18} {'mean':>6}",
    ]
    for n in (20, 30, 50, 100, 200):
        ours, plain = accuracy_coverage(n, True), accuracy_coverage(n, False)
        lines.append(
            f"{n:>5} {min(ours):>14.3f} {np.mean(ours):>6.3f} {min(plain):>18.3f} "
            f"{np.mean(plain):>6.3f}"
        )
    perfect = accuracy_stats(["correct"] * 20)
    lines.append(f"20 right of 20: [{perfect.ci_low:.3f}, {perfect.ci_high:.3f}]")
    return lines


def sampling_tables() -> list[str]:
    from prb_annotate.audit import sampling

    lines = [
        "",
        "2a. Planned sample, per category: exact coverage over the hypergeometric,",
        "    worst validated share from 1/2 to 1 (N pairs, n sampled)",
        f"{'N':>5} " + " ".join(f"{f:>6.0%}" for f in FRACTIONS),
    ]
    worst_all = 1.0
    for population in (10, 20, 30, 50, 80, 120, 300):
        cells = []
        for fraction in FRACTIONS:
            sample = max(2, round(fraction * population))
            if sample >= population:
                cells.append(f"{'census':>6}")
                continue
            worst = min(
                hypergeometric_coverage(sampling, population, sample, validated)
                for validated in range((population + 1) // 2, population + 1)
            )
            worst_all = min(worst_all, worst)
            cells.append(f"{worst:>6.3f}")
        lines.append(f"{population:>5} " + " ".join(cells))
    lines.append(f"worst over every design: {worst_all:.3f}")
    lines += [
        "",
        "2b. Planned size for a category of 1,000 pairs, and the half-width reported when the",
        "    observed share is the expected one",
        f"{'share':>6} {'target':>7} {'normal n':>9} {'its half-width':>15} {'plan n':>7} "
        f"{'its half-width':>15}",
    ]
    for target in (0.10, 0.05):
        for share in (0.5, 0.8, 0.9, 0.95, 0.97):
            normal = sampling.cochran_size(1000, target, share)
            planned = sampling.category_sample_size(1000, target, share)
            lines.append(
                f"{share:>6.2f} {target:>7.2f} {normal:>9} "
                f"{sampling.reported_half_width(share, normal, 1000):>15.3f} {planned:>7} "
                f"{sampling.reported_half_width(share, planned, 1000):>15.3f}"
            )
    return [*lines, *odds_table()]


def odds_table() -> list[str]:
    """2c. The chance a one-category plan reaches its half-width if the share is as expected
    (``audit.plan_odds.category_odds``, exact), and the plan at the share's bound nearest 1/2."""
    from prb_annotate.audit import plan_odds, sampling

    lines = [
        "",
        "2c. Chance that a plan reaches its per-category half-width if the share is as expected",
        "    (exact), and the plan at the share's bound nearest 1/2: its size and its chance",
        f"{'N':>5} {'target':>7} {'share':>6} {'plan n':>7} {'chance':>7} {'bound':>6} "
        f"{'its n':>6} {'chance':>7}",
    ]
    plain, cautious_odds, extra = [], [], []
    for population in (100, 300, 1000, 3000):
        for target in (0.05, 0.10):
            for share in (0.6, 0.7, 0.8, 0.9, 0.95):
                targets = sampling.PlanTargets(category_half_width=target, expected_share=share)
                plan = sampling.plan_sample({"c": population}, targets, k=1)
                shown = plan_odds.with_odds(plan)
                odds = shown["odds"]["per_category"]["c"]
                cautious = shown["cautious"]
                its_odds = cautious["odds"]["per_category"]["c"]
                if plan.pairs < population:
                    plain.append(odds)
                    cautious_odds.append(its_odds)
                    extra.append(cautious["pairs"] / plan.pairs - 1)
                lines.append(
                    f"{population:>5} {target:>7.2f} {share:>6.2f} {plan.pairs:>7} {odds:>7.3f} "
                    f"{cautious['shares']['c']:>6.3f} {cautious['pairs']:>6} {its_odds:>7.3f}"
                )
    lines.append(
        f"plans short of a census: chance median {np.median(plain):.3f}, lowest {min(plain):.3f};"
        f" at the bound: lowest {min(cautious_odds):.3f}, median extra pairs "
        f"{100 * np.median(extra):.0f} %"
    )
    return lines


FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


def hypergeometric_coverage(
    sampling: ModuleType, population: int, sample: int, validated: int
) -> float:
    truth = validated / population
    covered = 0.0
    for hits in range(max(0, sample - (population - validated)), min(sample, validated) + 1):
        estimate = sampling.category_estimate(hits, sample, population)
        if estimate["ci_low"] - 1e-12 <= truth <= estimate["ci_high"] + 1e-12:
            covered += float(stats.hypergeom.pmf(hits, population, validated, sample))
    return covered


def correlation_tables(replicates: int, rng: np.random.Generator) -> list[str]:
    lines = [
        "",
        f"3a. Correlations over models: exact permutation tests (n <= {FEW_MODELS}), rejection",
        "    at 0.05 with accuracy and downstream result independent (nominal at most 0.05)",
        f"{'models':>7} {'reps':>5} {'pearson':>8} {'spearman':>9} {'kendall':>8} {'min p':>7}",
    ]
    for n in (3, 4, 5, 6, 7, 8):
        reps = replicates if n < 8 else max(50, replicates // 5)
        rejected = np.zeros(3)
        smallest = 1.0
        for _ in range(reps):
            results = correlations(list(rng.normal(size=n)), list(rng.normal(size=n)))
            p_values = [r.p_value if r.p_value is not None else 1.0 for r in results]
            rejected += np.array(p_values) < 0.05
            smallest = min(smallest, *p_values)
        rates = rejected / reps
        lines.append(
            f"{n:>7} {reps:>5} {rates[0]:>8.3f} {rates[1]:>9.3f} {rates[2]:>8.3f} {smallest:>7.4f}"
        )
    rho = 0.6
    truth = 6 / math.pi * math.asin(rho / 2)
    lines += [
        "",
        f"3b. Intervals over models, Spearman's rho (bivariate normal, population {truth:.3f}):",
        "    a percentile bootstrap over models (what the cut-off rests on: at or below it no",
        "    interval is given) and, above it, the Fisher interval reported; ranking measures'",
        "    bootstrap intervals left out as zero-width",
        f"{'models':>7} {'reps':>5} {'bootstrap':>10} {'zero-width':>11} {'reported':>9} "
        f"{'ranking left out':>17}",
    ]
    covariance = [[1, rho], [rho, 1]]
    for n in (4, 6, 9, 10, 12, 20, 40):
        boot = zero = covered = dropped = 0
        reps = max(50, replicates // 5)
        for _ in range(reps):
            draws = rng.multivariate_normal([0, 0], covariance, size=n)
            x, y = list(draws[:, 0]), list(draws[:, 1] - draws[:, 1].min())
            interval = bootstrap_over_models(
                lambda a, b: float(stats.spearmanr(a, b).statistic), x, y, resamples=200
            )
            if interval is not None:
                boot += interval[0] <= truth <= interval[1]
                zero += interval[1] - interval[0] <= 1e-12
            if n > FEW_MODELS:
                spearman = correlations(x, y)[1]
                low, high = spearman.ci_low, spearman.ci_high
                covered += low is not None and high is not None and low <= truth <= high
                ranking = ranking_agreement(x, y, resamples=200, seed=int(rng.integers(1 << 30)))
                dropped += sum(1 for r in ranking if r.reason and "zero-width" in r.reason)
        reported = f"{covered / reps:.3f}" if n > FEW_MODELS else "none"
        lines.append(
            f"{n:>7} {reps:>5} {boot / reps:>10.3f} {zero / reps:>11.3f} {reported:>9} "
            f"{dropped:>17}"
        )
    return [*lines, *fisher_table(replicates, rng)]


def fisher_table(replicates: int, rng: np.random.Generator) -> list[str]:
    """3c. The Fisher intervals reported for Spearman and Kendall (bivariate normal data),
    their coverage, and how often Kendall's is marked unreliable."""
    reps = max(200, replicates // 2)
    lines = [
        "",
        f"3c. Fisher intervals reported above {FEW_MODELS} models ({reps} replicates): coverage of",
        "    Spearman's (Bonett-Wright variance) and Kendall's, and Kendall's share marked",
        "    unreliable",
        f"{'rho':>5} {'models':>7} {'spearman':>9} {'kendall':>8} {'marked':>7}",
    ]
    worst = 1.0
    for rho in (0.3, 0.6, 0.9, 0.95):
        spearman_truth = 6 / math.pi * math.asin(rho / 2)
        kendall_truth = 2 / math.pi * math.asin(rho)
        for n in (10, 12, 15, 20, 40):
            covered = np.zeros(2)
            marked = 0
            for _ in range(reps):
                draws = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=n)
                found = correlations(list(draws[:, 0]), list(draws[:, 1]))
                for column, (result, truth) in enumerate(
                    ((found[1], spearman_truth), (found[2], kendall_truth))
                ):
                    low, high = result.ci_low, result.ci_high
                    covered[column] += low is not None and high is not None and low <= truth <= high
                marked += not found[2].reliable
            rates = covered / reps
            worst = min(worst, rates[0])
            lines.append(
                f"{rho:>5.2f} {n:>7} {rates[0]:>9.3f} {rates[1]:>8.3f} {marked / reps:>7.2f}"
            )
    lines.append(f"lowest coverage of Spearman's interval: {worst:.3f}")
    return lines


SECTIONS = ("accuracy", "sampling", "correlations", "differences", "groups")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", choices=SECTIONS, action="append", help="these sections")
    args = parser.parse_args()
    import os

    from bench.pairwise_coverage import difference_tables, group_tables

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prb_annotate.settings")
    django.setup()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    chosen = args.only or SECTIONS
    tables = {
        "accuracy": accuracy_table,
        "sampling": sampling_tables,
        "correlations": lambda: correlation_tables(args.replicates, rng),
        "differences": lambda: difference_tables(args.replicates, rng),
        "groups": lambda: group_tables(args.replicates, rng),
    }
    for name in chosen:
        for line in tables[name]():
            print(line, flush=True)
    print(f"\n({time.perf_counter() - started:.0f} s; seed {args.seed})")


if __name__ == "__main__":
    main()
