"""Sections 4 and 5 of ``bench/coverage_bench.py``: the difference of two models on the same
pairs and the significance groups, through the project's own functions."""

import numpy as np
from scipy.special import gammaln, xlogy

from evaluation.paired import TANGO_CC, IntervalMethod, detectable_difference, tango_bounds
from evaluation.significance import (
    GroupingProcedure,
    holm_adjust,
    mcnemar_of,
    paired_bootstrap_difference,
    significance_groups,
)

PLAIN_TANGO = IntervalMethod(
    "tango", "Tango's score interval", "Tango", "tango1998", correction=0.0
)
DISCORDANCES = (0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
SHARES = np.linspace(0.5, 1.0, 26)
SIZES = (20, 30, 50, 100, 200, 500)


def tables_of(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every table (b, c) of n pairs, and the log of its multinomial coefficient."""
    b_grid, c_grid = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    inside = b_grid + c_grid <= n
    b, c = b_grid[inside].astype(float), c_grid[inside].astype(float)
    return b, c, gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(n - b - c + 1)


def exact_coverages(n: int, method: IntervalMethod, discordances: tuple[float, ...]) -> list[float]:
    """Exact coverage of p10 - p01 at each discordance and split of it."""
    b, c, log_coefficient = tables_of(n)
    low, high = tango_bounds(b, c, n, method=method)
    found = []
    for discordance in discordances:
        for share in SHARES:
            p10, p01 = discordance * share, discordance * (1 - share)
            weights = np.exp(
                log_coefficient + xlogy(b, p10) + xlogy(c, p01) + xlogy(n - b - c, 1 - discordance)
            )
            truth = p10 - p01
            found.append(float(weights[(low <= truth + 1e-12) & (high >= truth - 1e-12)].sum()))
    return found


def bootstrap_coverage(
    n: int, p10: float, p01: float, replicates: int, rng: np.random.Generator
) -> tuple[float, float]:
    """The paired bootstrap's coverage of p10 - p01 and its share of [0, 0] intervals."""
    covered = points = 0
    for replicate in range(replicates):
        b, c, _ = rng.multinomial(n, [p10, p01, 1 - p10 - p01])
        first = [1] * b + [0] * c + [1] * (n - b - c)
        second = [0] * b + [1] * c + [1] * (n - b - c)
        result = paired_bootstrap_difference(first, second, resamples=500, seed=replicate)
        assert result.ci_low is not None and result.ci_high is not None  # noqa: PT018
        covered += result.ci_low - 1e-12 <= p10 - p01 <= result.ci_high + 1e-12
        points += result.ci_low == result.ci_high == 0
    return covered / replicates, points / replicates


def difference_tables(replicates: int, rng: np.random.Generator) -> list[str]:
    lines = [
        "",
        "4a. Difference of two models on the same pairs: exact coverage over every table (b, c),",
        f"    discordance {DISCORDANCES[0]:g}-{DISCORDANCES[-1]:g} of the pairs, every split of it "
        "(step 0.02)",
        f"    reported: {TANGO_CC.words}",
        f"{'n':>5} {'reported: min':>14} {'mean':>6} {'plain Tango: min':>17} {'mean':>6} "
        f"{'all discordant: min':>20} {'[0, 0]':>7}",
    ]
    for n in SIZES:
        ours = exact_coverages(n, TANGO_CC, DISCORDANCES)
        plain = exact_coverages(n, PLAIN_TANGO, DISCORDANCES)
        every = exact_coverages(n, TANGO_CC, (1.0,))
        b, c, _ = tables_of(n)
        low, high = tango_bounds(b, c, n)
        lines.append(
            f"{n:>5} {min(ours):>14.3f} {np.mean(ours):>6.3f} {min(plain):>17.3f} "
            f"{np.mean(plain):>6.3f} {min(every):>20.3f} {int(np.sum(low == high)):>7}"
        )
    simulated = max(100, replicates // 2)
    lines += [
        "",
        "4b. One model right alone on 6 % of the pairs, the other on 4 % or 1 % (differences of",
        f"    2 and 5 points): exact coverage of the reported interval, and the paired bootstrap's "
        f"({simulated} replicates)",
        f"{'n':>5} {'difference':>11} {'reported':>9} {'bootstrap':>10} {'its [0, 0]':>11}",
    ]
    for n in (20, 100):
        for p10, p01 in ((0.06, 0.04), (0.06, 0.01)):
            share = p10 / (p10 + p01)
            exact = exact_single(n, p10 + p01, share)
            boot, points = bootstrap_coverage(n, p10, p01, simulated, rng)
            lines.append(
                f"{n:>5} {100 * (p10 - p01):>11.0f} {exact:>9.3f} {boot:>10.3f} {points:>11.3f}"
            )
    return lines


def exact_single(n: int, discordance: float, share: float) -> float:
    b, c, log_coefficient = tables_of(n)
    low, high = tango_bounds(b, c, n)
    p10, p01 = discordance * share, discordance * (1 - share)
    weights = np.exp(
        log_coefficient + xlogy(b, p10) + xlogy(c, p01) + xlogy(n - b - c, 1 - discordance)
    )
    truth = p10 - p01
    return float(weights[(low <= truth + 1e-12) & (high >= truth - 1e-12)].sum())


def equal_models(
    rng: np.random.Generator, n: int, accuracy: float, agreement: float, models: int = 5
) -> dict[str, np.ndarray]:
    """Models equally good on n pairs, correlated through a shared base: each copies the base's
    result with probability ``agreement`` and otherwise draws its own (same accuracy)."""
    base = rng.random(n) < accuracy
    found = {}
    for index in range(models):
        own = rng.random(n) < accuracy
        found[f"m{index}"] = np.where(rng.random(n) < agreement, base, own).astype(np.int8)
    return found


def family_errors(codes: dict[str, np.ndarray], alpha: float) -> tuple[bool, bool]:
    """Whether any model is put outside group 1: by the groups reported, and by Holm over the
    tests against the observed best alone."""
    accuracy = {name: float(values.mean()) for name, values in codes.items()}
    order = sorted(codes, key=lambda name: (-accuracy[name], name))
    raw = {
        (leader, other): mcnemar_of(codes[leader], codes[other]).p_value
        for position, leader in enumerate(order)
        for other in order[position + 1 :]
    }
    groups = significance_groups(order, raw, alpha)
    against_best = holm_adjust([raw[(order[0], other)] for other in order[1:]])
    return any(group != 1 for group in groups.values()), any(p < alpha for p in against_best)


def group_tables(replicates: int, rng: np.random.Generator) -> list[str]:
    procedure = GroupingProcedure()
    lines = [
        "",
        "5a. Five equally good models (accuracy 0.7), correlated: how often any is put outside",
        f"    group 1 ({replicates} replicates; nominal at most {procedure.alpha:g})",
        f"    reported: {procedure.words(5)}",
        f"{'n':>5} {'agreement':>10} {'reported':>9} {'Holm vs best':>13}",
    ]
    worst = 0.0
    for n in (20, 50, 100, 200, 500):
        for agreement in (0.0, 0.5, 0.8):
            reported = against_best = 0
            for _ in range(replicates):
                ours, old = family_errors(equal_models(rng, n, 0.7, agreement), procedure.alpha)
                reported += ours
                against_best += old
            worst = max(worst, reported / replicates)
            lines.append(
                f"{n:>5} {agreement:>10.1f} {reported / replicates:>9.3f} "
                f"{against_best / replicates:>13.3f}"
            )
    lines.append(f"largest family-wise error of the groups reported: {worst:.3f}")
    level = procedure.strictest_level(5)
    lines += [
        "",
        "5b. Power line: the smallest difference the exact McNemar test finds 80 % of the time at",
        f"    Holm's strictest step with five models (alpha {level:g}), in points",
        f"{'pairs':>6} " + " ".join(f"{f'{d:.0%} disc.':>10}" for d in (0.1, 0.2, 0.3)),
    ]
    for n in (50, 100, 200, 500, 1000):
        cells = []
        for discordance in (0.1, 0.2, 0.3):
            found = detectable_difference(round(discordance * n), n, level)
            cells.append(f"{'none':>10}" if found is None else f"{100 * found:>10.1f}")
        lines.append(f"{n:>6} " + " ".join(cells))
    return lines
