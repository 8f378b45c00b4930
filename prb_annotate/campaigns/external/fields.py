"""The columns of an answer file and one row checked against a campaign's question set.

Pure: no ORM. A row is a dict of column -> value after the mapping (``mapping``) has renamed
columns and translated values; ``parse_row`` gives the answer in dataset orientation, or adds
a problem naming the row and column for everything wrong with it.
"""

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from prb_annotate.campaigns.annotating import Answers
from prb_annotate.datasets.importing import Location, Problem

PAIR_ID = "pair_id"
ANNOTATOR = "annotator"
CHOSEN_POSITION = "chosen_position"
RUBRIC_FIT = "rubric_fit"
RUBRIC_FIT_POSITION = "rubric_fit_position"
DIFFERENTIATOR = "differentiator"
CONFIDENCE = "confidence"
TIME_ON_TASK_MS = "time_on_task_ms"
COMMENT = "comment"
FLAGGED = "flagged"
COUNTED = "counted"
SUBMITTED_AT = "submitted_at"
ANNOTATED_AT = "annotated_at"

# Every column but the ratings, in the order docs/external-annotations.md lists them.
PLAIN_COLUMNS = (
    PAIR_ID,
    ANNOTATOR,
    CHOSEN_POSITION,
    RUBRIC_FIT,
    RUBRIC_FIT_POSITION,
    DIFFERENTIATOR,
    CONFIDENCE,
    TIME_ON_TASK_MS,
    COMMENT,
    FLAGGED,
    COUNTED,
    SUBMITTED_AT,
    ANNOTATED_AT,
)
# Our own annotations export names the pair ``id``; its ``category`` and ``revision`` say
# nothing the import needs (the category is the dataset's, one revision is exported).
ALIASES = {"id": PAIR_ID}
IGNORED_COLUMNS = frozenset({"category", "revision"})

POSITIONS = ("A", "B")
RUBRIC_FITS = ("chosen", "rejected", "tie")
FITS_AS_SEEN = ("A", "B", "tie")
DIFFERENTIATORS = ("preference", "quality", "both", "none")
CONFIDENCES = ("low", "medium", "high")
TRUE_WORDS = frozenset({"true", "1", "yes", "y", "t"})
FALSE_WORDS = frozenset({"false", "0", "no", "n", "f", ""})
MAX_ANNOTATOR_ID = 200
MAX_COMMENT = 10_000
# Ratings per answer: in dataset orientation, or as the annotator saw them (needs the side).
RATING_SIDES = ("chosen", "rejected", "A", "B")


@dataclass(frozen=True)
class QuestionSet:
    """What a campaign asks: its quality criteria and the top of its rating scale."""

    criteria: tuple[str, ...]
    scale_max: int

    def rating_columns(self) -> dict[str, tuple[str, str]]:
        """column -> (side, criterion) for every rating column a file may have."""
        return {
            f"quality_{side}_{criterion}": (side, criterion)
            for side in RATING_SIDES
            for criterion in self.criteria
        }

    def known_columns(self) -> frozenset[str]:
        return frozenset({*PLAIN_COLUMNS, *self.rating_columns()})


@dataclass
class ImportedAnswer:
    """One annotator's answer to one pair, in dataset orientation, and where it was read."""

    location: Location
    pair_id: str
    annotator: str
    chosen_position: str
    answers: Answers
    time_on_task_ms: int | None = None
    counted: bool = True
    submitted_at: datetime | None = None
    annotated_at: datetime | None = None


class RowProblems:
    """The problems of one row, each naming the row and the column."""

    def __init__(self, location: Location, problems: list[Problem]) -> None:
        self.location = location
        self.problems = problems
        self.found = False

    def add(self, column: str | None, message: str) -> None:
        self.found = True
        self.problems.append(self.location.problem(column, message))


NUL = "\x00"


def is_missing(value: Any) -> bool:
    """An empty cell: None, NaN (pandas, Parquet) or blank text."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def text_of(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def parse_row(
    row: dict[str, Any], questions: QuestionSet, location: Location, problems: list[Problem]
) -> ImportedAnswer | None:
    """The answer in ``row``, or None after adding a problem for each thing wrong with it."""
    report = RowProblems(location, problems)
    known = questions.known_columns()
    for column, value in row.items():
        if NUL in column:
            report.add(column.replace(NUL, "\\x00"), "column name contains a NUL character")
        elif column not in known:
            report.add(column, "unknown column (name it in the mapping file, or drop it)")
        elif isinstance(value, str) and NUL in value:
            # Neither database stores one in text (PostgreSQL refuses it with an error).
            report.add(column, "contains a NUL character")
    pair_id = _required_text(row, PAIR_ID, report)
    annotator = _required_text(row, ANNOTATOR, report)
    if annotator and len(annotator) > MAX_ANNOTATOR_ID:
        report.add(ANNOTATOR, f"longer than {MAX_ANNOTATOR_ID} characters")
    position = _choice(row, CHOSEN_POSITION, POSITIONS, report, required=False)
    fit = _rubric_fit(row, position, report)
    differentiator = _choice(row, DIFFERENTIATOR, DIFFERENTIATORS, report, required=True)
    confidence = _choice(row, CONFIDENCE, CONFIDENCES, report, required=False)
    chosen, rejected = _ratings(row, questions, position, report)
    comment = "" if is_missing(row.get(COMMENT)) else str(row[COMMENT])
    if len(comment) > MAX_COMMENT:
        report.add(COMMENT, f"longer than {MAX_COMMENT} characters")
    answer = ImportedAnswer(
        location=location,
        pair_id=pair_id,
        annotator=annotator,
        chosen_position=position,
        answers=Answers(
            quality_chosen=chosen,
            quality_rejected=rejected,
            rubric_fit=fit,
            differentiator=differentiator,
            confidence=confidence,
            comment=comment,
            flagged=_flag(row, FLAGGED, report, default=False),
        ),
        time_on_task_ms=_milliseconds(row, report),
        counted=_flag(row, COUNTED, report, default=True),
        submitted_at=_time(row, SUBMITTED_AT, report),
        annotated_at=_time(row, ANNOTATED_AT, report),
    )
    return None if report.found else answer


def _required_text(row: dict[str, Any], column: str, report: RowProblems) -> str:
    value = row.get(column)
    if is_missing(value):
        report.add(column, "missing")
        return ""
    return text_of(value)


def _choice(
    row: dict[str, Any],
    column: str,
    allowed: tuple[str, ...],
    report: RowProblems,
    *,
    required: bool,
) -> str:
    value = row.get(column)
    if is_missing(value):
        if required:
            report.add(column, f"missing (one of {', '.join(allowed)})")
        return ""
    text = text_of(value)
    by_lower = {choice.lower(): choice for choice in allowed}
    if text.lower() not in by_lower:
        report.add(column, f"unknown value {text!r} (one of {', '.join(allowed)})")
        return ""
    return by_lower[text.lower()]


def _rubric_fit(row: dict[str, Any], position: str, report: RowProblems) -> str:
    """Rubric fit in dataset orientation, given as such or as seen (A / B / tie) with the side
    on which the chosen answer was shown."""
    fit = _choice(row, RUBRIC_FIT, RUBRIC_FITS, report, required=False)
    seen = _choice(row, RUBRIC_FIT_POSITION, FITS_AS_SEEN, report, required=False)
    if not seen:
        if not fit and is_missing(row.get(RUBRIC_FIT)) and is_missing(row.get(RUBRIC_FIT_POSITION)):
            report.add(RUBRIC_FIT, "missing (chosen, rejected or tie; or rubric_fit_position)")
        return fit
    if seen == "tie":
        oriented = "tie"
    elif not position:
        report.add(RUBRIC_FIT_POSITION, "an answer as A / B needs the chosen_position column")
        return fit
    else:
        oriented = "chosen" if seen == position else "rejected"
    if fit and fit != oriented:
        report.add(RUBRIC_FIT, f"{fit!r} disagrees with rubric_fit_position {seen!r}")
    return oriented


def _ratings(
    row: dict[str, Any], questions: QuestionSet, position: str, report: RowProblems
) -> tuple[dict[str, int], dict[str, int]]:
    """Ratings of the chosen and the rejected answer; A / B columns need the side."""
    chosen: dict[str, int] = {}
    rejected: dict[str, int] = {}
    for column, (side, criterion) in questions.rating_columns().items():
        value = row.get(column)
        if is_missing(value):
            continue
        rating = _rating(value, questions.scale_max)
        if rating is None:
            report.add(
                column,
                f"rating {text_of(value)!r} is not a whole number 1 to {questions.scale_max}",
            )
            continue
        if side in POSITIONS:
            if not position:
                report.add(column, "a rating of A or B needs the chosen_position column")
                continue
            side = "chosen" if side == position else "rejected"
        target = chosen if side == "chosen" else rejected
        if criterion in target:
            report.add(column, f"{criterion} of the {side} answer is given twice")
        target[criterion] = rating
    return chosen, rejected


def _rating(value: Any, scale_max: int) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not number.is_integer() or not 1 <= number <= scale_max:
        return None
    return int(number)


def _flag(row: dict[str, Any], column: str, report: RowProblems, *, default: bool) -> bool:
    value = row.get(column)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return default
    if isinstance(value, bool):
        return value
    text = text_of(value).lower()
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return default if not text else False
    report.add(column, f"unknown value {text_of(value)!r} (true or false)")
    return default


def _milliseconds(row: dict[str, Any], report: RowProblems) -> int | None:
    value: Any = row.get(TIME_ON_TASK_MS)
    if is_missing(value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = -1.0
    if isinstance(value, bool) or not number.is_integer() or not 0 <= number < 2**31:
        report.add(TIME_ON_TASK_MS, f"{text_of(value)!r} is not a whole number of milliseconds")
        return None
    return int(number)


def _time(row: dict[str, Any], column: str, report: RowProblems) -> datetime | None:
    value = row.get(column)
    if is_missing(value):
        return None
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(text_of(value).replace("Z", "+00:00"))
        except ValueError:
            report.add(column, f"{text_of(value)!r} is not an ISO 8601 time")
            return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
