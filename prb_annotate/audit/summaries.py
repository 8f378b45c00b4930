"""Dataset-level summaries over the verdicts and the counted annotations.

The validated share overall and per category (Wilson intervals), the failure reasons, how
often annotators side with the dataset's label, position and length bias, and answers that
contradict each other within one annotation. Pure functions over the verdicts of
``rule.pair_verdicts`` and the frames of ``frames``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from prb_annotate.audit import agreement
from prb_annotate.audit.phrases import Phrase
from prb_annotate.audit.rule import (
    EXCLUDED,
    EXCLUDING_REASONS,
    REASON_LABELS,
    REASON_WORDS,
    REASONS,
    VALIDATED,
    VERDICTS,
    PairVerdict,
    median_or_none,
    quality_column,
    regular_items,
)
from prb_annotate.audit.words import gettext_noop

# Consistency between questions within one annotation.
LOW_RATING = 2
LOW_QUALITY_CHECK = Phrase(
    gettext_noop(
        "names personal preference as the difference but rates an answer "
        "%(rating)s or lower on a criterion"
    )
)
# Marked for translation, kept English in the report (``phrases.py``).
CONSISTENCY_CHECKS = {
    "preference_but_low_quality": LOW_QUALITY_CHECK(rating=LOW_RATING),
    "quality_but_equal_ratings": gettext_noop(
        "names general quality as the difference but rates both answers the same everywhere"
    ),
    "no_difference_but_prefers_one": gettext_noop(
        "sees no real difference but says one answer fits the user better"
    ),
    "tie_but_preference": gettext_noop(
        "names personal preference as the difference but calls the rubric fit a tie"
    ),
}


# The plain Wilson score interval (no continuity correction): ``agreement.wilson_interval``.
WILSON = "wilson"


def share_with_interval(successes: int, total: int, confidence: float = 0.95) -> dict[str, Any]:
    low, high = agreement.wilson_interval(successes, total, confidence)
    return {
        "count": int(successes),
        "total": int(total),
        "share": successes / total if total else None,
        "ci_low": low if total else None,
        "ci_high": high if total else None,
        # How the interval was computed, for whoever words it (paper/method_words.py).
        "method": WILSON,
    }


def validity_summary(
    verdicts: Mapping[int, PairVerdict], confidence: float = 0.95
) -> dict[str, Any]:
    """Validated share overall and per category (Wilson intervals) and the reasons.

    The share is over *decided* pairs (validated + excluded): undecided pairs are still being
    annotated and would only dilute the estimate. Counts of all three verdicts come alongside.
    """

    def summarise(group: Sequence[PairVerdict]) -> dict[str, Any]:
        counts = dict.fromkeys(VERDICTS, 0)
        for pair in group:
            counts[pair.verdict] += 1
        decided = counts[VALIDATED] + counts[EXCLUDED]
        return {
            "pairs": len(group),
            **counts,
            "validated_share": share_with_interval(counts[VALIDATED], decided, confidence),
        }

    pairs = list(verdicts.values())
    categories = sorted({pair.category for pair in pairs})
    excluded = [pair for pair in pairs if pair.verdict == EXCLUDED]
    reasons = []
    for reason in REASONS:
        count = sum(reason in pair.reasons for pair in pairs)
        reasons.append(
            {
                "reason": reason,
                "label": REASON_LABELS[reason],
                "words": REASON_WORDS[reason],
                "pairs": count,
                "share_of_excluded": (
                    count / len(excluded) if excluded and reason in EXCLUDING_REASONS else None
                ),
            }
        )
    return {
        "overall": summarise(pairs),
        "per_category": [
            {"category": category, **summarise([p for p in pairs if p.category == category])}
            for category in categories
        ],
        "reasons": reasons,
    }


def majority_chosen(pairs: Iterable[PairVerdict], confidence: float = 0.95) -> dict[str, Any]:
    """The pairs whose rubric-fit majority (the rule's: a share of the answers above the
    campaign's ``majority_threshold``) is the dataset's chosen answer, over the pairs that
    have such a majority; ``without_majority``: the pairs left out (a split vote, no answer).
    The one definition of "a majority prefers the chosen answer", for the page and the paper.
    """
    majorities = [pair.majority.get("rubric_fit") for pair in pairs]
    with_majority = [label for label in majorities if label is not None]
    return {
        **share_with_interval(
            sum(label == "chosen" for label in with_majority), len(with_majority), confidence
        ),
        "without_majority": len(majorities) - len(with_majority),
    }


def label_agreement(
    verdicts: Mapping[int, PairVerdict], counted: pd.DataFrame, confidence: float = 0.95
) -> dict[str, Any]:
    """How often annotators side with the dataset's label (chosen over rejected): the pairs
    whose majority prefers it (:func:`majority_chosen`) overall and per category, and the
    answers that do."""
    by_category: dict[str, list[PairVerdict]] = {}
    for pair in verdicts.values():
        by_category.setdefault(pair.category, []).append(pair)
    overall = majority_chosen(verdicts.values(), confidence)
    answers = counted["rubric_fit"]
    return {
        "pairs_majority_chosen": overall,
        "pairs_without_majority": overall["without_majority"],
        "per_category": [
            {"category": category, **majority_chosen(by_category[category], confidence)}
            for category in sorted(by_category)
        ],
        "answers_chosen": share_with_interval(
            int((answers == "chosen").sum()), len(answers), confidence
        ),
        "answers_tie": share_with_interval(int((answers == "tie").sum()), len(answers), confidence),
    }


def position_bias(rows: pd.DataFrame, confidence: float = 0.95) -> dict[str, Any]:
    """Share of "A" among the non-tie rubric-fit answers, with a two-sided binomial p-value."""
    positions = rows["rubric_fit_position"]
    # An imported answer whose side is unknown has no position: neither A nor B.
    decided = positions[positions.isin(["A", "B"])]
    a_answers = int((decided == "A").sum())
    return {
        "share_a": share_with_interval(a_answers, len(decided), confidence),
        "p_value": agreement.binomial_p_value(a_answers, len(decided)),
    }


def length_bias(
    items: pd.DataFrame, counted: pd.DataFrame, confidence: float = 0.95
) -> dict[str, Any]:
    """Is the chosen answer systematically longer, and do annotators pick the longer one?

    Lengths are in characters. Pairs of equal length are left out of the shares.
    """
    regular = regular_items(items)
    chosen_len = regular["chosen_len"].astype(float)
    rejected_len = regular["rejected_len"].astype(float)
    unequal = chosen_len != rejected_len
    longer = int((chosen_len > rejected_len)[unequal].sum())

    answers = counted[(counted["rubric_fit"] != "tie")]
    answer_chosen_longer = answers["chosen_len"].astype(float) > answers["rejected_len"].astype(
        float
    )
    answer_unequal = answers["chosen_len"].astype(float) != answers["rejected_len"].astype(float)
    picked_chosen = answers["rubric_fit"] == "chosen"
    picked_longer = (picked_chosen == answer_chosen_longer)[answer_unequal]
    when_longer = picked_chosen[answer_unequal & answer_chosen_longer]
    when_shorter = picked_chosen[answer_unequal & ~answer_chosen_longer]
    return {
        "unit": gettext_noop("characters"),
        "pairs_chosen_longer": share_with_interval(longer, int(unequal.sum()), confidence),
        "pairs_chosen_longer_p_value": agreement.binomial_p_value(longer, int(unequal.sum())),
        "pairs_equal_length": int((~unequal).sum()),
        "median_length_ratio": median_or_none(
            (chosen_len / rejected_len.where(rejected_len > 0)).to_numpy(dtype=np.float64)
        ),
        "answers_pick_longer": share_with_interval(
            int(picked_longer.sum()), len(picked_longer), confidence
        ),
        "answers_pick_longer_p_value": agreement.binomial_p_value(
            int(picked_longer.sum()), len(picked_longer)
        ),
        # If annotators followed length rather than the rubric, these two would differ a lot.
        "pick_chosen_when_chosen_longer": share_with_interval(
            int(when_longer.sum()), len(when_longer), confidence
        ),
        "pick_chosen_when_chosen_shorter": share_with_interval(
            int(when_shorter.sum()), len(when_shorter), confidence
        ),
    }


def consistency_flags(frame: pd.DataFrame, criteria: Sequence[str]) -> pd.DataFrame:
    """Annotations whose answers contradict each other (codes in :data:`CONSISTENCY_CHECKS`)."""
    chosen = frame[[quality_column("chosen", c) for c in criteria]].to_numpy(dtype=np.float64)
    rejected = frame[[quality_column("rejected", c) for c in criteria]].to_numpy(dtype=np.float64)
    ratings = np.concatenate([chosen, rejected], axis=1)
    with np.errstate(invalid="ignore"):
        any_low = (np.nan_to_num(ratings, nan=np.inf) <= LOW_RATING).any(axis=1)
        rated = ~np.isnan(ratings).any(axis=1)
        all_equal = rated & (chosen == rejected).all(axis=1)
    differentiator = frame["differentiator"].to_numpy()
    fit = frame["rubric_fit"].to_numpy()
    checks = {
        "preference_but_low_quality": (differentiator == "preference") & any_low,
        "quality_but_equal_ratings": (differentiator == "quality") & all_equal,
        "no_difference_but_prefers_one": (differentiator == "none") & (fit != "tie"),
        "tie_but_preference": (differentiator == "preference") & (fit == "tie"),
    }
    parts = []
    for code, mask in checks.items():
        hits = frame.loc[mask, ["annotation_id", "pair_id", "external_id", "annotator"]].copy()
        hits["code"] = code
        parts.append(hits)
    flags = pd.concat(parts, ignore_index=True)
    return flags.sort_values(["pair_id", "annotator", "code"], kind="stable").reset_index(drop=True)


def verdict_counts(
    verdicts: Iterable[PairVerdict], *, by_annotators: bool = False
) -> dict[str, int]:
    """Pairs per verdict: the final ones, or the annotators' (adjudications set aside)."""
    counts = dict.fromkeys(VERDICTS, 0)
    for verdict in verdicts:
        counts[verdict.by_annotators()[0] if by_annotators else verdict.verdict] += 1
    return counts
