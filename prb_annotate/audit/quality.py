"""Annotator quality control: pure functions over the annotations frame (no ORM).

One row per annotator (``annotator_quality``) with what a manager checks before trusting their
answers, over their answers to regular items:

- **gold accuracy**: share of gold items answered as expected (``verdicts.gold_results``);
- **agreement with the others** (leave-one-out): share of their rubric-fit answers that match
  the unique majority of the *other* annotators of the pair (``agreement.leave_one_out_agreement``);
- **position bias**: share of "A" among their non-tie rubric-fit answers, with the two-sided
  exact binomial p-value against 0.5 (``scipy.stats.binomtest``);
- **speed**: median time per item, and the share of items answered faster than the campaign's
  floor (``fast_answer_seconds``);
- **straight-lining**: the share of annotations that give the same rating on every criterion
  of both answers.

An annotator is marked as an **outlier** on a measure when it crosses the fixed rule in
``OUTLIER_RULES``; agreement uses the modified z-score of Iglewicz & Hoaglin (1993), robust to the
outlier it looks for, since with a handful of annotators one bad one drags a mean and a standard
deviation with it.

Which annotators *leave the audit* (``left_out``) is a separate decision with three reasons: a
manager excluded them, their gold accuracy is below ``min_gold_accuracy``, or their A-share
p-value is below ``position_bias_max_p``. Both settings are optional; outliers alone leave
nobody out.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from prb_annotate.audit import agreement
from prb_annotate.audit.annotators import gold_results
from prb_annotate.audit.questions import NOMINAL_QUESTIONS, question_domain, ratings_matrix
from prb_annotate.audit.rule import counted_annotations

# Why annotations leave the audit, most decisive first.
MANAGER_EXCLUDED = "manager_excluded"
LOW_GOLD_ACCURACY = "low_gold_accuracy"
POSITION_BIAS = "position_bias"
LEFT_OUT_REASONS = {
    MANAGER_EXCLUDED: "excluded by a manager",
    LOW_GOLD_ACCURACY: "gold accuracy below the campaign's minimum",
    POSITION_BIAS: "share of A answers biased beyond the campaign's p-value threshold",
}

# Iglewicz & Hoaglin (1993): |modified z| > 3.5 flags a potential outlier.
MODIFIED_Z_LIMIT = 3.5
# Fixed marks on the other measures (the p-value mark when the campaign sets no threshold).
POSITION_P_MARK = 0.01
FAST_SHARE_MARK = 0.5
STRAIGHT_LINING_MARK = 0.5
GOLD_ACCURACY_MARK = 0.7
OUTLIER_RULES = {
    "gold_accuracy": f"gold accuracy below {GOLD_ACCURACY_MARK:.0%} (or the campaign's minimum)",
    "agreement": (
        f"agreement with the others far below the rest (modified z-score < -{MODIFIED_Z_LIMIT})"
    ),
    "position_bias": f"A-share p-value below {POSITION_P_MARK} (or the campaign's threshold)",
    "fast": f"more than {FAST_SHARE_MARK:.0%} of items answered faster than the floor",
    "straight_lining": f"more than {STRAIGHT_LINING_MARK:.0%} of annotations straight-lined",
}


def modified_z_scores(values: Iterable[float | None]) -> list[float | None]:
    """Iglewicz & Hoaglin's modified z-score, 0.6745 (x - median) / MAD, per value.

    None stays None. When the median absolute deviation is 0 (half the values or more are
    equal) the score is undefined: 0 for the values at the median, +-inf for the others.
    """
    values = list(values)
    numbers = [value for value in values if value is not None and math.isfinite(value)]
    if not numbers:
        return [None for _ in values]
    median = float(np.median(numbers))
    mad = float(np.median([abs(value - median) for value in numbers]))
    scores: list[float | None] = []
    for value in values:
        if value is None or not math.isfinite(value):
            scores.append(None)
        elif mad == 0:
            scores.append(0.0 if value == median else math.copysign(math.inf, value - median))
        else:
            scores.append(0.6745 * (value - median) / mad)
    return scores


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
    loo_share, loo_units = agreement.leave_one_out_agreement(matrix, question_domain(fit))
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
                "agreement": _finite(loo_share[index]),
                "agreement_units": int(loo_units[index]),
                "share_a": share_a,
                "position_p_value": p_value,
                "median_seconds": float(times.median()) / 1000 if len(times) else None,
                "fast_share": fast_share(times.tolist(), settings.fast_answer_seconds),
                "straight_lining_share": float(flat[own.index].mean()) if len(own) else None,
                "left_out": left_out.get(name),
            }
        )
    _mark_outliers(table, settings)
    return table


def _mark_outliers(table: list[dict[str, Any]], settings: QualitySettings) -> None:
    gold_mark = settings.min_gold_accuracy or GOLD_ACCURACY_MARK
    p_mark = settings.position_bias_max_p or POSITION_P_MARK
    z_scores = modified_z_scores([row["agreement"] for row in table])
    for row, z in zip(table, z_scores, strict=True):
        row["agreement_z"] = z
        marks = {
            "gold_accuracy": _below(row["gold_accuracy"], gold_mark),
            "agreement": z is not None and z < -MODIFIED_Z_LIMIT,
            "position_bias": _below(row["position_p_value"], p_mark),
            "fast": _above(row["fast_share"], FAST_SHARE_MARK),
            "straight_lining": _above(row["straight_lining_share"], STRAIGHT_LINING_MARK),
        }
        row["outliers"] = [name for name, marked in marks.items() if marked]


def _below(value: float | None, mark: float) -> bool:
    return value is not None and value < mark


def _above(value: float | None, mark: float) -> bool:
    return value is not None and value > mark


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


# --------------------------------------------------------------------------------------------
# Who leaves the audit


def biased_annotators(
    position_counts: Mapping[str, tuple[int, int]], max_p: float | None
) -> set[str]:
    """Annotators whose (A answers, B answers) give a binomial p-value below ``max_p``."""
    if max_p is None:
        return set()
    biased = set()
    for name, (a_answers, b_answers) in position_counts.items():
        _, p_value = a_share_test(a_answers, b_answers)
        if p_value is not None and p_value < max_p:
            biased.add(name)
    return biased


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
