"""Coverage of the agreement intervals and the power of the quality marks on simulated audits,
through the audit's own functions. docs/statistics.md quotes the tables.

Run by hand: ``python bench/agreement_coverage.py --replicates 300`` for the figures the docs
quote (``--replicates`` defaults to a quick 20 a cell; ``--part intervals`` or ``--part marks``
runs one half).

**Intervals.** Each replicate is one simulated audit of the rubric-fit question (chosen /
rejected / tie): n pairs, each answered by k annotators (2 or 3) drawn from a pool of 10. A
pair's expected answer is "chosen" with probability ``prevalence`` and "rejected" or "tie"
otherwise. Three pools (``POOLS``): careful (all 10 give another answer 2 % of the time),
mixed (2 of them 25 %), adversarial (one of them never gives the expected answer). The true
value of a coefficient is its value on 400,000 simulated pairs of the same pool. Every
interval is computed by ``AgreementData.estimates`` as the audit does; "before" is the same
interval without centring (``Bootstrap(centring=False)``).

**Marks.** The position mark (``position_test.side_counts``, ``quality.position_tests`` with
``POSITION_TEST``'s correction, and the A-share test it joins) for an annotator who names A on
25, 35 or 50 % of pairs whatever they show, beside six careful ones, and on honest pools of 5
to 30 annotators, careful or with error rates from 1 to 10 %; "Holm" is the same test
Holm-corrected over every annotator, without the family of those who could show a lean. And
``quality.agreement_tests`` on honest pools whose error rates differ (1-10 %).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prb_annotate.audit import agreement, intervals, position_test, quality

DOMAIN = [0.0, 1.0, 2.0]
POOL_SIZE = 10
CAREFUL_ERROR = 0.02
POOLS: dict[str, list[float]] = {
    "careful": [CAREFUL_ERROR] * POOL_SIZE,
    "mixed": [0.25] * 2 + [CAREFUL_ERROR] * (POOL_SIZE - 2),
    "adversarial": [1.0] + [CAREFUL_ERROR] * (POOL_SIZE - 1),
}
RATERS = (2, 3)
PAIRS = (20, 30, 40, 60, 100, 200)
PREVALENCES = (0.5, 0.7, 0.85, 0.9, 0.95, 0.97)
COEFFICIENTS: dict[str, tuple[agreement.Coefficient, dict[str, Any]]] = {
    "alpha": ("alpha", {"level": "nominal"}),
    "ac1": ("gwet", {"weights": "identity"}),
}
TRUTH_PAIRS = 400_000
TARGET = 0.93


def simulate(
    pairs: int,
    prevalence: float,
    errors: list[float],
    raters: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Annotators x pairs codes (NaN where an annotator did not see the pair)."""
    error = np.asarray(errors)
    expected = np.where(rng.random(pairs) < prevalence, 0, rng.integers(1, 3, pairs))
    data = np.full((len(error), pairs), np.nan)
    chosen = np.argsort(rng.random((pairs, len(error))), axis=1)[:, :raters]
    for column in range(raters):
        who = chosen[:, column]
        wrong = rng.random(pairs) < error[who]
        other = (expected + rng.integers(1, 3, pairs)) % 3
        data[who, np.arange(pairs)] = np.where(wrong, other, expected)
    return data


def true_values(prevalence: float, errors: list[float], raters: int) -> dict[str, float]:
    data = simulate(TRUTH_PAIRS, prevalence, errors, raters, np.random.default_rng(12345))
    prepared = agreement.AgreementData.from_data(data, DOMAIN)
    values = {}
    for name, (coefficient, options) in COEFFICIENTS.items():
        value = prepared.estimate(coefficient, **options).value
        assert value is not None
        values[name] = value
    return values


@dataclass
class Cell:
    """One (pool, raters, pairs, prevalence, coefficient) cell's tallies."""

    replicates: int = 0
    covered: int = 0
    covered_before: int = 0
    width: float = 0.0
    width_before: float = 0.0
    reliable: int = 0
    reliable_covered: int = 0
    upper_end_before: int = 0

    def add(self, after: agreement.Estimate, before: agreement.Estimate, truth: float) -> None:
        self.replicates += 1
        hit = holds(after, truth)
        self.covered += hit
        self.covered_before += holds(before, truth)
        self.width += width(after)
        self.width_before += width(before)
        self.upper_end_before += before.ci_high is not None and before.ci_high == before.value
        if after.reliable:
            self.reliable += 1
            self.reliable_covered += hit


def holds(estimate: agreement.Estimate, truth: float) -> bool:
    low, high = estimate.ci_low, estimate.ci_high
    return low is not None and high is not None and low - 1e-12 <= truth <= high + 1e-12


def width(estimate: agreement.Estimate) -> float:
    if estimate.ci_low is None or estimate.ci_high is None:
        return 0.0
    return estimate.ci_high - estimate.ci_low


Key = tuple[str, int, int, float, str]


def run_intervals(replicates: int, resamples: int, seed: int) -> dict[Key, Cell]:
    cells: dict[Key, Cell] = {}
    requests = list(COEFFICIENTS.values())
    for pool, errors in POOLS.items():
        for raters in RATERS:
            for prevalence in PREVALENCES:
                truth = true_values(prevalence, errors, raters)
                for pairs in PAIRS:
                    keys = {name: (pool, raters, pairs, prevalence, name) for name in COEFFICIENTS}
                    for key in keys.values():
                        cells[key] = Cell()
                    rng = np.random.default_rng([seed, pairs, int(prevalence * 100), raters])
                    for replicate in range(replicates):
                        data = simulate(pairs, prevalence, errors, raters, rng)
                        prepared = agreement.AgreementData.from_data(data, DOMAIN)
                        after = prepared.estimates(
                            requests, agreement.Bootstrap(resamples, replicate)
                        )
                        before = uncentred(prepared, after, resamples, replicate)
                        for name, one, other in zip(COEFFICIENTS, after, before, strict=True):
                            cells[keys[name]].add(one, other, truth[name])
    return cells


def uncentred(
    prepared: agreement.AgreementData,
    after: list[agreement.Estimate],
    resamples: int,
    seed: int,
) -> list[agreement.Estimate]:
    """The intervals before centring: computed again only where centring moved them."""
    redo = [
        index
        for index, (coefficient, _) in enumerate(COEFFICIENTS.values())
        if intervals.CENTRED[agreement.RELIABILITY_FAMILY[coefficient]]
    ]
    again = prepared.estimates(
        [list(COEFFICIENTS.values())[index] for index in redo],
        agreement.Bootstrap(resamples, seed, centring=False),
    )
    before = list(after)
    for index, estimate in zip(redo, again, strict=True):
        before[index] = estimate
    return before


def summary_table(cells: dict[Key, Cell]) -> str:
    """Per pool, ratings a pair and coefficient, over its 36 cells (6 sizes x 6 prevalences)."""
    lines = [
        "| pool | k | coefficient | coverage before | coverage after | mean width before "
        "| mean width after | estimate at the upper end before | marked unreliable "
        "| lowest coverage if reliable (pairs/prevalence, reliable replicates) |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for pool in POOLS:
        for raters in RATERS:
            for name in COEFFICIENTS:
                group = [
                    (key, cell)
                    for key, cell in cells.items()
                    if key[0] == pool and key[1] == raters and key[4] == name
                ]
                total = sum(cell.replicates for _, cell in group)
                lowest = min(
                    (
                        (cell.reliable_covered / cell.reliable, key, cell.reliable)
                        for key, cell in group
                        if cell.reliable
                    ),
                    default=None,
                )
                lowest_text = (
                    "—"
                    if lowest is None
                    else f"{lowest[0]:.3f} ({lowest[1][2]}/{lowest[1][3]:.2f}, {lowest[2]})"
                )
                lines.append(
                    f"| {pool} | {raters} | {name} "
                    f"| {sum(c.covered_before for _, c in group) / total:.3f} "
                    f"| {sum(c.covered for _, c in group) / total:.3f} "
                    f"| {sum(c.width_before for _, c in group) / total:.3f} "
                    f"| {sum(c.width for _, c in group) / total:.3f} "
                    f"| {sum(c.upper_end_before for _, c in group) / total:.0%} "
                    f"| {1 - sum(c.reliable for _, c in group) / total:.0%} | {lowest_text} |"
                )
    return "\n".join(lines)


def short_cells(cells: dict[Key, Cell]) -> str:
    """Every cell whose reliable intervals cover less than ``TARGET``."""
    rows = [
        f"- {key[0]}, k {key[1]}, {key[2]} pairs, prevalence {key[3]:.2f}, {key[4]}: "
        f"{cell.reliable_covered / cell.reliable:.3f} over {cell.reliable} reliable intervals"
        for key, cell in sorted(cells.items())
        if cell.reliable and cell.reliable_covered / cell.reliable < TARGET
    ]
    return "\n".join(rows) if rows else f"- none: every cell's reliable intervals cover {TARGET}+"


# --------------------------------------------------------------------------------------------
# The quality marks

MARK_RATERS = 3
MARK_PREVALENCE = 0.9
BIAS = 0.35
BIASES = (0.25, 0.35, 0.5)
BIASED_POOL = 7
ANSWERS = (20, 40, 50, 60, 100)
HONEST_POOLS = (5, 10, 20, 30)
HONEST_ANSWERS = (40, 100)
SPREAD = (0.01, 0.10)
SPREAD_POOLS = (4, 7, 10)
SPREAD_PAIRS = (100, 400)


def campaign(
    errors: np.ndarray,
    answers: int,
    biased: int | None,
    rng: np.random.Generator,
    bias: float = BIAS,
) -> tuple[np.ndarray, np.ndarray]:
    """(codes, chosen shown as A): annotators x pairs, ``MARK_RATERS`` a pair, about
    ``answers`` answers each; annotator ``biased`` names A on ``bias`` of pairs."""
    pool = len(errors)
    pairs = round(answers * pool / MARK_RATERS)
    expected = np.where(rng.random(pairs) < MARK_PREVALENCE, 0, rng.integers(1, 3, pairs))
    codes = np.full((pool, pairs), np.nan)
    shown_a = np.zeros((pool, pairs), dtype=bool)
    chosen = np.argsort(rng.random((pairs, pool)), axis=1)[:, :MARK_RATERS]
    for column in range(MARK_RATERS):
        who = chosen[:, column]
        at_a = rng.random(pairs) < 0.5
        wrong = rng.random(pairs) < errors[who]
        answer = np.where(wrong, (expected + rng.integers(1, 3, pairs)) % 3, expected)
        leans = (who == biased) & (rng.random(pairs) < bias)
        codes[who, np.arange(pairs)] = np.where(leans, np.where(at_a, 0, 1), answer)
        shown_a[who, np.arange(pairs)] = at_a
    return codes, shown_a


def position_marks(codes: np.ndarray, shown_a: np.ndarray) -> tuple[set[int], set[int]]:
    """(marked by the audit's position mark, marked by the same test Holm-corrected over every
    annotator with answers both against and with the others' majority)."""
    sides = position_test.side_counts(codes, shown_a)
    tests = quality.position_tests(sides)
    lean_p = [
        position_test.lean_p_value(row) if row[0] + row[1] and row[2] + row[3] else None
        for row in sides.tolist()
    ]
    a_answers = ((codes == 0) & shown_a) | ((codes == 1) & ~shown_a)
    b_answers = ((codes == 0) & ~shown_a) | ((codes == 1) & shown_a)
    share_p = [
        quality.a_share_test(int(a), int(b))[1]
        for a, b in zip(a_answers.sum(axis=1), b_answers.sum(axis=1), strict=True)
    ]
    share_holm = quality.holm(share_p)
    holm = quality.holm(lean_p)
    now, before = set(), set()
    for index, ((_, adjusted), held, old) in enumerate(zip(tests, share_holm, holm, strict=True)):
        if quality.position_marked(adjusted, held, quality.POSITION_P_MARK):
            now.add(index)
        if quality.position_marked(old, held, quality.POSITION_P_MARK):
            before.add(index)
    return now, before


def detection_table(campaigns: int, seed: int) -> str:
    """One biased annotator beside ``BIASED_POOL - 1`` careful ones: the share of campaigns in
    which the position mark falls on them, by answers each and bias."""
    lines = [
        "| answers each | " + " | ".join(f"bias {bias:.0%}, now | Holm" for bias in BIASES) + " |",
        "|---:|" + "---:|---:|" * len(BIASES),
    ]
    errors = np.full(BIASED_POOL, CAREFUL_ERROR)
    for answers in ANSWERS:
        cells = []
        for bias in BIASES:
            rng = np.random.default_rng([seed, answers, int(bias * 100)])
            found = np.zeros(2)
            for _ in range(campaigns):
                now, before = position_marks(*campaign(errors, answers, 0, rng, bias))
                found += (0 in now, 0 in before)
            cells += [f"{share:.0%}" for share in found / campaigns]
        lines.append(f"| {answers} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def honest_table(campaigns: int, seed: int) -> str:
    """Honest pools, every annotator at ``CAREFUL_ERROR`` or with error rates drawn from
    ``SPREAD``: the share of campaigns in which the position mark falls on anyone."""
    lines = [
        "| annotators | answers each | equal errors, now | Holm | errors 1-10 %, now | Holm |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for pool in HONEST_POOLS:
        for answers in HONEST_ANSWERS:
            rng = np.random.default_rng([seed, pool, answers])
            marked = np.zeros(4)
            for _ in range(campaigns):
                equal = np.full(pool, CAREFUL_ERROR)
                now, before = position_marks(*campaign(equal, answers, None, rng))
                marked[:2] += (bool(now), bool(before))
                spread = rng.uniform(*SPREAD, pool)
                now, before = position_marks(*campaign(spread, answers, None, rng))
                marked[2:] += (bool(now), bool(before))
            lines.append(
                f"| {pool} | {answers} | "
                + " | ".join(f"{share:.1%}" for share in marked / campaigns)
                + " |"
            )
    return "\n".join(lines)


@dataclass
class Spread:
    campaigns: int = 0
    marked: int = 0
    least_careful: int = 0
    marks: list[int] = field(default_factory=list)


def spread_table(campaigns: int, seed: int) -> str:
    """Honest pools whose error rates are drawn from ``SPREAD``: how often the agreement mark
    falls on one of them, and how often on the least careful."""
    lines = [
        "| annotators | pairs | campaigns with a mark | marks on the least careful |",
        "|---:|---:|---:|---:|",
    ]
    for pool in SPREAD_POOLS:
        for pairs in SPREAD_PAIRS:
            rng = np.random.default_rng([seed, pool, pairs])
            tally = Spread()
            for _ in range(campaigns):
                errors = rng.uniform(*SPREAD, pool)
                codes, _ = campaign(errors, round(pairs * MARK_RATERS / pool), None, rng)
                agreeing, counted = agreement.leave_one_out_counts(codes, DOMAIN)
                tests = quality.agreement_tests(agreeing.tolist(), counted.tolist())
                marked = [i for i, (_, p) in enumerate(tests) if quality.below(p, 0.05)]
                tally.campaigns += 1
                tally.marked += bool(marked)
                tally.marks.append(len(marked))
                tally.least_careful += int(np.argmax(errors)) in marked
            least = tally.least_careful / sum(tally.marks) if sum(tally.marks) else 0.0
            lines.append(
                f"| {pool} | {pairs} | {tally.marked / tally.campaigns:.1%} | {least:.0%} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=20, help="audits a cell (20)")
    parser.add_argument("--campaigns", type=int, default=100, help="campaigns a row (100)")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--part", choices=("all", "intervals", "marks"), default="all")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    started = time.perf_counter()
    if args.part in ("all", "intervals"):
        cells = run_intervals(args.replicates, args.resamples, args.seed)
        print(summary_table(cells))
        print(f"\nCells whose reliable intervals cover less than {TARGET}:")
        print(short_cells(cells))
        print(
            f"\n{args.replicates} replicates a cell, {args.resamples} resamples an interval, "
            f"{time.perf_counter() - started:.0f} s\n"
        )
    if args.part in ("all", "marks"):
        print(f"Position mark: {quality.POSITION_TEST.words()}\n")
        print(detection_table(args.campaigns, args.seed))
        print()
        print(honest_table(args.campaigns, args.seed))
        print()
        print(spread_table(args.campaigns, args.seed))
        print(f"\n{args.campaigns} campaigns a row, {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
