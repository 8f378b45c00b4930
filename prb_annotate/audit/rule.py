"""Dataset-validity audit: a verdict for every pair and dataset-level summaries.

Pure pandas over a frame of annotations (one row per current annotation, in dataset
orientation; see :data:`FRAME_COLUMNS`) and a frame of campaign items (:data:`ITEM_COLUMNS`).
No ORM here: ``prb_annotate.audit.frames`` builds both frames from the database. What
the audit computes from the verdicts lives beside this module: ``summaries`` (dataset
shares and biases), ``questions`` (agreement per question), ``annotators`` (the annotator
table), ``explain`` (one pair's conditions) and ``assembly`` (the whole report).

The validation rule (ARCHITECTURE.md, "The verdict rule"; the audit page shows it in these
words, and ``RULE`` below is its short form). A regular pair is **validated** when

1. it has at least ``required`` counted annotations (k = annotations per pair, plus the extra
   annotators a split vote asked for);
2. both answers reach the quality threshold: the median rating is >= ``quality_threshold`` on
   every criterion, for the chosen and for the rejected answer;
3. a majority names personal preference as what mainly distinguishes the answers;
4. a majority prefers the dataset's chosen answer (rubric fit "chosen");
5. a majority did not flag it as unusable.

Tie rules, applied the same way to every vote:

- A *majority* is a share strictly greater than ``majority_threshold`` (default 0.5, never
  below: with 0.3, two "chosen" against three "rejected" would pass, so the campaign refuses
  values under 0.5).
- Each vote has two sides: "preference" against any other differentiator, "chosen" against
  "rejected" or "tie", "not flagged" against "flagged". When neither side's share exceeds the
  threshold (an even split such as 2-2 with four annotators) the pair is **undecided** with
  ``undecided_split_vote``; it can ask for one more annotator.
- A majority against the chosen answer is ``label_tie`` when a majority calls the answers a
  tie, and ``label_disagrees`` otherwise (a majority for the rejected answer, or "rejected"
  and "tie" answers that only together outnumber "chosen"). But when neither "rejected" nor
  "tie" has more votes than "chosen" (1-1-1 with three annotators) no answer is ahead, so the
  vote is split: undecided, one more annotator asked for, as after a 1-1 split.
- A majority against "preference" is ``differentiator_both`` when a majority names "both"
  (quality and preference: the pair does not isolate preference), and
  ``differentiator_not_preference`` otherwise.
- The median of an even number of ratings is the mean of the two middle ones, so 3 and 5 give
  4, which reaches a threshold of 4. Annotations without a rating for a criterion are left
  out of that criterion's median, but a median over fewer ratings than the pair requires is
  not a pass: the pair is **undecided** with ``missing_rating`` (answers from older question
  sets or the API), unless even top ratings in the missing places could not reach the
  threshold (then it is excluded).
- With fewer annotations than required the pair is **undecided** (``too_few_annotations``),
  unless a failure is already certain whatever the missing annotations say (say two of three
  annotators already flagged it, or the median cannot reach the threshold even if every
  missing rating were the top of the scale); then it is **excluded** at once.
- A pair that fails any condition is **excluded** with every failing reason; the undecided
  reasons are then left out (the pair is out whichever way the split would go).

A manager's adjudication (``Adjudicated``) replaces the annotators' verdict of its pair
(``apply_adjudications``): the pair reads "adjudicated", keeps the annotators' verdict beside
it, and its reason is the manager's. Agreement statistics never see adjudications: they are
computed from the annotators' answers alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from prb_annotate.audit.words import gettext_noop

# The answer domains, as stored by prb_annotate.models.Annotation (a test keeps them in sync).
RUBRIC_FIT = ("chosen", "rejected", "tie")
DIFFERENTIATOR = ("preference", "quality", "both", "none")
DEFAULT_CRITERIA = ("correctness", "relevance", "helpfulness")
SIDES = ("chosen", "rejected")

# A verdict's code is also its English word, marked so that the pages can translate it.
VALIDATED = gettext_noop("validated")
EXCLUDED = gettext_noop("excluded")
UNDECIDED = gettext_noop("undecided")
VERDICTS = (VALIDATED, EXCLUDED, UNDECIDED)

FLAGGED = "flagged"
LOW_QUALITY_CHOSEN = "low_quality_chosen"
LOW_QUALITY_REJECTED = "low_quality_rejected"
DIFFERENTIATOR_NOT_PREFERENCE = "differentiator_not_preference"
DIFFERENTIATOR_BOTH = "differentiator_both"
LABEL_DISAGREES = "label_disagrees"
LABEL_TIE = "label_tie"
UNDECIDED_SPLIT_VOTE = "undecided_split_vote"
TOO_FEW_ANNOTATIONS = "too_few_annotations"
MISSING_RATING = "missing_rating"
EXCLUDING_REASONS = (
    FLAGGED,
    LOW_QUALITY_CHOSEN,
    LOW_QUALITY_REJECTED,
    DIFFERENTIATOR_NOT_PREFERENCE,
    DIFFERENTIATOR_BOTH,
    LABEL_DISAGREES,
    LABEL_TIE,
)
UNDECIDED_REASONS = (UNDECIDED_SPLIT_VOTE, TOO_FEW_ANNOTATIONS, MISSING_RATING)
REASONS = EXCLUDING_REASONS + UNDECIDED_REASONS
# Reasons' words are marked for translation and stay English in the report (``phrases.py``).
REASON_LABELS = {
    FLAGGED: gettext_noop("flagged as unusable by a majority"),
    LOW_QUALITY_CHOSEN: gettext_noop("chosen answer below the quality threshold"),
    LOW_QUALITY_REJECTED: gettext_noop("rejected answer below the quality threshold"),
    DIFFERENTIATOR_NOT_PREFERENCE: gettext_noop(
        "majority says the difference is not personal preference"
    ),
    DIFFERENTIATOR_BOTH: gettext_noop(
        "majority says the answers differ in quality as well as preference"
    ),
    LABEL_DISAGREES: gettext_noop("majority does not prefer the dataset's chosen answer"),
    LABEL_TIE: gettext_noop("majority calls the two answers a tie for this user"),
    UNDECIDED_SPLIT_VOTE: gettext_noop("split vote: one more annotator needed"),
    TOO_FEW_ANNOTATIONS: gettext_noop("fewer annotations than required"),
    MISSING_RATING: gettext_noop(
        "fewer quality ratings than the pair requires, so a median is not settled"
    ),
}
# Each reason in a few words, for table cells, charts and menus (the code stays in JSON and in
# the pages' tooltips; REASON_LABELS is the sentence that explains it).
REASON_WORDS = {
    FLAGGED: gettext_noop("flagged unusable"),
    LOW_QUALITY_CHOSEN: gettext_noop("chosen answer below quality"),
    LOW_QUALITY_REJECTED: gettext_noop("rejected answer below quality"),
    DIFFERENTIATOR_NOT_PREFERENCE: gettext_noop("difference not preference"),
    DIFFERENTIATOR_BOTH: gettext_noop("differs in quality too"),
    LABEL_DISAGREES: gettext_noop("chosen answer not preferred"),
    LABEL_TIE: gettext_noop("called a tie"),
    UNDECIDED_SPLIT_VOTE: gettext_noop("split vote"),
    TOO_FEW_ANNOTATIONS: gettext_noop("annotations missing"),
    MISSING_RATING: gettext_noop("ratings missing"),
}
# The rule in one sentence, for pages, manifests and dataset cards.
RULE = (
    "validated: the required annotations (k, plus any extra a split vote asked for), both "
    "answers with a median rating at or above the quality threshold on every criterion, and "
    "a majority (share above majority_threshold, never below 0.5) naming personal preference "
    "as the difference, preferring the dataset's chosen answer and not flagging the pair; "
    "excluded: any of these failed; undecided: annotations or ratings missing, or a split vote"
)

# The same rule step by step, as the pair page shows it.
RULE_STEPS = [
    "It has the annotations it requires: k, plus one for each time a split vote asked for "
    "another annotator.",
    "Both answers reach the quality threshold: the median rating of each criterion, for the "
    "chosen and for the rejected answer, over as many ratings as the pair requires (with fewer, "
    "the pair waits, “ratings missing”, unless even top ratings could not reach the threshold).",
    "A majority (a share strictly above the majority threshold, never below 0.5) names personal "
    "preference as the main difference; a majority naming both quality and preference "
    "excludes it as “differs in quality too”.",
    "A majority prefers the dataset's chosen answer; a majority against it is “called a tie” "
    "when most call it a tie, “chosen answer not preferred” otherwise. When no answer has more "
    "votes than the chosen one (1-1-1: chosen, rejected, tie) the vote is split.",
    "A majority did not flag it as unusable.",
]

# A manager's adjudication: the decisions that replace a verdict, and its reason codes.
ADJUDICATED_DECISIONS = (VALIDATED, EXCLUDED)
ADJUDICATOR_JUDGEMENT = "adjudicator_judgement"
ADJUDICATION_REASONS = (ADJUDICATOR_JUDGEMENT, *REASONS)
ADJUDICATION_REASON_LABELS = {
    ADJUDICATOR_JUDGEMENT: gettext_noop("the manager's own reading of the pair"),
    **REASON_LABELS,
}
ADJUDICATION_REASON_WORDS = {
    ADJUDICATOR_JUDGEMENT: gettext_noop("manager's judgement"),
    **REASON_WORDS,
}


def reason_words(code: str) -> str:
    """A verdict or adjudication reason code in a few words (an unknown code as itself)."""
    return ADJUDICATION_REASON_WORDS.get(code, code)


# An answer's own columns in the annotations frame, which the export's annotation rows keep
# under the same names (``exports/slices.py``).
ANSWER_COLUMNS = (
    "rubric_fit",
    "rubric_fit_position",
    "differentiator",
    "confidence",
    "flagged",
    "comment",
    "time_on_task_ms",
    "submitted_at",
)
# Columns of the annotations frame (``quality_<side>_<criterion>`` columns come on top).
# chosen_len / rejected_len are lengths in characters (Python ``len`` / SQL LENGTH).
FRAME_COLUMNS = (
    "annotation_id",
    "assignment_id",
    "item_id",
    "pair_id",
    "external_id",
    "category",
    "item_kind",
    "annotator",
    "annotator_id",
    "chosen_position",
    *ANSWER_COLUMNS,
    "chosen_len",
    "rejected_len",
)
ITEM_COLUMNS = (
    "item_id",
    "pair_id",
    "external_id",
    "category",
    "item_kind",
    "required",
    "gold_answers",
    "chosen_len",
    "rejected_len",
)


def natural_key(external_id: str) -> tuple[tuple[int, int | str], ...]:
    """A record id's sort key with its runs of digits compared as numbers: x-2 before x-10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part)
        for part in re.split(r"(\d+)", external_id)
        if part
    )


def quality_column(side: str, criterion: str) -> str:
    return f"quality_{side}_{criterion}"


@dataclass(frozen=True)
class Thresholds:
    """The campaign's validation settings."""

    annotations_per_pair: int = 3
    quality_threshold: float = 4.0
    majority_threshold: float = 0.5
    quality_criteria: tuple[str, ...] = DEFAULT_CRITERIA
    rating_scale_max: int = 5
    min_gold_accuracy: float | None = None

    def rating_domain(self) -> list[int]:
        return list(range(1, self.rating_scale_max + 1))


@dataclass(frozen=True, slots=True)
class PairVerdict:
    """A pair's verdict. Its dicts are read-only: pairs with equal values share them."""

    pair_id: int
    external_id: str
    category: str
    verdict: str
    reasons: tuple[str, ...]
    n_annotations: int
    # {"rubric_fit": label or None, "differentiator": label or None}
    majority: dict[str, str | None] = field(default_factory=dict)
    # {"chosen": {criterion: median or None}, "rejected": {...}}
    quality_medians: dict[str, dict[str, float | None]] = field(default_factory=dict)
    # Set when a manager's adjudication gave ``verdict``: the annotators' verdict and reasons.
    adjudication: Adjudicated | None = None
    annotators_verdict: str | None = None
    annotators_reasons: tuple[str, ...] = ()

    @property
    def adjudicated(self) -> bool:
        return self.adjudication is not None

    def by_annotators(self) -> tuple[str, tuple[str, ...]]:
        """The verdict and reasons the annotators' answers give, adjudicated or not."""
        if self.annotators_verdict is None:
            return self.verdict, self.reasons
        return self.annotators_verdict, self.annotators_reasons


@dataclass(frozen=True)
class Adjudicated:
    """A manager's current decision on a pair (validated or excluded), as the rule reads it."""

    decision: str
    reason: str
    note: str = ""
    decided_by: str = ""
    decided_at: str = ""


def apply_adjudications(
    verdicts: Mapping[int, PairVerdict], adjudications: Mapping[int, Adjudicated]
) -> dict[int, PairVerdict]:
    """The verdicts with each adjudicated pair's decision in place of the annotators' verdict.

    The annotators' verdict and reasons stay on the pair; its reasons become the manager's.
    """
    result = dict(verdicts)
    for pair_id, decided in adjudications.items():
        verdict = result.get(pair_id)
        if verdict is None:
            continue
        result[pair_id] = replace(
            verdict,
            verdict=decided.decision,
            reasons=(decided.reason,),
            adjudication=decided,
            annotators_verdict=verdict.verdict,
            annotators_reasons=verdict.reasons,
        )
    return result


# --------------------------------------------------------------------------------------------
# Frames


def items_from_frame(frame: pd.DataFrame, thresholds: Thresholds) -> pd.DataFrame:
    """Items as seen in the annotations (when the caller has no item table): k each."""
    columns = ["item_id", "pair_id", "external_id", "category", "item_kind"]
    items = frame[columns].drop_duplicates("pair_id").copy()
    items["required"] = thresholds.annotations_per_pair
    items["gold_answers"] = None
    for column in ("chosen_len", "rejected_len"):
        items[column] = frame.groupby("pair_id")[column].first().reindex(items["pair_id"]).values
    return items.reset_index(drop=True)


def regular_items(items: pd.DataFrame) -> pd.DataFrame:
    return items[items["item_kind"] != "gold"]


def counted_annotations(
    frame: pd.DataFrame, items: pd.DataFrame, excluded_annotators: Collection[str] = ()
) -> pd.DataFrame:
    """The annotations verdicts rest on: regular items, annotators not excluded."""
    regular_pairs = regular_items(items)["pair_id"]
    keep = frame["pair_id"].isin(regular_pairs) & ~frame["annotator"].isin(
        list(excluded_annotators)
    )
    return frame[keep]


# --------------------------------------------------------------------------------------------
# Verdicts


# Outcomes of a vote or a quality check, as small integers so that every pair is decided at once.
PASS, FAIL, SPLIT, PENDING, UNKNOWN = range(5)


def votes(
    for_count: np.ndarray,
    against_count: np.ndarray,
    present: np.ndarray,
    required: np.ndarray,
    threshold: float,
) -> np.ndarray:
    """Two-sided votes, one per pair: PASS, FAIL, SPLIT, or PENDING (annotations missing)."""
    complete = (present >= required) & (present > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        for_share = for_count / present
        against_share = against_count / present
        # Missing annotations could all vote "for": a failure already beyond their reach is
        # final.
        against_required = against_count / required
    return np.select(
        [
            complete & (for_share > threshold),
            complete & (against_share > threshold),
            complete,
            (required > 0) & (against_required > threshold),
        ],
        [PASS, FAIL, SPLIT, FAIL],
        PENDING,
    )


def quality_checks(
    medians: np.ndarray,
    best_case_medians: np.ndarray,
    missing_annotations: np.ndarray,
    missing_ratings: np.ndarray,
    threshold: float,
) -> np.ndarray:
    """Median ratings against the threshold, pairs x criteria: PASS, FAIL, PENDING, UNKNOWN.

    ``missing_annotations`` is per pair, ``missing_ratings`` per pair and criterion (how many
    ratings short of the pair's required count, missing annotations included). A median over
    too few ratings fails only if its best case (every missing rating the top of the scale) is
    below the threshold; otherwise it is pending (annotations missing) or unknown (annotations
    given without that rating), never a pass.
    """
    waiting = (missing_annotations > 0)[:, None]
    short = missing_ratings > 0
    cannot_reach = (waiting | short) & (best_case_medians < threshold)
    return np.select(
        [cannot_reach, waiting, short | np.isnan(medians), medians >= threshold],
        [FAIL, PENDING, UNKNOWN, PASS],
        FAIL,
    )


def label_vote(
    chosen: np.ndarray,
    tie: np.ndarray,
    present: np.ndarray,
    required: np.ndarray,
    threshold: float,
) -> np.ndarray:
    """The rubric-fit vote, "chosen" against the rest, except that a majority against it is no
    failure while neither "rejected" nor "tie" is ahead of "chosen", counting every missing
    annotation for "chosen" (1-1-1: split, not a rejection)."""
    vote = votes(chosen, present - chosen, present, required, threshold)
    rejected = present - chosen - tie
    missing = np.maximum(required - present, 0)
    contested = (vote == FAIL) & (chosen + missing >= np.maximum(rejected, tie))
    complete = (present >= required) & (present > 0)
    return np.where(contested, np.where(complete, SPLIT, PENDING), vote)


def _named_majority(
    count: np.ndarray, present: np.ndarray, required: np.ndarray, threshold: float
) -> np.ndarray:
    """Whether ``count`` is a majority of the annotations given, or of those required while
    some are missing."""
    with np.errstate(divide="ignore", invalid="ignore"):
        share = count / np.maximum(present, required)
    return share > threshold


def differentiator_failures(
    differentiator_vote: np.ndarray,
    both: np.ndarray,
    present: np.ndarray,
    required: np.ndarray,
    threshold: float,
) -> dict[str, np.ndarray]:
    """A failed differentiator vote, told apart: ``differentiator_both`` where a majority
    names "both", else ``differentiator_not_preference``."""
    failed = differentiator_vote == FAIL
    both_majority = failed & _named_majority(both, present, required, threshold)
    return {
        DIFFERENTIATOR_NOT_PREFERENCE: failed & ~both_majority,
        DIFFERENTIATOR_BOTH: both_majority,
    }


def label_failures(
    label_vote: np.ndarray,
    tie: np.ndarray,
    present: np.ndarray,
    required: np.ndarray,
    threshold: float,
) -> dict[str, np.ndarray]:
    """A failed label vote, told apart: ``label_tie`` where a majority (of the annotations
    given, or of those required while some are missing) calls it a tie, else
    ``label_disagrees``."""
    tie_majority = (label_vote == FAIL) & _named_majority(tie, present, required, threshold)
    return {LABEL_DISAGREES: (label_vote == FAIL) & ~tie_majority, LABEL_TIE: tie_majority}


def _majorities(counted: pd.DataFrame, column: str, threshold: float) -> pd.Series:
    """Per pair: the answer whose share is above the threshold, or None."""
    if counted.empty:
        return pd.Series(dtype=object)
    table = counted.groupby(["pair_id", column]).size().unstack(fill_value=0)
    share = table.max(axis=1) / table.sum(axis=1)
    return table.idxmax(axis=1).astype(object).where(share > threshold, None)


def median_or_none(values: np.ndarray) -> float | None:
    values = values[~np.isnan(values)]
    return float(np.median(values)) if len(values) else None


def _rating_frame(counted: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            column: pd.to_numeric(counted[column], errors="coerce").to_numpy(dtype=np.float64)
            if column in counted
            else np.full(len(counted), np.nan)
            for column in columns
        },
        index=counted["pair_id"].to_numpy(),
    )


def _pair_medians(ratings: pd.DataFrame, pair_ids: pd.Index) -> np.ndarray:
    """Median of each column per pair (NaN ratings skipped; NaN where a pair has none)."""
    if ratings.empty:
        return np.full((len(pair_ids), ratings.shape[1]), np.nan)
    medians = ratings.groupby(level=0).median()
    return medians.reindex(pair_ids).to_numpy(dtype=np.float64)


def _missing_ratings(ratings: pd.DataFrame, pair_ids: pd.Index, required: np.ndarray) -> np.ndarray:
    """Per pair and column, how many ratings short of the pair's required count."""
    given = ratings.notna().groupby(level=0).sum().reindex(pair_ids, fill_value=0)
    return np.maximum(required[:, None] - given.to_numpy(dtype=np.int64), 0)


def _best_case_medians(
    ratings: pd.DataFrame, pair_ids: pd.Index, missing: np.ndarray, top: float
) -> np.ndarray:
    """Medians with each pair's missing ratings (per column) taken as the top of the scale."""
    best = np.full((len(pair_ids), ratings.shape[1]), np.nan)
    for index, column in enumerate(ratings.columns):
        short = missing[:, index]
        if not short.any():
            continue
        padding = pd.DataFrame({column: top}, index=np.repeat(pair_ids.to_numpy(), short))
        padded = pd.concat([ratings[[column]], padding])
        best[:, index] = _pair_medians(padded, pair_ids)[:, 0]
    return best


@dataclass(frozen=True)
class _Tallies:
    """Per regular pair, in item order: the counted annotations and each vote's side."""

    present: np.ndarray
    chosen: np.ndarray
    tie: np.ndarray
    preference: np.ndarray
    both: np.ndarray
    flagged: np.ndarray
    required: np.ndarray

    @property
    def missing(self) -> np.ndarray:
        return np.maximum(self.required - self.present, 0)


def _tally(counted: pd.DataFrame, regular: pd.DataFrame, pair_ids: pd.Index) -> _Tallies:
    sums = (
        pd.DataFrame(
            {
                "present": 1,
                "chosen": (counted["rubric_fit"] == "chosen").to_numpy(),
                "tie": (counted["rubric_fit"] == "tie").to_numpy(),
                "preference": (counted["differentiator"] == "preference").to_numpy(),
                "both": (counted["differentiator"] == "both").to_numpy(),
                "flagged": counted["flagged"].astype(bool).to_numpy(),
            },
            index=counted["pair_id"].to_numpy(),
        )
        .groupby(level=0)
        .sum()
        .reindex(pair_ids, fill_value=0)
    )
    return _Tallies(
        **{column: sums[column].to_numpy(dtype=np.int64) for column in sums.columns},
        required=regular["required"].to_numpy(dtype=np.int64),
    )


def _reason_flags(
    tallies: _Tallies, checks: np.ndarray, n_criteria: int, threshold: float
) -> dict[str, np.ndarray]:
    """Per reason code, which pairs it applies to (the rules of the module docstring)."""
    present, required = tallies.present, tallies.required
    flag_vote = votes(present - tallies.flagged, tallies.flagged, present, required, threshold)
    differentiator_vote = votes(
        tallies.preference, present - tallies.preference, present, required, threshold
    )
    fit_vote = label_vote(tallies.chosen, tallies.tie, present, required, threshold)
    excluding = {
        FLAGGED: flag_vote == FAIL,
        LOW_QUALITY_CHOSEN: (checks[:, :n_criteria] == FAIL).any(axis=1),
        LOW_QUALITY_REJECTED: (checks[:, n_criteria:] == FAIL).any(axis=1),
        **differentiator_failures(differentiator_vote, tallies.both, present, required, threshold),
        **label_failures(fit_vote, tallies.tie, present, required, threshold),
    }
    # Undecided reasons only where nothing excludes the pair: it is out whichever way they go.
    excluded = np.logical_or.reduce(list(excluding.values()))
    too_few = ~excluded & (tallies.missing > 0)
    split = (
        ~excluded
        & ~too_few
        & ((flag_vote == SPLIT) | (differentiator_vote == SPLIT) | (fit_vote == SPLIT))
    )
    return {
        **excluding,
        TOO_FEW_ANNOTATIONS: too_few,
        UNDECIDED_SPLIT_VOTE: split,
        MISSING_RATING: ~excluded & ~too_few & (checks == UNKNOWN).any(axis=1),
    }


def _reasons_per_pair(flags: Mapping[str, np.ndarray], n_pairs: int) -> list[tuple[str, ...]]:
    """Each pair's reasons in REASONS order. One bit per reason, so that each distinct set of
    reasons becomes a tuple once however many pairs share it."""
    codes = sum(flags[reason].astype(np.int64) << bit for bit, reason in enumerate(REASONS))
    reasons_of = {
        int(code): tuple(r for bit, r in enumerate(REASONS) if int(code) >> bit & 1)
        for code in np.unique(np.asarray(codes, dtype=np.int64))
    }
    return [reasons_of[int(code)] for code in np.broadcast_to(codes, n_pairs)]


def _verdict_of(flags: Mapping[str, np.ndarray]) -> np.ndarray:
    excluded = np.logical_or.reduce([flags[reason] for reason in EXCLUDING_REASONS])
    undecided = np.logical_or.reduce([flags[reason] for reason in UNDECIDED_REASONS])
    return np.where(excluded, EXCLUDED, np.where(undecided, UNDECIDED, VALIDATED))


def _majority_labels(
    counted: pd.DataFrame, column: str, threshold: float, pair_ids: pd.Index
) -> list[str | None]:
    found = _majorities(counted, column, threshold).reindex(pair_ids)
    labels: list[str | None] = found.astype(object).where(found.notna(), None).tolist()
    return labels


def pair_verdicts(
    frame: pd.DataFrame,
    thresholds: Thresholds,
    *,
    items: pd.DataFrame | None = None,
    excluded_annotators: Collection[str] = (),
) -> dict[int, PairVerdict]:
    """The verdict of every regular pair, keyed by pair id (rules in the module docstring).

    ``items`` lists every item of the campaign (so that pairs nobody annotated get a verdict too)
    with the annotations each requires; without it, the pairs in ``frame`` at k each. Every
    rule is applied to all pairs at once (arrays of pairs), then one verdict object is made
    per pair.
    """
    if items is None:
        items = items_from_frame(frame, thresholds)
    counted = counted_annotations(frame, items, excluded_annotators)
    regular = regular_items(items)
    pair_ids = pd.Index(regular["pair_id"].to_numpy())
    criteria = list(thresholds.quality_criteria)
    tallies = _tally(counted, regular, pair_ids)

    ratings = _rating_frame(counted, [quality_column(s, c) for s in SIDES for c in criteria])
    medians = _pair_medians(ratings, pair_ids)
    top = float(thresholds.rating_scale_max)
    missing_ratings = _missing_ratings(ratings, pair_ids, tallies.required)
    checks = quality_checks(
        medians,
        _best_case_medians(ratings, pair_ids, missing_ratings, top),
        tallies.missing,
        missing_ratings,
        thresholds.quality_threshold,
    )
    threshold = thresholds.majority_threshold
    flags = _reason_flags(tallies, checks, len(criteria), threshold)
    return _verdict_objects(
        regular,
        _verdict_of(flags),
        _reasons_per_pair(flags, len(regular)),
        tallies.present,
        _majority_labels(counted, "rubric_fit", threshold, pair_ids),
        _majority_labels(counted, "differentiator", threshold, pair_ids),
        medians,
        criteria,
    )


def _verdict_objects(
    regular: pd.DataFrame,
    verdict: np.ndarray,
    reasons: list[tuple[str, ...]],
    present: np.ndarray,
    majority_fit: list[str | None],
    majority_differentiator: list[str | None],
    medians: np.ndarray,
    criteria: list[str],
) -> dict[int, PairVerdict]:
    half = len(criteria)
    # A campaign has few distinct majorities and median rows, so pairs share one dict per
    # distinct value: 100,000 verdicts then hold thousands of dicts, not hundreds of thousands.
    majorities: dict[tuple[str | None, str | None], dict[str, str | None]] = {}
    medians_by_row: dict[tuple[float | None, ...], dict[str, dict[str, float | None]]] = {}
    verdicts: dict[int, PairVerdict] = {}
    for row, (pair_id, external_id, category, medians_row) in enumerate(
        zip(
            regular["pair_id"].tolist(),
            regular["external_id"].tolist(),
            regular["category"].tolist(),
            medians.tolist(),
            strict=True,
        )
    ):
        # NaN medians (no rating) become None, as JSON has no NaN.
        key = tuple(None if math.isnan(value) else value for value in medians_row)
        if key not in medians_by_row:
            medians_by_row[key] = {
                "chosen": dict(zip(criteria, key[:half], strict=True)),
                "rejected": dict(zip(criteria, key[half:], strict=True)),
            }
        labels = (majority_fit[row], majority_differentiator[row])
        if labels not in majorities:
            majorities[labels] = {"rubric_fit": labels[0], "differentiator": labels[1]}
        verdicts[int(pair_id)] = PairVerdict(
            pair_id=int(pair_id),
            external_id=str(external_id),
            category=str(category or ""),
            verdict=str(verdict[row]),
            reasons=reasons[row],
            n_annotations=int(present[row]),
            majority=majorities[labels],
            quality_medians=medians_by_row[key],
        )
    return verdicts


def exclusion_effect(
    audited: Mapping[int, PairVerdict], everyone: Mapping[int, PairVerdict]
) -> dict[str, Any]:
    """How leaving annotators out changed the verdicts: ``audited`` are the verdicts with them
    left out, ``everyone`` the same rule over every answer (both with the managers'
    adjudications). ``changed``: pairs whose verdict differs; ``changes``: how many went from
    each verdict to each other, in ``VERDICTS`` order."""
    moves = Counter(
        (everyone[pair_id].verdict, verdict.verdict)
        for pair_id, verdict in audited.items()
        if everyone[pair_id].verdict != verdict.verdict
    )
    return {
        "pairs": len(audited),
        "changed": sum(moves.values()),
        "changes": [
            {"from": before, "to": after, "pairs": moves[before, after]}
            for before in VERDICTS
            for after in VERDICTS
            if moves[before, after]
        ],
    }
