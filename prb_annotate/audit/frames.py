"""The campaign read into frames: the one place the audit reads annotations from the ORM.

The statistics live in ``agreement`` and the rule in ``rule`` (pure, no ORM); this module only
reads a campaign into the two frames they take (``annotations_frame``, ``items_frame``) and its
thresholds. ``campaign_audit`` puts frames, exclusions and adjudications together.
"""

import json
from collections.abc import Callable, Collection, Iterator
from typing import Any

import numpy as np
import pandas as pd
from django.db import connections
from django.db.models import BooleanField, CharField, F, IntegerField, QuerySet, Value
from django.db.models.expressions import Func
from django.db.models.fields.json import (  # type: ignore[attr-defined]  # not in the stubs
    KeyTextTransform,
    compile_json_path,
)
from django.db.models.functions import Length

from prb_annotate.audit import rule
from prb_annotate.audit.rule import Thresholds
from prb_annotate.db.readahead import read_ahead
from prb_annotate.models import Annotation, Assignment, Campaign, CampaignItem

# Frame column <- ORM lookup on Annotation. What belongs to the item (pair id, record id,
# category, kind) comes from the items frame instead: joining the pairs table costs a read of
# each pair's row, answers and all.
_ANNOTATION_FIELDS = {
    "annotation_id": "id",
    "assignment_id": "assignment_id",
    "item_id": "assignment__item_id",
    "annotator": "assignment__annotator__username",
    "annotator_id": "assignment__annotator_id",
    "chosen_position": "assignment__chosen_position",
    "rubric_fit": "rubric_fit",
    "differentiator": "differentiator",
    "confidence": "confidence",
    "flagged": "flagged",
    "comment": "comment",
    "time_on_task_ms": "time_on_task_ms",
    "revision": "revision",
}
# Times are read as UTC text (see ``UtcText``): column <- ORM lookup.
_ANNOTATION_TIMES = {"submitted_at": "assignment__submitted_at", "annotated_at": "created_at"}


# Frame column <- ORM lookup on CampaignItem (the answer lengths are annotated on top).
_ITEM_FIELDS = {
    "item_id": "id",
    "pair_id": "pair_id",
    "external_id": "pair__external_id",
    "category": "pair__category",
    "item_kind": "kind",
    "extra_annotations": "extra_annotations",
    "gold_answers": "gold_answers",
}

# Rows per round trip when reading a whole campaign's annotations.
_FETCH_ROWS = 5000


def thresholds_for(campaign: Campaign) -> Thresholds:
    return Thresholds(
        annotations_per_pair=campaign.annotations_per_pair,
        quality_threshold=campaign.quality_threshold,
        majority_threshold=campaign.majority_threshold,
        quality_criteria=tuple(campaign.quality_criteria),
        rating_scale_max=campaign.rating_scale_max,
        min_gold_accuracy=campaign.min_gold_accuracy,
    )


def annotations_frame(
    campaign: Campaign,
    items: pd.DataFrame | None = None,
    *,
    only_items: bool = False,
    kind: str | None = None,
) -> pd.DataFrame:
    """One row per current annotation of the campaign, in dataset orientation.

    Only each submitted assignment's current revision counts. Columns: those of
    ``rule.FRAME_COLUMNS`` (ids, external_id, category, item_kind, annotator username and id,
    chosen_position, rubric_fit and rubric_fit_position as the annotator saw it (A / B / tie),
    differentiator, confidence, flagged, comment, time_on_task_ms, submitted_at, chosen_len and
    rejected_len in characters), plus revision, annotated_at, and one
    ``quality_chosen_<criterion>`` / ``quality_rejected_<criterion>`` column per criterion of
    the campaign (NaN where a rating is missing). Gold items are included (``item_kind``).
    Rows come by pair id, annotator and annotation id. ``items`` (``items_frame``, when the
    caller has it) saves reading the answer lengths again; with ``only_items``, they are the
    only items whose annotations are read (a slice of the campaign, read in one query), and
    ``kind`` reads only the annotations of that kind of item.
    """
    quality = {
        rule.quality_column(side, criterion): RatingText(criterion, f"quality_{side}")
        for side in rule.SIDES
        for criterion in campaign.quality_criteria
    }
    # Ratings are taken out of the JSON by the database: parsing every annotation's JSON in
    # Python costs more than the rest of the read. Aliases are positional, as criterion names
    # need not be valid query names.
    aliases: dict[str, Func] = {
        f"_rating_{n}": expression for n, expression in enumerate(quality.values())
    }
    aliases |= {f"_{column}": UtcText(lookup) for column, lookup in _ANNOTATION_TIMES.items()}
    annotations = Annotation.objects.filter(
        assignment__status=Assignment.Status.SUBMITTED, is_current=True
    )
    if only_items:
        if items is None:
            raise ValueError("only_items needs the items")
        # The items are the campaign's: naming the campaign as well would let the database
        # pick its index and scan every assignment of the campaign for each slice.
        annotations = annotations.filter(IdIn("assignment__item_id", items["item_id"].tolist()))
    else:
        annotations = annotations.filter(assignment__campaign=campaign)
    if kind is not None:
        annotations = annotations.filter(assignment__item__kind=kind)
    queryset = (
        annotations.annotate(**aliases)
        .order_by()
        .values_list(*_ANNOTATION_FIELDS.values(), *aliases)
    )
    columns = {
        **{lookup: column for column, lookup in _ANNOTATION_FIELDS.items()},
        **dict(zip(aliases, [*quality, *_ANNOTATION_TIMES], strict=True)),
    }
    frame = fetch_frame(
        queryset, columns, lambda chunk: _convert_columns(chunk, list(quality)), small=only_items
    )
    by_item = (items if items is not None else items_frame(campaign)).set_index("item_id")
    # Lengths are per pair: taken from the items, not measured again for every annotation.
    rows = by_item.index.get_indexer(frame["item_id"])
    for column in ("pair_id", "external_id", "category", "item_kind", "chosen_len", "rejected_len"):
        frame[column] = by_item[column].to_numpy()[rows]
    frame["rubric_fit_position"] = _positions_as_seen(frame)
    # Sorted here rather than by the database: a sort there carries every selected column.
    frame = frame.sort_values(
        ["pair_id", "annotator", "annotation_id"], kind="stable", ignore_index=True
    )
    return frame[[*rule.FRAME_COLUMNS, "revision", "annotated_at", *quality]]


class IdIn(Func):
    """``column IN (ids)`` with the ids sent as one parameter: an array on PostgreSQL, JSON
    text on SQLite.

    Django's ``__in`` gives every id its own placeholder, prepared one by one, and the driver
    then parses a query with thousands of them: for a slice of a campaign (thousands of ids,
    every few hundred milliseconds) that costs as much as the rows it reads. The ids' bounds
    are given too: PostgreSQL's planner cannot tell how many rows a list matches and would
    rather scan the whole table, while a range lets it take the column's index. A slice's ids
    are close together (a campaign's items are created in record-id order), so the range
    holds little more than the slice.
    """

    output_field = BooleanField()
    conditional = True

    def __init__(self, column: str, ids: Collection[int]) -> None:
        super().__init__(F(column))
        self.ids = [int(value) for value in ids]

    def _bounded(self, compiler: Any, membership: str) -> tuple[str, list[Any]]:
        # ``column`` is the compiled, quoted column; the ids travel as parameters.
        column, params = compiler.compile(self.source_expressions[0])
        sql = f"({column} BETWEEN %s AND %s AND {column} {membership})"
        return sql, [*params, min(self.ids), max(self.ids), *params]

    def as_sql(  # type: ignore[override]  # takes no function, template or joiner
        self, compiler: Any, connection: Any, **extra: Any
    ) -> Any:
        if not self.ids:
            return "1 = 0", ()
        sql, params = self._bounded(compiler, "IN (SELECT value FROM json_each(%s))")
        return sql, (*params, json.dumps(self.ids, allow_nan=False))

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        if not self.ids:
            return "1 = 0", ()
        sql, params = self._bounded(compiler, "= ANY(%s::bigint[])")
        return sql, (*params, self.ids)


class RatingText(KeyTextTransform):
    """A rating taken out of an annotation's JSON by the database.

    On SQLite, plain JSON_EXTRACT: Django's generic form wraps it in a CASE that tells JSON
    true / false / null apart, reading the document three times; a rating is a number or
    missing, and the frame converts the column to numbers anyway.
    """

    def as_sqlite(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        lhs, params, key_transforms = self.preprocess_lhs(compiler, connection)
        return f"JSON_EXTRACT({lhs}, %s)", (*params, compile_json_path(key_transforms))

    def as_postgresql(self, compiler: Any, connection: Any, **extra_context: Any) -> Any:
        # A number as float8, which the driver reads in C (text would be parsed again in
        # Python); anything but a JSON number (ratings are stored as numbers) as NULL.
        lhs, params, key_transforms = self.preprocess_lhs(compiler, connection)
        value = f"({lhs} #> %s)"
        sql = f"(CASE WHEN jsonb_typeof({value}) = 'number' THEN {value}::float8 END)"
        return sql, (*params, key_transforms, *params, key_transforms)


class UtcText(Func):
    """A time as ISO 8601 text in UTC, which pandas parses a whole column at a time.

    The drivers' own conversion makes one Python datetime per value (on PostgreSQL through
    Django's time zone loader): for hundreds of thousands of rows it costs more than the rest
    of the read. SQLite keeps times as UTC text already; casting hides the column's declared
    type, so no converter runs.
    """

    output_field = CharField()
    # Elsewhere the driver's times are taken as they come.
    template = "%(expressions)s"

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template="CAST(%(expressions)s AS TEXT)")

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        template = """to_char(%(expressions)s AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')"""
        return self.as_sql(compiler, connection, template=template)


def _convert_columns(frame: pd.DataFrame, ratings: list[str]) -> None:
    """Whole-column conversions of what the driver gave (SQLite: times as text, booleans as
    0 / 1; ratings as numbers or text)."""
    for column in ratings:
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype(np.float64)
    frame["flagged"] = frame["flagged"].astype(bool)
    for column in ("submitted_at", "annotated_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")


def fetch_frame(
    queryset: QuerySet[Any, Any],
    columns: dict[str, str],
    convert: Callable[[pd.DataFrame], None],
    *,
    small: bool = False,
) -> pd.DataFrame:
    """The rows of a ``values_list`` query as a frame, its columns renamed by ``columns``
    (selected name -> column) and typed by ``convert``, one chunk at a time (see ``raw_rows``).

    Each chunk becomes typed columns as soon as it arrives, so the driver's Python objects
    (a few hundred bytes a row) never exist for more than one chunk at once. A ``small``
    result (a slice of a campaign) is read on a plain cursor in the caller's thread: a
    server-side cursor and a reading thread cost more than they save for a few thousand rows.
    """
    names, chunks = raw_rows(queryset, server_side=not small)
    renamed = [columns[name] for name in names]
    parts = []
    for rows in chunks if small else read_ahead(chunks, queryset.db):
        part = pd.DataFrame.from_records(rows, columns=renamed)
        convert(part)
        parts.append(part)
    if not parts:
        empty = pd.DataFrame({name: pd.Series(dtype=object) for name in renamed})
        convert(empty)
        return empty
    return pd.concat(parts, ignore_index=True)


def raw_rows(
    queryset: QuerySet[Any, Any], chunk_rows: int = _FETCH_ROWS, *, server_side: bool = True
) -> tuple[list[str], Iterator[list[tuple[Any, ...]]]]:
    """The selected names of a ``values_list`` query in SQL order, and its rows in chunks.

    The SQL runs on a plain cursor, skipping the ORM's per-value converters and per-row
    objects: with hundreds of thousands of rows those cost more than the query. The cursor is
    a server-side one where the database has them, unless the caller knows the result is
    small (``server_side=False`` saves PostgreSQL's DECLARE / FETCH / CLOSE round trips).
    """
    query = queryset.query
    # The order of the SQL's columns, which values_list() would otherwise restore per row.
    names = [*query.extra_select, *query.values_select, *query.annotation_select]
    sql, params = query.sql_with_params()

    def chunks() -> Iterator[list[tuple[Any, ...]]]:
        # The connection of the thread that reads (see ``readahead``), looked up there.
        connection = connections[queryset.db]
        with connection.chunked_cursor() if server_side else connection.cursor() as cursor:
            cursor.execute(sql, params)
            while rows := cursor.fetchmany(chunk_rows):
                yield rows

    return names, chunks()


def _positions_as_seen(frame: pd.DataFrame) -> np.ndarray:
    """The rubric-fit answer as the annotator saw it (Annotation.rubric_fit_as_position)."""
    fit = frame["rubric_fit"].to_numpy(dtype=object)
    shown = frame["chosen_position"].to_numpy(dtype=object)
    other = np.where(shown == "A", "B", "A")
    seen = np.where(fit == Annotation.RubricFit.CHOSEN, shown, other)
    # An imported answer may not say where the chosen answer was shown: no position then.
    seen = np.where((shown == "A") | (shown == "B"), seen, "")
    return np.where(fit == Annotation.RubricFit.TIE, "tie", seen).astype(object)


def _length(field: str, measured: bool) -> Func | Value:
    return Length(field) if measured else Value(None, IntegerField())


def items_frame(
    campaign: Campaign,
    *,
    lengths: bool = True,
    pair_ids: Collection[int] | None = None,
    kind: str | None = None,
) -> pd.DataFrame:
    """Every item of the campaign with the annotations it requires (k + extra), by pair id.

    ``lengths=False`` leaves ``chosen_len`` / ``rejected_len`` empty: measuring them reads
    every answer's text, which only the report's length analysis needs, not the verdicts.
    ``pair_ids`` (a slice of the campaign) or ``kind`` keep only those items.
    """
    items = CampaignItem.objects.filter(campaign=campaign)
    if pair_ids is not None:
        items = items.filter(IdIn("pair_id", pair_ids))
    if kind is not None:
        items = items.filter(kind=kind)
    queryset = (
        items.annotate(
            chosen_len=_length("pair__chosen", lengths),
            rejected_len=_length("pair__rejected", lengths),
        )
        .order_by("pair_id")
        .values_list(*_ITEM_FIELDS.values(), "chosen_len", "rejected_len")
    )
    columns = {lookup: column for column, lookup in _ITEM_FIELDS.items()}
    columns |= {"chosen_len": "chosen_len", "rejected_len": "rejected_len"}
    k = campaign.annotations_per_pair

    def convert(chunk: pd.DataFrame) -> None:
        chunk["required"] = k + chunk.pop("extra_annotations").astype(np.int64)
        # Read raw, so the JSON is decoded here (NULL for regular items).
        chunk["gold_answers"] = [
            json.loads(value) if isinstance(value, str) else value
            for value in chunk["gold_answers"]
        ]

    frame = fetch_frame(queryset, columns, convert, small=pair_ids is not None)
    return frame[list(rule.ITEM_COLUMNS)]
