"""One pair's verdict explained condition by condition, as the pair page shows it.

The same vote and quality functions ``rule.pair_verdicts`` applies to every pair at once are
applied here to one pair, so the explanation can never disagree with the verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from prb_annotate.audit.rule import (
    DIFFERENTIATOR_BOTH,
    DIFFERENTIATOR_NOT_PREFERENCE,
    FAIL,
    FLAGGED,
    LABEL_DISAGREES,
    LABEL_TIE,
    LOW_QUALITY_CHOSEN,
    LOW_QUALITY_REJECTED,
    MISSING_RATING,
    PASS,
    PENDING,
    SIDES,
    SPLIT,
    TOO_FEW_ANNOTATIONS,
    UNDECIDED_SPLIT_VOTE,
    UNKNOWN,
    VALIDATED,
    PairVerdict,
    Thresholds,
    label_vote,
    median_or_none,
    quality_checks,
    quality_column,
    votes,
)

OUTCOME_WORDS = {
    PASS: "passes",
    FAIL: "fails",
    SPLIT: "split",
    PENDING: "waiting",
    UNKNOWN: "no rating",
}


@dataclass(frozen=True)
class Check:
    """One condition of the rule for one pair, as the pair page explains it.

    ``reasons`` are the codes this check gives the pair when it does not pass; ``decisive``
    says whether it made the annotators' verdict (every check does for a validated pair, the
    failing or undecided ones otherwise); ``voters`` are the annotators whose answers decided
    it (the winning side of a vote, the ratings below the threshold of a failing median).
    """

    name: str
    label: str
    outcome: str
    detail: str
    reasons: tuple[str, ...]
    decisive: bool
    voters: tuple[str, ...]


# (name, label, column, the answer on the pair's side, what the count says)
_VOTES = (
    ("flag", "Usable (not flagged)", "flagged", False, "did not flag it"),
    (
        "differentiator",
        "The difference is personal preference",
        "differentiator",
        "preference",
        "name personal preference",
    ),
    ("rubric_fit", "The chosen answer fits the user better", "rubric_fit", "chosen", "prefer it"),
)
# Makes a Check from (name, label, outcome, detail, reason codes, voters).
CheckMaker = Callable[[str, str, int, str, tuple[str, ...], Sequence[str]], Check]
_VOTE_REASONS = {
    "flag": (FLAGGED,),
    "differentiator": (DIFFERENTIATOR_NOT_PREFERENCE, DIFFERENTIATOR_BOTH),
    "rubric_fit": (LABEL_DISAGREES, LABEL_TIE),
}


def explain_pair(
    rows: pd.DataFrame, required: int, thresholds: Thresholds, verdict: PairVerdict
) -> list[Check]:
    """Each condition of the rule for one pair, with the same functions ``pair_verdicts``
    applies to every pair at once. ``rows`` are the pair's counted annotations."""
    present = len(rows)
    missing = max(required - present, 0)
    annotators_verdict, annotators_reasons = verdict.by_annotators()

    def check(
        name: str,
        label: str,
        outcome: int,
        detail: str,
        codes: tuple[str, ...],
        voters: Sequence[str],
    ) -> Check:
        given = {
            FAIL: tuple(code for code in codes if code in annotators_reasons) or codes[:1],
            SPLIT: (UNDECIDED_SPLIT_VOTE,),
            PENDING: (TOO_FEW_ANNOTATIONS,),
            UNKNOWN: (MISSING_RATING,),
        }.get(outcome, ())
        decisive = annotators_verdict == VALIDATED or bool(set(given) & set(annotators_reasons))
        return Check(name, label, OUTCOME_WORDS[outcome], detail, given, decisive, tuple(voters))

    waiting = (
        f"; {missing} more annotation{'s' if missing != 1 else ''} required" if missing else ""
    )
    checks = [
        check(
            "annotations",
            "Enough annotations",
            PENDING if missing else PASS,
            f"{present} of {required} required",
            (TOO_FEW_ANNOTATIONS,),
            (),
        )
    ]
    threshold = thresholds.majority_threshold
    names = rows["annotator"].astype(str).to_numpy()
    for name, label, column, wanted, phrase in _VOTES:
        on_side = (rows[column] == wanted).to_numpy(dtype=bool)
        for_count = int(on_side.sum())
        outcome = _vote_outcome(rows, name, for_count, present, required, threshold)
        voters = names[on_side] if outcome == PASS else names[~on_side] if outcome == FAIL else []
        detail = f"{for_count} of {present} {phrase}; a majority is a share above {threshold:g}"
        checks.append(check(name, label, outcome, detail + waiting, _VOTE_REASONS[name], voters))
    for side in SIDES:
        for criterion in thresholds.quality_criteria:
            checks.append(
                _quality_check(rows, side, criterion, missing, required, thresholds, check)
            )
    return checks


def _vote_outcome(
    rows: pd.DataFrame, name: str, for_count: int, present: int, required: int, threshold: float
) -> int:
    """One pair's vote, by the function the rule applies (rubric fit has its own)."""
    counts = np.array([for_count]), np.array([present]), np.array([required])
    if name == "rubric_fit":
        tie = np.array([int((rows["rubric_fit"] == "tie").sum())])
        return int(label_vote(counts[0], tie, counts[1], counts[2], threshold)[0])
    return int(votes(counts[0], counts[1] - counts[0], counts[1], counts[2], threshold)[0])


def _quality_check(
    rows: pd.DataFrame,
    side: str,
    criterion: str,
    missing: int,
    required: int,
    thresholds: Thresholds,
    check: CheckMaker,
) -> Check:
    column = quality_column(side, criterion)
    values = pd.to_numeric(rows[column], errors="coerce") if column in rows else pd.Series([])
    ratings = values.to_numpy(dtype=np.float64)
    median = median_or_none(ratings)
    rated = int((~np.isnan(ratings)).sum())
    short = max(required - rated, 0)
    padded = np.concatenate(
        [ratings[~np.isnan(ratings)], np.full(short, thresholds.rating_scale_max)]
    )
    best = median_or_none(padded) if short else None
    outcome = int(
        quality_checks(
            np.array([[np.nan if median is None else median]]),
            np.array([[np.nan if best is None else best]]),
            np.array([missing]),
            np.array([[short]]),
            thresholds.quality_threshold,
        )[0, 0]
    )
    detail = _median_words(median, rated, required, thresholds.quality_threshold)
    low = (
        rows["annotator"]
        .astype(str)
        .to_numpy()[np.nan_to_num(ratings, nan=np.inf) < thresholds.quality_threshold]
    )
    reason = LOW_QUALITY_CHOSEN if side == SIDES[0] else LOW_QUALITY_REJECTED
    label = f"{side.capitalize()} answer: {criterion}"
    return check(column, label, outcome, detail, (reason,), low if outcome == FAIL else [])


def _median_words(median: float | None, rated: int, required: int, threshold: float) -> str:
    """ "median of 3 ratings: 5 (needs 4)", and how many ratings are still to come."""
    plural = "s" if rated != 1 else ""
    shown = "none" if median is None else f"{median:g}"
    words = f"median of {rated} rating{plural}: {shown} (needs {threshold:g})"
    if rated < required:
        words += f"; {required} ratings required"
    return words
