"""Annotator quality control: pure functions over the annotations frame (no ORM).

One row per annotator (``annotator_quality``) with what a manager checks before trusting their
answers, over their answers to regular items:

- **gold accuracy**: share of gold items answered as expected (``annotators.gold_results``);
- **agreement with the others** (leave-one-out): share of their rubric-fit answers that match
  the unique majority of the *other* annotators of the pair (``agreement.leave_one_out_agreement``);
- **position bias**: share of "A" among their non-tie rubric-fit answers, with the two-sided
  exact binomial p-value against 0.5 (``scipy.stats.binomtest``);
- **speed**: median time per item, and the share of items answered faster than the campaign's
  floor (``fast_answer_seconds``);
- **straight-lining**: the share of annotations that give the same rating on every criterion
  of both answers.

An annotator is marked as an **outlier** on a measure when it crosses the fixed rule in
``OUTLIER_RULES``. The tests behind the marks stay calibrated when most annotators agree
perfectly and when a campaign has many annotators:

- **agreement**: a one-sided Fisher exact test of the annotator's agreements and disagreements
  with the others against everyone else's pooled (:func:`agreement_tests`), Holm-corrected
  across the annotators. A modified z-score is undefined there: one 0.95 beside three 1.00
  scored minus infinity and marked an honest annotator.
- **position bias**: whether the annotator's answers against the others' majority met that
  majority shown on one side more often than their answers with it did: an exact permutation
  test of the sides, corrected across the annotators who could show a lean (``POSITION_TEST``
  in ``position_test.py``, whose words every page and the bench print); or the exact binomial
  A-share p-value, Holm-corrected across the annotators, which is also what leaving annotators
  out reads (``biased_annotators``).
- **straight-lining**: one rating everywhere is what a careful annotator gives two excellent
  answers, PRB's premise; it is marked only when another signal (too fast, low gold
  accuracy, disagreement) marks the same annotator.

Which annotators *leave the audit* (``left_out``) is a separate decision with three reasons: a
manager excluded them, their gold accuracy is below ``min_gold_accuracy``, or their
Holm-corrected A-share p-value is below ``position_bias_max_p``. Both settings are optional;
outliers alone leave nobody out.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from prb_annotate.audit import agreement
from prb_annotate.audit.annotators import gold_results
from prb_annotate.audit.phrases import Phrase
from prb_annotate.audit.position_test import POSITION_TEST, SIDE_COLUMNS, side_counts
from prb_annotate.audit.questions import NOMINAL_QUESTIONS, question_domain, ratings_matrix
from prb_annotate.audit.rule import counted_annotations
from prb_annotate.audit.words import gettext_noop

# Why annotations leave the audit, most decisive first.
MANAGER_EXCLUDED = "manager_excluded"
LOW_GOLD_ACCURACY = "low_gold_accuracy"
POSITION_BIAS = "position_bias"
# Marked for translation, kept English in the report and the files (``phrases.py``).
LEFT_OUT_REASONS = {
    MANAGER_EXCLUDED: gettext_noop("excluded by a manager"),
    LOW_GOLD_ACCURACY: gettext_noop("gold accuracy below the campaign's minimum"),
    POSITION_BIAS: gettext_noop(
        "share of A answers biased beyond the campaign's p-value threshold"
    ),
}

# The family-wise error rate of the agreement mark across a campaign's annotators.
AGREEMENT_MARK_P = 0.05
# Fixed marks on the other measures (the p-value mark when the campaign sets no threshold).
POSITION_P_MARK = 0.01
FAST_SHARE_MARK = 0.5
STRAIGHT_LINING_MARK = 0.5
GOLD_ACCURACY_MARK = 0.7


@dataclass(frozen=True)
class HonestSpread:
    """The agreement mark on honest pools whose error rates differ, measured by
    ``bench/agreement_coverage.py --part marks`` (docs/statistics.md): the share of campaigns
    in which it marks someone, lowest and highest over pools of ``annotators`` and campaigns
    of ``pairs``, and the share of its marks that fall on the pool's least careful member
    (lowest and highest)."""

    error_low: float
    error_high: float
    annotators: tuple[int, int]
    pairs: tuple[int, int]
    marked: tuple[float, float]
    least_careful: tuple[float, float]

    def note(self) -> str:
        return HONEST_NOTE(**self.figures())

    def figures(self) -> dict[str, str]:
        return {
            "error_low": f"{self.error_low:.0%}",
            "error_high": f"{self.error_high:.0%}",
            "marked": f"{self.marked[0]:.0%}-{self.marked[1]:.0%}",
            "annotators": f"{self.annotators[0]}-{self.annotators[1]}",
            "pairs": f"{self.pairs[0]}-{self.pairs[1]}",
            "least_careful": f"{self.least_careful[0]:.0%}-{self.least_careful[1]:.0%}",
        }


HONEST_NOTE = Phrase(
    gettext_noop(
        "it tests that an annotator agrees less than the others, not that they answer "
        "carelessly or dishonestly: with honest annotators whose error rates range from "
        "%(error_low)s to %(error_high)s, it marks one of them in %(marked)s of campaigns "
        "(%(annotators)s annotators, %(pairs)s pairs), the least careful one in "
        "%(least_careful)s of those marks: a marked annotator may simply be the least careful "
        "honest one"
    )
)


HONEST_SPREAD = HonestSpread(0.01, 0.10, (4, 10), (100, 400), (0.06, 0.512), (0.44, 0.83))


# Each mark's rule: its words (marked for translation) and their figures; ``OUTLIER_RULES`` in
# English, as the report and the files keep them (a page shows ``Phrase.shown``).
OUTLIER_RULE_PHRASES: dict[str, tuple[Phrase, dict[str, object]]] = {
    "gold_accuracy": (
        Phrase(gettext_noop("gold accuracy below %(mark)s (or the campaign's minimum)")),
        {"mark": f"{GOLD_ACCURACY_MARK:.0%}"},
    ),
    "agreement": (
        Phrase(
            gettext_noop(
                "agrees less than the others: matches the others' majority less often than the "
                "rest do (one-sided Fisher exact test, Holm-corrected across the annotators, "
                "p < %(level)s); %(note)s"
            )
        ),
        {"level": AGREEMENT_MARK_P, "note": HONEST_SPREAD.note()},
    ),
    "position_bias": (
        Phrase(
            gettext_noop(
                "leans to one side: their answers against the others' majority met it shown "
                "on one side more often than their answers with it did (%(test)s), or A-share "
                "p-value, Holm-corrected, below %(mark)s (or the campaign's threshold)"
            )
        ),
        {"test": POSITION_TEST.words(), "mark": POSITION_P_MARK},
    ),
    "fast": (
        Phrase(gettext_noop("more than %(share)s of items answered faster than the floor")),
        {"share": f"{FAST_SHARE_MARK:.0%}"},
    ),
    "straight_lining": (
        Phrase(
            gettext_noop(
                "more than %(share)s of annotations straight-lined, and another mark "
                "(fast, gold accuracy, agreement) on the same annotator"
            )
        ),
        {"share": f"{STRAIGHT_LINING_MARK:.0%}"},
    ),
}
OUTLIER_RULES = {
    name: phrase(**figures) for name, (phrase, figures) in OUTLIER_RULE_PHRASES.items()
}
# Straight-lining alone is a careful annotator's answer to two excellent answers.
STRAIGHT_LINING_CORROBORATED_BY = ("fast", "gold_accuracy", "agreement")


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's (1979) step-down adjusted p-values; None stays None and is not in the family.

    The i-th smallest of m p-values is multiplied by m - i + 1 (i from 1), then made
    non-decreasing in that order and capped at 1: rejecting where the adjusted value is below
    a level keeps the chance of any false rejection within that level, whatever the
    dependence between the tests.
    """
    present = [(value, index) for index, value in enumerate(p_values) if value is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (value, index) in enumerate(sorted(present)):
        running = max(running, min(1.0, (len(present) - rank) * value))
        adjusted[index] = running
    return adjusted


def agreement_tests(
    agreeing: Sequence[int], counted: Sequence[int]
) -> list[tuple[float | None, float | None]]:
    """Per annotator: (p-value, Holm-adjusted p-value) that they agree less than the rest.

    One-sided Fisher exact test of the 2 x 2 table (this annotator's agreements and
    disagreements with the others' majority; everyone else's, pooled). Exact, so it holds
    when everyone else agrees every time, where a z-score is infinite. None for an annotator
    with nothing counted.
    """
    total_agreeing, total_counted = sum(agreeing), sum(counted)
    p_values: list[float | None] = []
    for own_agreeing, own_counted in zip(agreeing, counted, strict=True):
        rest_agreeing = total_agreeing - own_agreeing
        rest_counted = total_counted - own_counted
        if own_counted == 0 or rest_counted == 0:
            p_values.append(None)
            continue
        table = [
            [own_agreeing, own_counted - own_agreeing],
            [rest_agreeing, rest_counted - rest_agreeing],
        ]
        p_values.append(float(stats.fisher_exact(table, alternative="less").pvalue))
    return list(zip(p_values, holm(p_values), strict=True))


def position_tests(counts: np.ndarray) -> list[tuple[float | None, float | None]]:
    """Per annotator (a row of :func:`position_test.side_counts`): (p-value, adjusted p-value)
    that their answers lean to one side, by ``POSITION_TEST`` (see :mod:`position_test`)."""
    return POSITION_TEST.tests(counts)


def a_share_test(a_answers: int, b_answers: int) -> tuple[float | None, float | None]:
    """(share of A, two-sided exact binomial p-value against 0.5); None when no answer."""
    total = a_answers + b_answers
    if total == 0:
        return None, None
    return a_answers / total, agreement.binomial_p_value(a_answers, total)


def straight_lined(ratings: pd.DataFrame) -> pd.Series:
    """Per row: every rating column holds one and the same value (missing ratings never do)."""
    if ratings.shape[1] == 0:
        return pd.Series(False, index=ratings.index)
    complete = ratings.notna().all(axis=1)
    return complete & (ratings.nunique(axis=1) == 1)


def fast_share(times_ms: Iterable[float], floor_seconds: float) -> float | None:
    """Share of the known times strictly below the floor; None without any time."""
    times = [value for value in times_ms if value is not None and not math.isnan(value)]
    if not times:
        return None
    return sum(value < floor_seconds * 1000 for value in times) / len(times)


@dataclass(frozen=True)
class QualitySettings:
    """The campaign settings quality control reads."""

    quality_criteria: tuple[str, ...]
    fast_answer_seconds: float = 10.0
    min_gold_accuracy: float | None = None
    position_bias_max_p: float | None = None


def annotator_quality(
    frame: pd.DataFrame,
    items: pd.DataFrame,
    settings: QualitySettings,
    left_out: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One row per annotator of ``frame`` (see the module docstring), sorted by name.

    ``left_out`` (annotator -> reason code) marks who is out of the audit; agreement is still
    measured against every annotator, so that an excluded one can be judged on the same terms.
    """
    left_out = left_out or {}
    rows = counted_annotations(frame, items)
    names = pd.Index(sorted(frame["annotator"].unique()))
    units = pd.Index(sorted(rows["pair_id"].unique()))
    fit = NOMINAL_QUESTIONS[0]
    matrix = ratings_matrix(rows, fit, names, units)
    loo_agreeing, loo_units = agreement.leave_one_out_counts(matrix, question_domain(fit))
    agreement_p = agreement_tests(loo_agreeing.tolist(), loo_units.tolist())
    sides = side_counts(matrix, shown_chosen_at_a(rows, names, units))
    position_p = position_tests(sides)
    gold = gold_results(frame, items)
    rating_columns = [
        column
        for side in ("chosen", "rejected")
        for column in (f"quality_{side}_{criterion}" for criterion in settings.quality_criteria)
        if column in rows
    ]
    flat = straight_lined(rows[rating_columns])
    table = []
    for index, name in enumerate(names):
        own = rows[rows["annotator"] == name]
        positions = own["rubric_fit_position"]
        share_a, p_value = a_share_test(
            int((positions == "A").sum()), int((positions == "B").sum())
        )
        times = pd.to_numeric(own["time_on_task_ms"], errors="coerce").dropna()
        gold_row = gold.loc[name] if name in gold.index else None
        table.append(
            {
                "annotator": name,
                "annotator_id": int(own["annotator_id"].iloc[0]) if len(own) else None,
                "annotations": len(own),
                "gold_answered": int(gold_row["gold_answered"]) if gold_row is not None else 0,
                "gold_accuracy": (
                    float(gold_row["gold_accuracy"]) if gold_row is not None else None
                ),
                "agreement": (
                    float(loo_agreeing[index] / loo_units[index]) if loo_units[index] else None
                ),
                "agreement_units": int(loo_units[index]),
                "agreement_count": int(loo_agreeing[index]),
                "agreement_p_value": agreement_p[index][0],
                "agreement_p_holm": agreement_p[index][1],
                "share_a": share_a,
                "position_p_value": p_value,
                "position_sides": dict(zip(SIDE_COLUMNS, sides[index].tolist(), strict=True)),
                "position_test_p_value": position_p[index][0],
                "position_test_p_adjusted": position_p[index][1],
                "median_seconds": float(times.median()) / 1000 if len(times) else None,
                "fast_share": fast_share(times.tolist(), settings.fast_answer_seconds),
                "straight_lining_share": float(flat[own.index].mean()) if len(own) else None,
                "left_out": left_out.get(name),
            }
        )
    _mark_outliers(table, settings)
    return table


def shown_chosen_at_a(rows: pd.DataFrame, names: pd.Index, units: pd.Index) -> np.ndarray:
    """Annotators x pairs: 1 where that annotator was shown the chosen answer as A, 0 where as
    B, NaN where no answer or its side is not known.

    From ``chosen_position`` (empty for an imported answer whose file did not say), or, in a
    frame without it, from the rubric-fit answer and the side it was given on (a tie does not
    say which side the chosen answer was on)."""
    shown = np.full((len(names), len(units)), np.nan)
    if rows.empty:
        return shown
    if "chosen_position" in rows:
        side = rows["chosen_position"]
        at_a = side == "A"
        known = at_a | (side == "B")
    else:
        side = rows["rubric_fit_position"]
        at_a = ((rows["rubric_fit"] == "chosen") & (side == "A")) | (
            (rows["rubric_fit"] == "rejected") & (side == "B")
        )
        known = rows["rubric_fit"].isin(["chosen", "rejected"]) & side.isin(["A", "B"])
    shown[names.get_indexer(rows["annotator"]), units.get_indexer(rows["pair_id"])] = np.where(
        known.to_numpy(), at_a.to_numpy(dtype=float), np.nan
    )
    return shown
    if "chosen_position" in rows:
        at_a = rows["chosen_position"] == "A"
    else:
        side = rows["rubric_fit_position"]
        at_a = ((rows["rubric_fit"] == "chosen") & (side == "A")) | (
            (rows["rubric_fit"] == "rejected") & (side == "B")
        )
    shown[names.get_indexer(rows["annotator"]), units.get_indexer(rows["pair_id"])] = (
        at_a.to_numpy()
    )
    return shown


def _mark_outliers(table: list[dict[str, Any]], settings: QualitySettings) -> None:
    gold_mark = settings.min_gold_accuracy or GOLD_ACCURACY_MARK
    p_mark = settings.position_bias_max_p or POSITION_P_MARK
    position_holm = holm([row["position_p_value"] for row in table])
    for row, position_p_holm in zip(table, position_holm, strict=True):
        row["position_p_holm"] = position_p_holm
        marks = {
            "gold_accuracy": below(row["gold_accuracy"], gold_mark),
            "agreement": below(row["agreement_p_holm"], AGREEMENT_MARK_P),
            "position_bias": position_marked(
                row["position_test_p_adjusted"], position_p_holm, p_mark
            ),
            "fast": _above(row["fast_share"], FAST_SHARE_MARK),
        }
        marks["straight_lining"] = _above(
            row["straight_lining_share"], STRAIGHT_LINING_MARK
        ) and any(marks[name] for name in STRAIGHT_LINING_CORROBORATED_BY)
        row["outliers"] = [name for name, marked in marks.items() if marked]


def position_marked(
    test_adjusted: float | None, share_holm: float | None, share_mark: float
) -> bool:
    """The position mark: the test against the others' majority (:func:`position_tests`) at
    ``POSITION_TEST.level``, or the A-share test at ``share_mark`` (the campaign's threshold
    for leaving annotators out, so that whoever is left out for position is marked too)."""
    return below(test_adjusted, POSITION_TEST.level) or below(share_holm, share_mark)


def below(value: float | None, mark: float) -> bool:
    return value is not None and value < mark


def _above(value: float | None, mark: float) -> bool:
    return value is not None and value > mark


# --------------------------------------------------------------------------------------------
# Who leaves the audit


def biased_annotators(
    position_counts: Mapping[str, tuple[int, int]], max_p: float | None
) -> set[str]:
    """Annotators whose (A answers, B answers) give a Holm-adjusted binomial p-value below
    ``max_p``, the family being every annotator with an A or B answer: 30 honest annotators
    tested at 0.05 one by one would leave one out in about two campaigns of three
    (the exact test's size at 40 answers is 0.0385: 1 - 0.9615^30 = 0.69)."""
    if max_p is None:
        return set()
    names = list(position_counts)
    p_values = [a_share_test(*position_counts[name])[1] for name in names]
    return {
        name
        for name, adjusted in zip(names, holm(p_values), strict=True)
        if adjusted is not None and adjusted < max_p
    }


def left_out(
    *,
    manager_excluded: Collection[str],
    below_gold: Collection[str],
    biased: Collection[str],
) -> dict[str, str]:
    """annotator -> the most decisive reason they leave the audit (see ``LEFT_OUT_REASONS``)."""
    reasons: dict[str, str] = {}
    for reason, names in (
        (POSITION_BIAS, biased),
        (LOW_GOLD_ACCURACY, below_gold),
        (MANAGER_EXCLUDED, manager_excluded),
    ):
        reasons.update(dict.fromkeys(names, reason))
    return dict(sorted(reasons.items()))


def replacements_needed(
    dropped_per_item: Mapping[int, int], current: Mapping[int, int]
) -> dict[int, int]:
    """item -> new replacement count, for items whose dropped answers exceed their replacements.

    Here the count only rises; lowering it is ``replacements_after_lift``, which knows the
    slots already taken.
    """
    return {
        item_id: dropped
        for item_id, dropped in dropped_per_item.items()
        if dropped > current.get(item_id, 0)
    }


def replacements_after_lift(
    current: Mapping[int, int], still_needed: Mapping[int, int], taken: Mapping[int, int]
) -> dict[int, int]:
    """item -> lowered replacement count, for items asking more replacements than their
    answers still out of the audit need (``still_needed``).

    Never below ``taken``, the slots occupied beyond k (+ split-vote extras): lowering past
    them would leave an item with more occupied slots than its target. Filled replacements
    stay; a pair with one answer more than it needs is decided all the same.
    """
    lowered = {}
    for item_id, count in current.items():
        wanted = max(still_needed.get(item_id, 0), taken.get(item_id, 0), 0)
        if wanted < count:
            lowered[item_id] = wanted
    return lowered
