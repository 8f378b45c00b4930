"""The mapping file (``--mapping``): other column names and value spellings, and, for a Label
Studio export, which control (``from_name``) answers which question and which fields of a
task's data hold the pair id and the side of the chosen answer.

A JSON object (docs/external-annotations.md)::

    {"columns": {"item": "pair_id", "worker": "annotator"},
     "values": {"differentiator": {"Personal preference": "preference"}},
     "ignore": ["batch"],
     "label_studio": {"pair_id": "pair_id", "chosen_side": "chosen_side",
                      "from_names": {"better": "rubric_fit_position", "why": "differentiator"}}}

Every key is optional; an unknown key, or a column mapped to a name the import does not know,
is an error naming it.
"""

import json
from dataclasses import dataclass, field
from typing import Any

from prb_annotate.campaigns.external.fields import PLAIN_COLUMNS, QuestionSet, is_missing
from prb_annotate.security.jsondepth import too_deep

KEYS = frozenset({"columns", "values", "ignore", "label_studio"})
LABEL_STUDIO_KEYS = frozenset({"pair_id", "chosen_side", "left", "right", "from_names"})
# The fields of a Label Studio task's data read by default.
DEFAULT_LABEL_STUDIO = {"pair_id": "pair_id", "left": "left", "right": "right"}


class MappingError(ValueError):
    """The mapping file is wrong; the message names the key."""


@dataclass(frozen=True)
class Mapping:
    columns: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    ignore: frozenset[str] = frozenset()
    label_studio: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_LABEL_STUDIO))
    from_names: dict[str, str] = field(default_factory=dict)

    def apply(
        self, row: dict[str, Any], aliases: dict[str, str], ignored: frozenset[str] = frozenset()
    ) -> dict[str, Any]:
        """The row under the import's column names, its values translated."""
        renamed: dict[str, Any] = {}
        for column, value in row.items():
            if column in self.ignore or (column in ignored and column not in self.columns):
                continue
            name = self.columns.get(column, aliases.get(column, column))
            renamed[name] = self.translate(name, value)
        return renamed

    def translate(self, column: str, value: Any) -> Any:
        spellings = self.values.get(column)
        if not spellings or is_missing(value):
            return value
        key = str(value).strip()
        return spellings.get(key, value)


def parse_mapping(text: str | bytes, questions: QuestionSet) -> Mapping:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        raise MappingError(f"mapping file: not JSON ({error})") from error
    if not isinstance(data, dict) or too_deep(data):
        raise MappingError("mapping file: must be a JSON object")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise MappingError(
            f"mapping file: unknown key {unknown[0]!r} (known: {', '.join(sorted(KEYS))})"
        )
    known = set(PLAIN_COLUMNS) | set(questions.rating_columns())
    columns = _strings(data.get("columns", {}), "columns")
    for source, target in columns.items():
        if target not in known:
            raise MappingError(f"mapping file: columns.{source}: unknown column {target!r}")
    values = data.get("values", {})
    if not isinstance(values, dict):
        raise MappingError("mapping file: values must be an object")
    for column, spellings in values.items():
        if column not in known or not isinstance(spellings, dict):
            raise MappingError(f"mapping file: values.{column}: an object for a known column")
    ignore = data.get("ignore", [])
    if not isinstance(ignore, list) or not all(isinstance(name, str) for name in ignore):
        raise MappingError("mapping file: ignore must be a list of column names")
    studio = data.get("label_studio", {})
    if not isinstance(studio, dict):
        raise MappingError("mapping file: label_studio must be an object")
    unknown = sorted(set(studio) - LABEL_STUDIO_KEYS)
    if unknown:
        raise MappingError(f"mapping file: label_studio.{unknown[0]}: unknown key")
    from_names = _strings(studio.get("from_names", {}), "label_studio.from_names")
    for name, target in from_names.items():
        if target not in known:
            raise MappingError(
                f"mapping file: label_studio.from_names.{name}: unknown question {target!r}"
            )
    fields = {key: value for key, value in studio.items() if key != "from_names"}
    if not all(isinstance(value, str) for value in fields.values()):
        raise MappingError("mapping file: label_studio fields are names of the task's data")
    return Mapping(
        columns=columns,
        values={column: dict(spellings) for column, spellings in values.items()},
        ignore=frozenset(ignore),
        label_studio={**DEFAULT_LABEL_STUDIO, **fields},
        from_names=from_names,
    )


def _strings(value: Any, key: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(
        isinstance(name, str) and isinstance(target, str) for name, target in value.items()
    ):
        raise MappingError(f"mapping file: {key} must map names to names")
    return dict(value)
