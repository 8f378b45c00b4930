"""The position mark's test: whether an annotator's answers lean to one side of the screen.

Counterbalancing decides, before anyone answers, whether an annotator sees the chosen answer as
A or as B. An honest annotator answers on the content, so which of their answers happened to be
shown which way is unrelated to what they answered: given what they answered, every way of
showing ``k`` of their answers with the chosen one as B is as likely as any other (the
assignment is a permutation of the sides). The test is that permutation test, exact.

Its statistic is the score of a lean towards one side. Against the others' unique majority, an
annotator who names A on some pairs whatever they show deviates when that majority is shown on
B and agrees more when it is shown on A. So the statistic is the share of their answers
*against* the majority that met a majority shown on B, minus the share of their answers *with*
the majority that did; it is two-sided about its expectation under the permutations. Their own
error rate cancels: a careless honest annotator deviates as much on either side.

The test is over the sides that are known: an imported answer whose file did not say which side
the chosen answer was on counts in the others' majorities and in none of its annotator's counts.
Imported sides are as their files record them; the test assumes the collecting tool randomised
them, as the dashboard says of an imported campaign.

The exact distribution given ``k`` is independent binomial sides conditioned on their total, so
it is computed as two matrix products: about a millisecond for an annotator with 40 answers,
0.08 s with 1,000 and 0.7 s with 3,500 (measured on one core; the audit is cached per campaign).

Across the annotators, a Bonferroni correction over those with at least
``PositionTest.least_against`` answers against the others' majority. Who is in that family
depends only on what was answered, never on the sides, so the chance of marking any honest
annotator stays within the level, whatever their error rates. Fewer answers against the
majority cannot show a lean (three on one side happen one time in four), and each annotator
kept out of the family leaves the level to those who can be marked. Fisher's exact test of the
same answers, corrected by Tarone's method, found a 35 %-biased annotator beside six careful ones
in 78 % of campaigns at 40 answers each; this test, at the level it shares with the A-share test,
finds them in 82 % (``bench/agreement_coverage.py --part marks``, docs/statistics.md).

Pure: numpy and scipy over codes, nothing from the database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from prb_annotate.audit import agreement
from prb_annotate.audit.phrases import Phrase
from prb_annotate.audit.rule import RUBRIC_FIT
from prb_annotate.audit.words import gettext_noop

FIT_CODES = [float(code) for code in range(len(RUBRIC_FIT))]
# The columns of :func:`side_counts`, one row per annotator.
SIDE_COLUMNS = (
    "against_chosen",  # answers against a majority for the chosen answer
    "against_rejected",  # ... against a majority for the rejected answer
    "with_chosen",  # answers with a majority for the chosen answer
    "with_rejected",  # ... with a majority for the rejected answer
    "uncounted",  # ties, and answers whose other annotators have no unique majority
    "shown_b",  # answers shown with the chosen answer as B
    "against_majority_b",  # answers against a majority shown on B (so: onto A)
    "with_majority_b",  # answers with a majority shown on B
)
# Relative tolerance when comparing statistics: equal values stay equal in floating point.
TOLERANCE = 1e-9

POSITION_WORDS = Phrase(
    gettext_noop("%(test)s, corrected across the annotators by %(correction)s, p < %(level)s")
)
CORRECTION_WORDS = Phrase(
    gettext_noop(
        "a Bonferroni correction over the annotators with at least %(least)s answers against "
        "the others' majority"
    )
)


@dataclass(frozen=True)
class PositionTest:
    """The position mark's test and the words it is printed with (see the module docstring)."""

    # With the A-share test's default mark (quality.POSITION_P_MARK, 0.01) the two tests that
    # make the position mark share 0.05: the chance that it falls on any honest annotator.
    level: float = 0.04
    least_against: int = 3
    test: str = gettext_noop(
        "two-sided exact permutation test of the sides the answers were shown on"
    )
    short: str = "Bonferroni"

    @property
    def correction(self) -> str:
        return CORRECTION_WORDS(least=self.least_against)

    def words(self) -> str:
        """What the mark tests and how it is corrected, as the pages and rules print it."""
        return POSITION_WORDS(test=self.test, correction=self.correction, level=self.level)

    def tests(self, counts: np.ndarray) -> list[tuple[float | None, float | None]]:
        """Per annotator (a row of :func:`side_counts`): (p-value, adjusted p-value); None for
        an annotator outside the family (too few answers against the majority, or none with
        it), who cannot be marked."""
        rows = [tuple(int(value) for value in row) for row in counts.tolist()]
        members = [self.in_family(row) for row in rows]
        family = max(1, sum(members))
        results: list[tuple[float | None, float | None]] = []
        for row, member in zip(rows, members, strict=True):
            if not member:
                results.append((None, None))
                continue
            p_value = lean_p_value(row)
            results.append((p_value, min(1.0, family * p_value)))
        return results

    def in_family(self, row: tuple[int, ...]) -> bool:
        against = row[0] + row[1]
        return against >= self.least_against and row[2] + row[3] > 0


POSITION_TEST = PositionTest()


def side_counts(codes: np.ndarray, chosen_at_a: np.ndarray) -> np.ndarray:
    """Per annotator, the counts of ``SIDE_COLUMNS`` (annotators x 8, integers).

    ``codes`` is annotators x pairs of rubric-fit codes (0 chosen, 1 rejected, 2 tie, NaN
    unseen); ``chosen_at_a`` is true (1) where that annotator was shown the chosen answer as A,
    false (0) where as B, and NaN where the side is not known (an imported answer whose file did
    not say). An answer counts against or with the majority when the pair's other annotators
    have a unique majority for the chosen or the rejected answer and the annotator named one of
    them. An answer whose side is not known still counts in the others' majorities, but in none
    of its annotator's columns: the permutation test is over the sides that are known.
    """
    counts = agreement.value_counts(codes, FIT_CODES)
    annotators, units = np.nonzero(~np.isnan(codes))
    own = agreement.codes_in(np.asarray(FIT_CODES), codes[annotators, units])
    others = counts[units].copy()
    others[np.arange(len(units)), own] -= 1
    top = others.max(axis=1)
    majority = others.argmax(axis=1)
    unique = (top > 0) & ((others == top[:, None]).sum(axis=1) == 1)
    counted = unique & (majority < 2) & (own < 2)
    against = counted & (own != majority)
    with_majority = counted & (own == majority)
    side = np.asarray(chosen_at_a, dtype=float)[annotators, units]
    known = ~np.isnan(side)
    shown_b = known & (side == 0)
    majority_b = np.where(majority == 0, shown_b, known & ~shown_b)
    columns = (
        known & against & (majority == 0),
        known & against & (majority == 1),
        known & with_majority & (majority == 0),
        known & with_majority & (majority == 1),
        known & ~counted,
        shown_b,
        against & majority_b,
        with_majority & majority_b,
    )
    return np.stack(
        [np.bincount(annotators[column], minlength=codes.shape[0]) for column in columns],
        axis=1,
    ).astype(np.int64)


def lean_p_value(counts: Sequence[int]) -> float:
    """The exact two-sided permutation p-value of one annotator's lean (the module docstring),
    from their row of :func:`side_counts`."""
    design = tuple(int(count) for count in counts[:6])
    statistic, chances = lean_distribution(design)
    against_chosen, against_rejected, with_chosen, with_rejected = design[:4]
    observed = _lean(
        counts[6], counts[7], against_chosen + against_rejected, with_chosen + with_rejected
    )
    centre = float((statistic * chances).sum())
    distance = np.abs(statistic - centre)
    edge = abs(observed - centre) * (1 - TOLERANCE) - TOLERANCE
    return float(min(1.0, chances[distance >= edge].sum()))


@lru_cache(maxsize=4096)
def lean_distribution(design: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(every value of the statistic, its chance) over the ways of showing ``shown_b`` of the
    annotator's answers with the chosen answer as B.

    Those ways are independent binomial sides conditioned on their total: with ``x`` answers
    against the majority met on B and ``s`` of those answers shown as B, the chance of
    (x, y) is the sum over s1 + s2 + s3 = ``shown_b`` of P(x, s1) P(y, s2) P(s3), a product of
    three small matrices. The binomials' own probability is ``shown_b`` / n (any value gives
    the same conditional chances; this one keeps them far from underflow). ``design`` is the
    first six counts of :func:`side_counts`, all the permutations depend on."""
    against_chosen, against_rejected, with_chosen, with_rejected, uncounted, shown_b = design
    total = against_chosen + against_rejected + with_chosen + with_rejected + uncounted
    side = shown_b / total if total else 0.5
    against = _met_on_b(against_chosen, against_rejected, side)
    with_majority = _met_on_b(with_chosen, with_rejected, side)
    rest = stats.binom.pmf(np.arange(uncounted + 1), uncounted, side)
    # rest_for[s1, s2] = P(the uncounted answers hold shown_b - s1 - s2 of the B sides)
    needed = shown_b - np.add.outer(np.arange(against.shape[1]), np.arange(with_majority.shape[1]))
    possible = (needed >= 0) & (needed <= uncounted)
    rest_for = np.where(possible, rest[np.clip(needed, 0, uncounted)], 0.0)
    joint = against @ rest_for @ with_majority.T
    joint /= joint.sum()
    met_against, met_with = np.indices(joint.shape)
    statistic = _lean(
        met_against, met_with, against_chosen + against_rejected, with_chosen + with_rejected
    )
    return statistic.ravel(), joint.ravel()


def _met_on_b(majority_chosen: int, majority_rejected: int, side: float) -> np.ndarray:
    """P(x of these answers met a majority shown on B, s of them were shown as B): a majority
    for the chosen answer is on B when the answer is shown as B, one for the rejected answer
    when it is shown as A."""
    chosen = stats.binom.pmf(np.arange(majority_chosen + 1), majority_chosen, side)
    rejected = stats.binom.pmf(np.arange(majority_rejected + 1), majority_rejected, side)
    size = majority_chosen + majority_rejected + 1
    shown_chosen, shown_rejected = np.meshgrid(
        np.arange(majority_chosen + 1), np.arange(majority_rejected + 1), indexing="ij"
    )
    joint = np.zeros((size, size))
    # Met on B: the chosen-majority answers shown as B and the rejected-majority ones shown as A.
    met = shown_chosen + majority_rejected - shown_rejected
    np.add.at(joint, (met, shown_chosen + shown_rejected), np.outer(chosen, rejected))
    return joint


def _lean(
    against_b: np.ndarray | int, with_b: np.ndarray | int, against: int, with_majority: int
) -> np.ndarray:
    """The share of answers against the majority that met it on B, minus that of the answers
    with it (a side with no answers adds nothing)."""
    share_against = np.divide(against_b, against) if against else np.zeros_like(against_b)
    share_with = np.divide(with_b, with_majority) if with_majority else np.zeros_like(with_b)
    return np.asarray(share_against - share_with, dtype=float)
