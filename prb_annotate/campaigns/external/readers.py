"""Answer files, read into rows under the import's column names (``fields``).

- A tidy table, one row per pair and annotator: CSV (header row; cells that our own CSV files
  neutralised for spreadsheets are given back as written), JSON Lines, or Parquet. Our own
  annotations export (``annotations.csv`` / ``.jsonl`` / ``.parquet``) is such a table.
- Label Studio's JSON export of a pairwise project: a list of tasks, each with its ``data``
  and its ``annotations``, whose ``result`` items name the control (``from_name``) and carry a
  ``pairwise`` (``{"selected": "left"}``), ``rating`` (``{"rating": 4}``), ``choices``
  (``{"choices": ["..."]}``) or ``textarea`` value. The mapping says which question each
  control answers; cancelled annotations are skipped.

Each row comes with its Location (file and line, Parquet row, or Label Studio task), so that a
problem names it.
"""

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from prb_annotate.campaigns.external import fields
from prb_annotate.campaigns.external.mapping import Mapping
from prb_annotate.datasets.budget import DecodeBudget, OverBudget, bounded
from prb_annotate.datasets.importing import Location, Problem
from prb_annotate.datasets.readers import (
    BadEntry,
    Unreadable,
    csv_lines,
    read_jsonl,
    read_parquet,
    within_budget,
)
from prb_annotate.formats.spreadsheets import original_cell
from prb_annotate.security.jsondepth import too_deep

TIDY = "tidy"
ANNOTATIONS_EXPORT = "annotations-export"
LABEL_STUDIO = "label-studio"
SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet", ".json")
# Columns only our own annotations export has: a table with them is one.
EXPORT_MARKERS = frozenset({"counted", "rubric_fit_position", "annotated_at"})
# Where Label Studio's pairwise control says the left or right text won.
SIDES_SHOWN = {"left": "A", "right": "B", "a": "A", "b": "B"}
# Keys a Label Studio row carries for the importer to find the side from the texts shown.
LEFT_TEXT = "_left_text"
RIGHT_TEXT = "_right_text"


@dataclass(frozen=True)
class Row:
    location: Location
    values: dict[str, Any]


def file_format(suffix: str, first_row: dict[str, Any] | None) -> str:
    if suffix == ".json":
        return LABEL_STUDIO
    if first_row is not None and set(first_row) >= EXPORT_MARKERS:
        return ANNOTATIONS_EXPORT
    return TIDY


def read_rows(
    name: str,
    stream: IO[bytes],
    suffix: str,
    mapping: Mapping,
    problems: list[Problem],
    *,
    budget: DecodeBudget | None = None,
) -> Iterator[Row]:
    """The file's rows, mapped; a line that is no row becomes a problem and reading goes on.
    Raises Unreadable when the rest of the file cannot be read. ``budget`` bounds what an
    upload decodes to and holds at once (every reader); None reads a local file unbounded."""
    if suffix == ".json":
        yield from label_studio_rows(name, stream, mapping, problems, budget)
        return
    unit = "row" if suffix == ".parquet" else "line"
    if suffix == ".csv":
        entries: Iterator[tuple[int, dict[str, Any] | BadEntry]] = csv_rows(bounded(stream, budget))
    elif suffix == ".parquet":
        entries = ((entry.line, entry.value) for entry in read_parquet(stream, budget))
    else:
        entries = (
            (entry.line, entry.value)
            for entry in within_budget(read_jsonl(bounded(stream, budget)))
        )
    for line, value in entries:
        location = Location(name, unit, line)
        if isinstance(value, BadEntry):
            problems.append(location.problem(value.field, value.message))
            continue
        yield Row(location, mapping.apply(value, fields.ALIASES, fields.IGNORED_COLUMNS))


def csv_rows(stream: IO[bytes]) -> Iterator[tuple[int, dict[str, Any] | BadEntry]]:
    lines = csv_lines(stream, over_budget_here=True)
    first = next(lines, None)
    if first is None:
        return
    header = [original_cell(cell) for cell in first[1]]
    for start, cells in lines:
        if not cells:
            continue
        if len(cells) != len(header):
            yield start, BadEntry(f"{len(cells)} cells where the header has {len(header)}")
            continue
        yield (
            start,
            {column: original_cell(cell) for column, cell in zip(header, cells, strict=True)},
        )


def label_studio_rows(
    name: str,
    stream: IO[bytes],
    mapping: Mapping,
    problems: list[Problem],
    budget: DecodeBudget | None = None,
) -> Iterator[Row]:
    try:
        tasks = json.loads(stream.read() if budget is None else budget.read_whole(stream))
    except OverBudget as exc:
        raise Unreadable(str(exc)) from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise Unreadable(f"invalid JSON: {exc}") from exc
    except RecursionError as exc:
        raise Unreadable("JSON nested too deeply") from exc
    if not isinstance(tasks, list) or too_deep(tasks):
        raise Unreadable("not a Label Studio JSON export (a list of tasks)")
    for number, task in enumerate(tasks, start=1):
        location = Location(name, "task", number)
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
            problems.append(location.problem("data", "a task needs its data object"))
            continue
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            problems.append(location.problem("annotations", "must be a list"))
            continue
        for annotation in annotations:
            if not isinstance(annotation, dict):
                problems.append(location.problem("annotations", "an annotation is an object"))
                continue
            if annotation.get("was_cancelled"):
                continue
            row = _studio_row(task["data"], annotation, mapping, location, problems)
            if row is not None:
                yield Row(location, row)


def _studio_row(
    data: dict[str, Any],
    annotation: dict[str, Any],
    mapping: Mapping,
    location: Location,
    problems: list[Problem],
) -> dict[str, Any] | None:
    """One Label Studio annotation as a row of the import's columns."""
    fields_of = mapping.label_studio
    row: dict[str, Any] = {
        fields.PAIR_ID: data.get(fields_of["pair_id"]),
        fields.ANNOTATOR: _completed_by(annotation.get("completed_by")),
    }
    side_field = fields_of.get("chosen_side")
    if side_field:
        shown = str(data.get(side_field, "")).strip().lower()
        row[fields.CHOSEN_POSITION] = SIDES_SHOWN.get(shown, shown)
    else:
        row[LEFT_TEXT] = data.get(fields_of["left"])
        row[RIGHT_TEXT] = data.get(fields_of["right"])
    lead_time = annotation.get("lead_time")
    if isinstance(lead_time, int | float) and not isinstance(lead_time, bool):
        milliseconds = float(lead_time) * 1000
        # NaN, infinities and what overflows to them stay floats: ``fields`` reports them.
        finite = math.isfinite(milliseconds)
        row[fields.TIME_ON_TASK_MS] = round(milliseconds) if finite else milliseconds
    results = annotation.get("result") or []
    if not isinstance(results, list):
        problems.append(location.problem("result", "must be a list"))
        return None
    ok = True
    for result in results:
        if not isinstance(result, dict):
            continue
        from_name = str(result.get("from_name", ""))
        target = mapping.from_names.get(from_name)
        if target is None:
            problems.append(
                location.problem(
                    from_name, "control not in the mapping file (label_studio.from_names)"
                )
            )
            ok = False
            continue
        value = _result_value(result)
        if value is None:
            problems.append(
                location.problem(from_name, f"unknown result type {result.get('type')!r}")
            )
            ok = False
            continue
        row[target] = mapping.translate(target, value)
    return row if ok else None


def _completed_by(value: Any) -> Any:
    """Label Studio's annotator: a user id, or an object with the id (and email)."""
    if isinstance(value, dict):
        value = value.get("email") or value.get("id")
    return None if value is None else str(value)


def _result_value(result: dict[str, Any]) -> Any:
    value = result.get("value")
    if not isinstance(value, dict):
        return None
    kind = result.get("type")
    if kind == "pairwise":
        selected = str(value.get("selected", "")).lower()
        return SIDES_SHOWN.get(selected, selected)
    if kind == "rating":
        return value.get("rating")
    if kind == "choices":
        choices = value.get("choices") or []
        return choices[0] if len(choices) == 1 else ", ".join(map(str, choices))
    if kind == "textarea":
        texts = value.get("text") or []
        return "\n".join(map(str, texts)) if isinstance(texts, list) else str(texts)
    return None
