"""A column mapping: how a file's own column names and winner labels read as our fields.

One JSON format for ``import_pairs --mapping FILE``, the upload page and the API::

    {"columns": {"question": "instruction", "chosen": "better", "rejected": "worse"},
     "winner_values": {"a": ["first", "1"], "b": ["second", "2"]},
     "category": {"column": "domain"}}          # or {"value": "Society_and_Culture"}

``columns`` maps our field names to the file's; ``winner_values`` replaces the spellings a
winner label may take (``shapes.WINNER_SPELLINGS``); ``category`` says where a record's
category comes from: a column, or one value for every record (a record's own ``category``
still wins). Every problem of a mapping is named at once (``MappingInvalid``); a renamed record
is given back under the file's names on export (``records`` keeps the renames).
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext

from prb_annotate.datasets.records import RECORD_ORDER
from prb_annotate.datasets.shapes import (
    QUESTION_FIELDS,
    RESPONSE_FIELDS,
    WINNER_FIELDS,
    WINNER_SPELLINGS,
)

# The fields a column may be mapped to: the official record's, and those of the other shapes.
MAPPED_FIELDS = (
    "id",
    *QUESTION_FIELDS,
    *RECORD_ORDER[RECORD_ORDER.index("profile") :],
    *RESPONSE_FIELDS,
    *WINNER_FIELDS,
)
MAPPING_KEYS = ("columns", "winner_values", "category")


class MappingInvalid(Exception):
    """A mapping that cannot be used, with every problem found in it."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ColumnMapping:
    """A checked mapping. ``renames`` maps the file's column names to ours."""

    renames: dict[str, str] = field(default_factory=dict)
    spellings: dict[str, tuple[Any, ...]] | None = None
    default_category: str = ""

    def apply(self, raw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The record under our names, and the renames that applied to it (ours -> theirs)."""
        if not self.renames:
            return dict(raw), {}
        record: dict[str, Any] = {}
        applied: dict[str, str] = {}
        for key, value in raw.items():
            ours = self.renames.get(key)
            if ours is None:
                record.setdefault(key, value)
            else:
                record[ours] = value
                applied[ours] = key
        return record, applied

    def column_for(self, ours: str) -> str:
        """The file's name for one of our fields (its own when not renamed)."""
        return next((theirs for theirs, name in self.renames.items() if name == ours), ours)


NO_MAPPING = ColumnMapping()


def parse_mapping(text: str | bytes | None) -> ColumnMapping:
    """The mapping a JSON text states; an empty text is no mapping. MappingInvalid names every
    problem."""
    if text is None:
        return NO_MAPPING
    try:
        # The encodings json.loads reads bytes in (UTF-8, -16 or -32), told apart as it does.
        decoded = text if isinstance(text, str) else text.decode(json.detect_encoding(text))
    except UnicodeDecodeError as exc:
        message = gettext("mapping: not valid UTF-8 (byte %(byte)d)") % {"byte": exc.start + 1}
        raise MappingInvalid([message]) from exc
    if not decoded.strip():
        return NO_MAPPING
    try:
        data = json.loads(decoded)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise MappingInvalid([f"mapping: not valid JSON ({exc})"]) from exc
    if not isinstance(data, dict):
        raise MappingInvalid(["mapping: expected a JSON object"])
    problems = [
        f'mapping: unknown key "{key}" (expected {", ".join(MAPPING_KEYS)})'
        for key in data
        if key not in MAPPING_KEYS
    ]
    renames = check_columns(data.get("columns", {}), problems)
    spellings = check_winner_values(data.get("winner_values"), problems)
    default_category = check_category(data.get("category"), renames, problems)
    if problems:
        raise MappingInvalid(problems)
    return ColumnMapping(renames, spellings, default_category)


def check_columns(columns: Any, problems: list[str]) -> dict[str, str]:
    if not isinstance(columns, dict):
        problems.append("columns: expected an object of our field names to column names")
        return {}
    renames: dict[str, str] = {}
    for ours, theirs in columns.items():
        if ours not in MAPPED_FIELDS:
            problems.append(
                f"columns.{ours}: unknown field (expected one of {', '.join(MAPPED_FIELDS)})"
            )
        elif not isinstance(theirs, str) or not theirs.strip():
            problems.append(f"columns.{ours}: expected a column name")
        elif theirs in renames:
            problems.append(f'columns.{ours}: column "{theirs}" is already {renames[theirs]}')
        else:
            renames[theirs] = ours
    return renames


def check_winner_values(values: Any, problems: list[str]) -> dict[str, tuple[Any, ...]] | None:
    if values is None:
        return None
    if not isinstance(values, dict) or set(values) != set(WINNER_SPELLINGS):
        problems.append('winner_values: expected {"a": [...], "b": [...]}')
        return None
    spellings: dict[str, tuple[Any, ...]] = {}
    for side, spelled in values.items():
        if not isinstance(spelled, list) or not spelled:
            problems.append(f"winner_values.{side}: expected a list of labels")
        elif not all(isinstance(v, str | int) and not isinstance(v, bool) for v in spelled):
            problems.append(f"winner_values.{side}: labels are strings or integers")
        else:
            spellings[side] = tuple(spelled)
    both = {str(v).lower() for v in spellings.get("a", ())} & {
        str(v).lower() for v in spellings.get("b", ())
    }
    if both:
        problems.append(f"winner_values: {', '.join(sorted(both))} names both a and b")
    return spellings if len(spellings) == 2 else None


def check_category(spec: Any, renames: dict[str, str], problems: list[str]) -> str:
    if spec is None:
        return ""
    if not isinstance(spec, dict) or len(spec) != 1 or not {"column", "value"} & set(spec):
        problems.append('category: expected {"column": NAME} or {"value": TEXT}')
        return ""
    if "value" in spec:
        if not isinstance(spec["value"], str) or not spec["value"].strip():
            problems.append("category.value: expected a text")
            return ""
        return str(spec["value"])
    column = spec["column"]
    if not isinstance(column, str) or not column.strip():
        problems.append("category.column: expected a column name")
    elif column in renames and renames[column] != "category":
        problems.append(f'category.column: column "{column}" is already {renames[column]}')
    elif "category" in renames.values() and renames.get(column) != "category":
        problems.append("category.column: columns already names the category's column")
    else:
        renames[column] = "category"
    return ""
