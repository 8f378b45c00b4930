"""Dataset-validity audit: a verdict for every pair and dataset-level summaries.

Pure pandas over a frame of annotations (one row per current annotation, in dataset
orientation; see :data:`FRAME_COLUMNS`) and a frame of campaign items (:data:`ITEM_COLUMNS`).
No ORM here: ``prb_annotate.audit.frames`` builds both frames from the database.

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
  and "tie" answers that only together outnumber "chosen").
- The median of an even number of ratings is the mean of the two middle ones, so 3 and 5 give
  4, which reaches a threshold of 4. Annotations without a rating for a criterion are left
  out of that criterion's median; when no counted annotation rates it, the pair is
  **undecided** with ``missing_rating`` (answers from older question sets or the API).
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
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from prb_annotate.audit import agreement

# The answer domains, as stored by prb_annotate.models.Annotation (a test keeps them in sync).
RUBRIC_FIT = ("chosen", "rejected", "tie")
DIFFERENTIATOR = ("preference", "quality", "both", "none")
DEFAULT_CRITERIA = ("correctness", "relevance", "helpfulness")
SIDES = ("chosen", "rejected")

VALIDATED = "validated"
EXCLUDED = "excluded"
UNDECIDED = "undecided"
VERDICTS = (VALIDATED, EXCLUDED, UNDECIDED)

FLAGGED = "flagged"
LOW_QUALITY_CHOSEN = "low_quality_chosen"
LOW_QUALITY_REJECTED = "low_quality_rejected"
DIFFERENTIATOR_NOT_PREFERENCE = "differentiator_not_preference"
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
    LABEL_DISAGREES,
    LABEL_TIE,
)
UNDECIDED_REASONS = (UNDECIDED_SPLIT_VOTE, TOO_FEW_ANNOTATIONS, MISSING_RATING)
REASONS = EXCLUDING_REASONS + UNDECIDED_REASONS
REASON_LABELS = {
    FLAGGED: "flagged as unusable by a majority",
    LOW_QUALITY_CHOSEN: "chosen answer below the quality threshold",
    LOW_QUALITY_REJECTED: "rejected answer below the quality threshold",
    DIFFERENTIATOR_NOT_PREFERENCE: "majority says the difference is not personal preference",
    LABEL_DISAGREES: "majority does not prefer the dataset's chosen answer",
    LABEL_TIE: "majority calls the two answers a tie for this user",
    UNDECIDED_SPLIT_VOTE: "split vote: one more annotator needed",
    TOO_FEW_ANNOTATIONS: "fewer annotations than required",
    MISSING_RATING: "no annotator rated a quality criterion, so its median is unknown",
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
    "chosen and for the rejected answer (annotations without a rating are left out of that "
    "median; with no rating at all the pair waits: missing_rating).",
    "A majority (a share strictly above the majority threshold, never below 0.5) names personal "
    "preference as the main difference.",
    "A majority prefers the dataset's chosen answer; a majority against it is label_tie when "
    "most call it a tie, label_disagrees otherwise.",
    "A majority did not flag it as unusable.",
]

# A manager's adjudication: the decisions that replace a verdict, and its reason codes.
ADJUDICATED_DECISIONS = (VALIDATED, EXCLUDED)
ADJUDICATOR_JUDGEMENT = "adjudicator_judgement"
ADJUDICATION_REASONS = (ADJUDICATOR_JUDGEMENT, *REASONS)
ADJUDICATION_REASON_LABELS = {
    ADJUDICATOR_JUDGEMENT: "the manager's own reading of the pair",
    **REASON_LABELS,
}

# Consistency between questions within one annotation.
LOW_RATING = 2
CONSISTENCY_CHECKS = {
    "preference_but_low_quality": (
        "names personal preference as the difference but rates an answer "
        f"{LOW_RATING} or lower on a criterion"
    ),
    "quality_but_equal_ratings": (
        "names general quality as the difference but rates both answers the same everywhere"
    ),
    "no_difference_but_prefers_one": (
        "sees no real difference but says one answer fits the user better"
    ),
    "tie_but_preference": (
        "names personal preference as the difference but calls the rubric fit a tie"
    ),
}

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
    "rubric_fit",
    "rubric_fit_position",
    "differentiator",
    "confidence",
    "flagged",
    "comment",
    "time_on_task_ms",
    "submitted_at",
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
# Gold accuracy


def gold_results(frame: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Per annotator: gold items answered, answered correctly, and the share.

    An answer to a gold item is correct when every expected answer in ``gold_answers`` matches
    the annotation's column of that name (e.g. ``{"rubric_fit": "chosen"}``); keys that are not
    columns of the frame are ignored.
    """
    gold = items[(items["item_kind"] == "gold") & items["gold_answers"].notna()]
    expected = dict(zip(gold["pair_id"], gold["gold_answers"], strict=True))
    rows = frame[frame["pair_id"].isin(list(expected))]
    correct = [
        all(
            key not in rows.columns or row[key] == value
            for key, value in (expected[row["pair_id"]] or {}).items()
        )
        for _, row in rows.iterrows()
    ]
    table = pd.DataFrame({"annotator": rows["annotator"].to_numpy(), "correct": correct})
    grouped = table.groupby("annotator")["correct"].agg(["size", "sum"])
    result = pd.DataFrame(
        {"gold_answered": grouped["size"].astype(int), "gold_correct": grouped["sum"].astype(int)}
    )
    result["gold_accuracy"] = result["gold_correct"] / result["gold_answered"]
    return result


def annotators_below_gold(
    frame: pd.DataFrame, items: pd.DataFrame, min_gold_accuracy: float | None
) -> set[str]:
    """Annotators whose gold accuracy is below the minimum (those with no gold answer stay)."""
    if min_gold_accuracy is None:
        return set()
    results = gold_results(frame, items)
    return set(results.index[results["gold_accuracy"] < min_gold_accuracy])


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
    medians: np.ndarray, best_case_medians: np.ndarray, missing: np.ndarray, threshold: float
) -> np.ndarray:
    """Median ratings against the threshold, pairs x criteria: PASS, FAIL, PENDING, UNKNOWN.

    A pair still missing annotations fails only if its best case (every missing rating the top
    of the scale) is below the threshold; otherwise it is pending.
    """
    waiting = (missing > 0)[:, None]
    return np.select(
        [
            waiting & (best_case_medians < threshold),
            waiting,
            np.isnan(medians),
            medians >= threshold,
        ],
        [FAIL, PENDING, UNKNOWN, PASS],
        FAIL,
    )


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
    with np.errstate(divide="ignore", invalid="ignore"):
        tie_share = tie / np.maximum(present, required)
    tie_majority = (label_vote == FAIL) & (tie_share > threshold)
    return {LABEL_DISAGREES: (label_vote == FAIL) & ~tie_majority, LABEL_TIE: tie_majority}


def _majorities(counted: pd.DataFrame, column: str, threshold: float) -> pd.Series:
    """Per pair: the answer whose share is above the threshold, or None."""
    if counted.empty:
        return pd.Series(dtype=object)
    table = counted.groupby(["pair_id", column]).size().unstack(fill_value=0)
    share = table.max(axis=1) / table.sum(axis=1)
    return table.idxmax(axis=1).astype(object).where(share > threshold, None)


def _median_or_none(values: np.ndarray) -> float | None:
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


def _best_case_medians(
    ratings: pd.DataFrame, pair_ids: pd.Index, missing: np.ndarray, top: float
) -> np.ndarray:
    """Medians with each pair's missing ratings taken as the top of the scale."""
    if not missing.any():
        return np.full((len(pair_ids), ratings.shape[1]), np.nan)
    padding = pd.DataFrame(
        top, index=np.repeat(pair_ids.to_numpy(), missing), columns=ratings.columns
    )
    return _pair_medians(pd.concat([ratings, padding]), pair_ids)


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
    rating_columns = [quality_column(side, c) for side in SIDES for c in criteria]

    tallies = (
        pd.DataFrame(
            {
                "present": 1,
                "chosen": (counted["rubric_fit"] == "chosen").to_numpy(),
                "tie": (counted["rubric_fit"] == "tie").to_numpy(),
                "preference": (counted["differentiator"] == "preference").to_numpy(),
                "flagged": counted["flagged"].astype(bool).to_numpy(),
            },
            index=counted["pair_id"].to_numpy(),
        )
        .groupby(level=0)
        .sum()
        .reindex(pair_ids, fill_value=0)
    )
    present = tallies["present"].to_numpy(dtype=np.int64)
    chosen = tallies["chosen"].to_numpy(dtype=np.int64)
    tie = tallies["tie"].to_numpy(dtype=np.int64)
    preference = tallies["preference"].to_numpy(dtype=np.int64)
    flagged = tallies["flagged"].to_numpy(dtype=np.int64)
    required = regular["required"].to_numpy(dtype=np.int64)
    missing = np.maximum(required - present, 0)
    threshold = thresholds.majority_threshold

    flag_vote = votes(present - flagged, flagged, present, required, threshold)
    differentiator_vote = votes(preference, present - preference, present, required, threshold)
    label_vote = votes(chosen, present - chosen, present, required, threshold)

    ratings = _rating_frame(counted, rating_columns)
    medians = _pair_medians(ratings, pair_ids)
    checks = quality_checks(
        medians,
        _best_case_medians(ratings, pair_ids, missing, float(thresholds.rating_scale_max)),
        missing,
        thresholds.quality_threshold,
    )
    chosen_checks, rejected_checks = checks[:, : len(criteria)], checks[:, len(criteria) :]

    excluding = {
        FLAGGED: flag_vote == FAIL,
        LOW_QUALITY_CHOSEN: (chosen_checks == FAIL).any(axis=1),
        LOW_QUALITY_REJECTED: (rejected_checks == FAIL).any(axis=1),
        DIFFERENTIATOR_NOT_PREFERENCE: differentiator_vote == FAIL,
        **label_failures(label_vote, tie, present, required, threshold),
    }
    excluded = np.logical_or.reduce(list(excluding.values()))
    too_few = ~excluded & (missing > 0)
    missing_rating = ~excluded & ~too_few & (checks == UNKNOWN).any(axis=1)
    split = (
        ~excluded
        & ~too_few
        & ((flag_vote == SPLIT) | (differentiator_vote == SPLIT) | (label_vote == SPLIT))
    )
    # One bit per reason, in REASONS order, so that each distinct set becomes a tuple once.
    reason_flags = {
        **excluding,
        TOO_FEW_ANNOTATIONS: too_few,
        UNDECIDED_SPLIT_VOTE: split,
        MISSING_RATING: missing_rating,
    }
    codes = sum(reason_flags[reason].astype(np.int64) << bit for bit, reason in enumerate(REASONS))
    reasons_of = {
        int(code): tuple(r for bit, r in enumerate(REASONS) if int(code) >> bit & 1)
        for code in np.unique(np.asarray(codes, dtype=np.int64))
    }
    undecided = too_few | split | missing_rating
    verdict = np.where(excluded, EXCLUDED, np.where(undecided, UNDECIDED, VALIDATED))

    majority_fit = _majorities(counted, "rubric_fit", threshold).reindex(pair_ids)
    majority_differentiator = _majorities(counted, "differentiator", threshold).reindex(pair_ids)
    return _verdict_objects(
        regular,
        verdict,
        [reasons_of[int(code)] for code in np.broadcast_to(codes, len(regular))],
        present,
        majority_fit.astype(object).where(majority_fit.notna(), None).tolist(),
        majority_differentiator.astype(object)
        .where(majority_differentiator.notna(), None)
        .tolist(),
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


# --------------------------------------------------------------------------------------------
# One pair, explained


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
    "differentiator": (DIFFERENTIATOR_NOT_PREFERENCE,),
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
        outcome = int(
            votes(
                np.array([for_count]),
                np.array([present - for_count]),
                np.array([present]),
                np.array([required]),
                threshold,
            )[0]
        )
        voters = names[on_side] if outcome == PASS else names[~on_side] if outcome == FAIL else []
        detail = f"{for_count} of {present} {phrase}; a majority is a share above {threshold:g}"
        checks.append(check(name, label, outcome, detail + waiting, _VOTE_REASONS[name], voters))
    for side in SIDES:
        for criterion in thresholds.quality_criteria:
            checks.append(_quality_check(rows, side, criterion, missing, thresholds, check))
    return checks


def _quality_check(
    rows: pd.DataFrame,
    side: str,
    criterion: str,
    missing: int,
    thresholds: Thresholds,
    check: CheckMaker,
) -> Check:
    column = quality_column(side, criterion)
    values = pd.to_numeric(rows[column], errors="coerce") if column in rows else pd.Series([])
    ratings = values.to_numpy(dtype=np.float64)
    median = _median_or_none(ratings)
    padded = np.concatenate(
        [ratings[~np.isnan(ratings)], np.full(missing, thresholds.rating_scale_max)]
    )
    best = _median_or_none(padded)
    outcome = int(
        quality_checks(
            np.array([[np.nan if median is None else median]]),
            np.array([[np.nan if best is None else best]]),
            np.array([missing]),
            thresholds.quality_threshold,
        )[0, 0]
    )
    rated = int((~np.isnan(ratings)).sum())
    shown = "none" if median is None else f"{median:g}"
    plural = "s" if rated != 1 else ""
    detail = f"median {shown} of {rated} rating{plural}; needs {thresholds.quality_threshold:g}"
    low = (
        rows["annotator"]
        .astype(str)
        .to_numpy()[np.nan_to_num(ratings, nan=np.inf) < thresholds.quality_threshold]
    )
    reason = LOW_QUALITY_CHOSEN if side == SIDES[0] else LOW_QUALITY_REJECTED
    label = f"{side.capitalize()} answer: {criterion}"
    return check(column, label, outcome, detail, (reason,), low if outcome == FAIL else [])


# --------------------------------------------------------------------------------------------
# Dataset-level summaries


def share_with_interval(successes: int, total: int, confidence: float = 0.95) -> dict[str, Any]:
    low, high = agreement.wilson_interval(successes, total, confidence)
    return {
        "count": int(successes),
        "total": int(total),
        "share": successes / total if total else None,
        "ci_low": low if total else None,
        "ci_high": high if total else None,
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


def label_agreement(
    verdicts: Mapping[int, PairVerdict], counted: pd.DataFrame, confidence: float = 0.95
) -> dict[str, Any]:
    """How often annotators side with the dataset's label (chosen over rejected)."""
    majorities = [pair.majority.get("rubric_fit") for pair in verdicts.values()]
    with_majority = [label for label in majorities if label is not None]
    answers = counted["rubric_fit"]
    return {
        "pairs_majority_chosen": share_with_interval(
            sum(label == "chosen" for label in with_majority), len(with_majority), confidence
        ),
        "pairs_without_majority": sum(label is None for label in majorities),
        "answers_chosen": share_with_interval(
            int((answers == "chosen").sum()), len(answers), confidence
        ),
        "answers_tie": share_with_interval(int((answers == "tie").sum()), len(answers), confidence),
    }


def position_bias(rows: pd.DataFrame, confidence: float = 0.95) -> dict[str, Any]:
    """Share of "A" among the non-tie rubric-fit answers, with a two-sided binomial p-value."""
    positions = rows["rubric_fit_position"]
    decided = positions[positions != "tie"]
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
        "unit": "characters",
        "pairs_chosen_longer": share_with_interval(longer, int(unequal.sum()), confidence),
        "pairs_chosen_longer_p_value": agreement.binomial_p_value(longer, int(unequal.sum())),
        "pairs_equal_length": int((~unequal).sum()),
        "median_length_ratio": _median_or_none(
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


# --------------------------------------------------------------------------------------------
# Agreement per question


@dataclass(frozen=True)
class Question:
    name: str
    label: str
    column: str
    kind: str  # "nominal" or "ordinal"
    domain: tuple[Any, ...]


NOMINAL_QUESTIONS = (
    Question(
        "rubric_fit", "Rubric fit (chosen / rejected / tie)", "rubric_fit", "nominal", RUBRIC_FIT
    ),
    Question("differentiator", "Main difference", "differentiator", "nominal", DIFFERENTIATOR),
)


def questions(thresholds: Thresholds) -> list[Question]:
    """The two choices (nominal), then every quality rating (ordinal), in page order."""
    found = list(NOMINAL_QUESTIONS)
    for side in SIDES:
        for criterion in thresholds.quality_criteria:
            column = quality_column(side, criterion)
            found.append(
                Question(
                    column,
                    f"{side.capitalize()} answer: {criterion}",
                    column,
                    "ordinal",
                    tuple(thresholds.rating_domain()),
                )
            )
    return found


# (key, label, coefficient, options) for each kind of question.
COEFFICIENTS: dict[str, list[tuple[str, str, agreement.Coefficient, dict[str, Any]]]] = {
    "nominal": [
        ("alpha_nominal", "Krippendorff's alpha (nominal)", "alpha", {"level": "nominal"}),
        ("ac1", "Gwet's AC1", "gwet", {"weights": "identity"}),
        ("fleiss_kappa", "Fleiss' kappa", "fleiss_kappa", {}),
        ("percent_agreement", "Percent agreement", "percent_agreement", {}),
    ],
    "ordinal": [
        ("alpha_ordinal", "Krippendorff's alpha (ordinal)", "alpha", {"level": "ordinal"}),
        ("alpha_interval", "Krippendorff's alpha (interval)", "alpha", {"level": "interval"}),
        ("ac2_ordinal", "Gwet's AC2 (ordinal weights)", "gwet", {"weights": "ordinal"}),
        ("fleiss_kappa", "Fleiss' kappa (unweighted)", "fleiss_kappa", {}),
        ("percent_agreement", "Percent agreement (exact)", "percent_agreement", {}),
    ],
}
# Cohen's kappa between annotators: unweighted for choices, quadratic weights for ratings.
PAIRWISE_WEIGHTS: dict[str, agreement.WeightKind] = {"nominal": "identity", "ordinal": "quadratic"}


def ratings_matrix(
    rows: pd.DataFrame,
    question: Question,
    annotators: pd.Index,
    units: pd.Index,
) -> np.ndarray:
    """Annotators x units: codes into the question's domain (nominal) or the ratings."""
    matrix = np.full((len(annotators), len(units)), np.nan)
    if rows.empty:
        return matrix
    values = rows[question.column]
    if question.kind == "nominal":
        codes = pd.Categorical(values, categories=list(question.domain)).codes.astype(float)
        codes[codes < 0] = np.nan
        numbers = codes
    else:
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    matrix[annotators.get_indexer(rows["annotator"]), units.get_indexer(rows["pair_id"])] = numbers
    return matrix


def question_domain(question: Question) -> list[float]:
    if question.kind == "nominal":
        return [float(code) for code in range(len(question.domain))]
    return [float(value) for value in question.domain]


def agreement_by_question(
    counted: pd.DataFrame,
    thresholds: Thresholds,
    *,
    resamples: int = agreement.DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> list[dict[str, Any]]:
    """Every coefficient for every question, with unit-level bootstrap intervals.

    Units are the pairs with at least one counted annotation. Every question is bootstrapped
    over those units with the same seed; a question's coefficients share its resamples.
    """
    annotators = pd.Index(sorted(counted["annotator"].unique()))
    units = pd.Index(sorted(counted["pair_id"].unique()))
    bootstrap = agreement.Bootstrap(resamples, seed) if resamples else None
    results = []
    for question in questions(thresholds):
        matrix = ratings_matrix(counted, question, annotators, units)
        domain = question_domain(question)
        prepared = agreement.AgreementData.from_data(matrix, domain)
        wanted = COEFFICIENTS[question.kind]
        found = prepared.estimates(
            [(coefficient, options) for _, _, coefficient, options in wanted],
            bootstrap,
            confidence=confidence,
        )
        coefficients = [
            {"key": key, "label": label, **estimate.as_dict()}
            for (key, label, _, _), estimate in zip(wanted, found, strict=True)
        ]
        pairwise = agreement.pairwise_cohen_kappa(matrix, domain, PAIRWISE_WEIGHTS[question.kind])
        results.append(
            {
                "question": question.name,
                "label": question.label,
                "kind": question.kind,
                "units": int((~np.isnan(matrix)).any(axis=0).sum()),
                "units_rated_twice": int(((~np.isnan(matrix)).sum(axis=0) >= 2).sum()),
                "ratings": int((~np.isnan(matrix)).sum()),
                "coefficients": coefficients,
                "pairwise_kappa": _pairwise_rows(pairwise, annotators),
                "pairwise_weights": PAIRWISE_WEIGHTS[question.kind],
            }
        )
    return results


def _pairwise_rows(pairwise: agreement.PairwiseKappa, annotators: pd.Index) -> list[dict]:
    rows = []
    for a, b in zip(*np.triu_indices(len(annotators), k=1), strict=True):
        if pairwise.common_units[a, b] == 0:
            continue
        kappa = pairwise.kappa[a, b]
        rows.append(
            {
                "a": annotators[a],
                "b": annotators[b],
                "kappa": float(kappa) if math.isfinite(kappa) else None,
                "common_units": int(pairwise.common_units[a, b]),
            }
        )
    return rows


# --------------------------------------------------------------------------------------------
# Annotators


def annotator_table(
    frame: pd.DataFrame,
    items: pd.DataFrame,
    thresholds: Thresholds,
    excluded: Collection[str],
    flags: pd.DataFrame,
) -> list[dict[str, Any]]:
    """One row per annotator, over their answers to regular items (all annotators, excluded too).

    Leave-one-out agreement: share of answers matching the unique majority of the *other*
    annotators of the pair. Kappa: Cohen's kappa against each co-annotator (rubric fit and
    differentiator, unweighted). Position bias: share of "A" among non-tie rubric-fit answers.
    """
    rows = counted_annotations(frame, items)
    annotators = pd.Index(sorted(frame["annotator"].unique()))
    units = pd.Index(sorted(rows["pair_id"].unique()))
    gold = gold_results(frame, items)
    nominal = NOMINAL_QUESTIONS
    loo: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    kappas: dict[str, agreement.PairwiseKappa] = {}
    for question in nominal:
        matrix = ratings_matrix(rows, question, annotators, units)
        loo[question.name] = agreement.leave_one_out_agreement(matrix, question_domain(question))
        kappas[question.name] = agreement.pairwise_cohen_kappa(matrix, question_domain(question))
    flag_counts = flags.groupby("annotator").size() if len(flags) else pd.Series(dtype=int)

    table = []
    for index, name in enumerate(annotators):
        own = rows[rows["annotator"] == name]
        entry: dict[str, Any] = {
            "annotator": name,
            "annotations": len(own),
            "excluded": name in excluded,
        }
        gold_row = gold.loc[name] if name in gold.index else None
        entry["gold_answered"] = int(gold_row["gold_answered"]) if gold_row is not None else 0
        entry["gold_correct"] = int(gold_row["gold_correct"]) if gold_row is not None else 0
        entry["gold_accuracy"] = float(gold_row["gold_accuracy"]) if gold_row is not None else None
        for question in nominal:
            share, counted = loo[question.name]
            entry[f"loo_{question.name}"] = _finite(share[index])
            entry[f"loo_{question.name}_units"] = int(counted[index])
            row = kappas[question.name].kappa[index]
            common = kappas[question.name].common_units[index]
            per_peer = {
                annotators[peer]: _finite(row[peer])
                for peer in range(len(annotators))
                if peer != index and common[peer] > 0
            }
            entry[f"kappa_{question.name}"] = per_peer
            finite = [value for value in per_peer.values() if value is not None]
            entry[f"mean_kappa_{question.name}"] = float(np.mean(finite)) if finite else None
        bias = position_bias(own)
        entry["share_a"] = bias["share_a"]["share"]
        entry["ab_answers"] = bias["share_a"]["total"]
        entry["position_p_value"] = _finite(bias["p_value"])
        entry["chose_chosen"] = float((own["rubric_fit"] == "chosen").mean()) if len(own) else None
        times = pd.to_numeric(own["time_on_task_ms"], errors="coerce").dropna()
        entry["median_time_ms"] = float(times.median()) if len(times) else None
        entry["consistency_flags"] = int(flag_counts.get(name, 0))
        table.append(entry)
    return table


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


# --------------------------------------------------------------------------------------------
# Dawid-Skene


def dawid_skene_summary(counted: pd.DataFrame, verdicts: Mapping[int, PairVerdict]) -> dict:
    """Dawid-Skene labels for the two choices, compared with the plain majority."""
    annotators = pd.Index(sorted(counted["annotator"].unique()))
    units = pd.Index(sorted(counted["pair_id"].unique()))
    summary: dict[str, Any] = {}
    for question in NOMINAL_QUESTIONS:
        matrix = ratings_matrix(counted, question, annotators, units)
        if not len(units):
            summary[question.name] = {"differs_from_majority": [], "annotator_accuracy": {}}
            continue
        model = agreement.dawid_skene(matrix, len(question.domain))
        labels = [question.domain[code] for code in model.labels()]
        differs = [
            {
                "pair_id": int(pair_id),
                "external_id": verdicts[pair_id].external_id,
                "majority": verdicts[pair_id].majority.get(question.name),
                "dawid_skene": label,
                "posterior": float(model.posterior[index].max()),
            }
            for index, (pair_id, label) in enumerate(zip(units, labels, strict=True))
            if pair_id in verdicts and verdicts[pair_id].majority.get(question.name) != label
        ]
        summary[question.name] = {
            "iterations": model.iterations,
            "converged": model.converged,
            "priors": dict(zip(question.domain, map(float, model.priors), strict=True)),
            "annotator_accuracy": dict(
                zip(annotators, map(float, model.annotator_accuracy()), strict=True)
            ),
            "differs_from_majority": differs,
        }
    return summary


# --------------------------------------------------------------------------------------------
# The whole report


def audit_report(
    frame: pd.DataFrame,
    items: pd.DataFrame,
    thresholds: Thresholds,
    *,
    resamples: int = agreement.DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
    dawid_skene: bool = True,
    adjudications: Mapping[int, Adjudicated] | None = None,
    excluded_annotators: Collection[str] | None = None,
) -> dict[str, Any]:
    """The full audit as plain JSON-ready data: the page, the CLI and exports render this.

    Verdicts are the final ones (a manager's adjudication where there is one); the counts
    give the annotators' verdicts beside them, and agreement is the annotators' alone.
    ``excluded_annotators``: who is out of the audit, when the caller knows more reasons than
    gold accuracy (``exclusions.left_out_annotators``); by default those below the gold minimum.
    """
    excluded = (
        set(excluded_annotators)
        if excluded_annotators is not None
        else annotators_below_gold(frame, items, thresholds.min_gold_accuracy)
    )
    verdicts = apply_adjudications(
        pair_verdicts(frame, thresholds, items=items, excluded_annotators=excluded),
        adjudications or {},
    )
    counted = counted_annotations(frame, items, excluded)
    flags = consistency_flags(counted_annotations(frame, items), thresholds.quality_criteria)
    report: dict[str, Any] = {
        "settings": {
            "resamples": resamples,
            "seed": seed,
            "confidence": confidence,
            "thresholds": {
                **asdict(thresholds),
                "quality_criteria": list(thresholds.quality_criteria),
            },
            "length_unit": "characters",
        },
        "counts": {
            "pairs": len(verdicts),
            "gold_items": int((items["item_kind"] == "gold").sum()),
            "annotations": len(frame),
            "counted_annotations": len(counted),
            "annotators": int(frame["annotator"].nunique()),
            **verdict_counts(verdicts.values()),
            "adjudicated": sum(v.adjudicated for v in verdicts.values()),
            "by_annotators": verdict_counts(verdicts.values(), by_annotators=True),
        },
        "excluded_annotators": sorted(excluded),
        "agreement": agreement_by_question(
            counted, thresholds, resamples=resamples, seed=seed, confidence=confidence
        ),
        "validity": {
            **validity_summary(verdicts, confidence),
            "label_agreement": label_agreement(verdicts, counted, confidence),
        },
        "bias": {
            "position": position_bias(counted, confidence),
            "length": length_bias(items, counted, confidence),
        },
        "annotators": annotator_table(frame, items, thresholds, excluded, flags),
        "consistency": {
            "checks": [
                {"code": code, "label": label, "annotations": int((flags["code"] == code).sum())}
                for code, label in CONSISTENCY_CHECKS.items()
            ],
            "flags": flags.to_dict(orient="records"),
        },
        "verdicts": [
            {
                "pair_id": v.pair_id,
                "external_id": v.external_id,
                "category": v.category,
                "verdict": v.verdict,
                "reasons": list(v.reasons),
                "n_annotations": v.n_annotations,
                "adjudicated": v.adjudicated,
                "annotators_verdict": v.by_annotators()[0],
                "annotators_reasons": list(v.by_annotators()[1]),
            }
            for v in sorted(verdicts.values(), key=lambda v: (v.external_id, v.pair_id))
        ],
    }
    if dawid_skene:
        summary = dawid_skene_summary(counted, verdicts)
        report["dawid_skene"] = summary
        for row in report["annotators"]:
            for question, result in summary.items():
                row[f"ds_accuracy_{question}"] = result["annotator_accuracy"].get(row["annotator"])
    return jsonable(report)


def verdict_counts(
    verdicts: Iterable[PairVerdict], *, by_annotators: bool = False
) -> dict[str, int]:
    """Pairs per verdict: the final ones, or the annotators' (adjudications set aside)."""
    counts = dict.fromkeys(VERDICTS, 0)
    for verdict in verdicts:
        counts[verdict.by_annotators()[0] if by_annotators else verdict.verdict] += 1
    return counts


def jsonable(value: Any) -> Any:
    """Plain Python types only, NaN as None: what ``json.dumps`` writes without complaint."""
    if value is None or type(value) in (str, int, bool):
        return value
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
