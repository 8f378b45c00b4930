"""One slice of an export: a run of pairs in record-id order, audited and encoded on its own.

An export walks a campaign's regular pairs by record id, SLICE_PAIRS at a time. A slice holds
everything its rows depend on: its items, their current annotations, its verdicts, and then
its records and annotation rows, already in the file format. So a slice is the same work in
the exporting process or in a worker process (see ``processes``), and what the export keeps
for the whole campaign is only what the agreement bootstrap needs: the counted answers.

Verdicts are per pair, so a slice's verdicts are those the whole-campaign audit gives, once the
annotators out of the audit are known (they are found first) and the managers' adjudications
read (they replace the annotators' verdict of their pairs): the export hands both to every slice
from the campaign's one ``CampaignAudit``. A slice reads its own items and answers
(``read_slice``), or, where the exporting process holds the audit's answers already, takes
them and their verdicts from it (``audited_slice``) and reads nothing of the answers again.
"""

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
from django.db.models import QuerySet

from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.audit.frames import IdIn, annotations_frame, items_frame, raw_rows
from prb_annotate.audit.questions import questions
from prb_annotate.audit.rule import (
    ANSWER_COLUMNS,
    Adjudicated,
    PairVerdict,
    Thresholds,
    apply_adjudications,
    counted_annotations,
    pair_verdicts,
)
from prb_annotate.datasets.records import pair_to_record
from prb_annotate.models import Campaign, CampaignItem, Pair

# Pairs per slice: a slice's records (about 10 kB each) and annotations are held at once, in
# the worker and then in the pipe, so this bounds the memory of every process.
SLICE_PAIRS = 2000

Record = dict[str, Any]


class ExportError(Exception):
    """The export cannot be made as asked; nothing was written."""


# --- what a slice is given ---------------------------------------------------------------


@dataclass(frozen=True)
class SliceOptions:
    """What every slice of one export shares: the request, and what is known before slicing."""

    campaign_id: int
    subset: str
    fmt: str
    with_validation: bool
    # The campaign's audit settings, as its ``CampaignAudit`` has them.
    thresholds: Thresholds
    # Usernames the audit leaves out (``CampaignAudit.left_out``).
    excluded_annotators: frozenset[str]
    # Annotator id -> pseudonym, made by the exporting process, which holds the secret.
    pseudonyms: Mapping[int, str]
    # Every annotator's username, sorted: the categories of the agreement's annotator column.
    annotators: tuple[str, ...]
    # Managers' decisions in force, by pair id: they replace the annotators' verdict.
    adjudications: Mapping[int, Adjudicated] = field(default_factory=dict)


@dataclass(frozen=True)
class SliceTask:
    options: SliceOptions
    # Regular pairs, in record-id order.
    pair_ids: tuple[int, ...]


@dataclass
class SliceResult:
    """A slice's rows in the file format, with the counts and answers the manifest sums up.

    Payloads are JSON Lines bytes, Arrow columns (Parquet) or records (CSV), per category for
    the records and one for the annotations.
    """

    records: dict[str, Any]
    record_rows: dict[str, int]
    annotations: Any
    annotation_rows: int
    # category -> {"validated": n, "excluded": n, "undecided": n, "total": n, "exported": n}
    counts: dict[str, dict[str, int]]
    # The slice's counted annotations, the columns the agreement statistics read.
    agreement: pd.DataFrame
    # The exported pairs' ids, for what the manifest records per pair (an active sample's
    # inclusion probabilities).
    exported: tuple[int, ...] = ()


VERDICTS = ("validated", "excluded", "undecided")


def in_subset(verdict: PairVerdict, subset: str) -> bool:
    # "excluded" is every pair that did not pass: failed, or still undecided. The record's
    # validation.verdict tells which.
    if subset == "validated":
        return verdict.verdict == "validated"
    if subset == "excluded":
        return verdict.verdict != "validated"
    return True


def validation_object(verdict: PairVerdict) -> Record:
    # The audit gives plain values: labels or None, float medians or None (never NaN).
    return {
        "n_annotations": int(verdict.n_annotations),
        "majority": dict(verdict.majority),
        "quality_medians": {
            side: dict(medians) for side, medians in verdict.quality_medians.items()
        },
        "verdict": verdict.verdict,
        "reasons": list(verdict.reasons),
        "adjudicated": verdict.adjudicated,
        "annotators_verdict": verdict.by_annotators()[0],
    }


# --- a slice -------------------------------------------------------------------------------


def export_slice(campaign: Campaign, task: SliceTask) -> SliceResult:
    """Audit and encode one slice of the campaign's regular pairs, read from the database."""
    return encode_slice(campaign, task, read_slice(campaign, task))


def audited_slice(audit: CampaignAudit, task: SliceTask) -> SliceResult:
    """Encode one slice from the answers and verdicts the audit holds (read once)."""
    return encode_slice(audit.campaign, task, cut_slice(audit, task.pair_ids))


class SliceInputs(NamedTuple):
    """What a slice's rows rest on: its items, their current annotations, its verdicts."""

    items: pd.DataFrame
    frame: pd.DataFrame
    verdicts: dict[int, PairVerdict]


def read_slice(campaign: Campaign, task: SliceTask) -> SliceInputs:
    """The slice's items and answers read from the database, and their verdicts."""
    options = task.options
    items = items_frame(campaign, lengths=False, pair_ids=task.pair_ids)
    frame = annotations_frame(campaign, items, only_items=True)
    verdicts = apply_adjudications(
        pair_verdicts(
            frame, options.thresholds, items=items, excluded_annotators=options.excluded_annotators
        ),
        options.adjudications,
    )
    return SliceInputs(items, frame, verdicts)


def cut_slice(audit: CampaignAudit, pair_ids: tuple[int, ...]) -> SliceInputs:
    """The slice's part of the audit's frames (in their order) and verdicts."""
    items = audit.items[audit.items["pair_id"].isin(pair_ids)].reset_index(drop=True)
    answers = audit.answers
    frame = answers[answers["item_id"].isin(items["item_id"])].reset_index(drop=True)
    verdicts = audit.verdicts
    return SliceInputs(items, frame, {pair_id: verdicts[pair_id] for pair_id in pair_ids})


def encode_slice(campaign: Campaign, task: SliceTask, inputs: SliceInputs) -> SliceResult:
    """The slice's records and annotation rows in the file format, with its counts and the
    answers the agreement reads."""
    options = task.options
    items, frame, verdicts = inputs
    exported = [pid for pid in task.pair_ids if in_subset(verdicts[pid], options.subset)]
    by_category = records_by_category(verdicts, exported, options.with_validation)
    annotations = annotation_table(campaign, frame, exported, options)
    counted = counted_annotations(frame, items, options.excluded_annotators)
    return SliceResult(
        records={
            category: encode_records(rows, options.fmt) for category, rows in by_category.items()
        },
        record_rows={category: len(rows) for category, rows in by_category.items()},
        annotations=encode_annotations(annotations, options.fmt, campaign),
        annotation_rows=len(annotations),
        counts=slice_counts(verdicts.values(), options.subset),
        agreement=compact_answers(counted, options.thresholds, options.annotators),
        exported=tuple(exported),
    )


def slice_counts(verdicts: Iterable[PairVerdict], subset: str) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for verdict in verdicts:
        row = counts.setdefault(
            verdict.category,
            {**dict.fromkeys(VERDICTS, 0), "total": 0, "exported": 0, "adjudicated": 0},
        )
        row[verdict.verdict] += 1
        row["adjudicated"] += verdict.adjudicated
        row["total"] += 1
        row["exported"] += in_subset(verdict, subset)
    return counts


def compact_answers(
    counted: pd.DataFrame, thresholds: Thresholds, annotators: tuple[str, ...]
) -> pd.DataFrame:
    """The answers the agreement statistics read, in as few bytes as keep them exact.

    The export holds these for the whole campaign (the bootstrap resamples every pair), so
    names and choices become categories (a byte each; their categories are fixed, so the
    slices' frames concatenate as they are) and ratings, small whole numbers, float32.
    """
    columns: dict[str, Any] = {
        "pair_id": counted["pair_id"].to_numpy(dtype=np.int64),
        "annotator": pd.Categorical(counted["annotator"], categories=list(annotators)),
    }
    for question in questions(thresholds):
        values = counted[question.column]
        if question.kind == "nominal":
            columns[question.column] = pd.Categorical(values, categories=list(question.domain))
        else:
            columns[question.column] = values.to_numpy(dtype=np.float32)
    return pd.DataFrame(columns)


# --- records -------------------------------------------------------------------------------


class PairRow(NamedTuple):
    """The fields of a Pair that an export reads, without building the model."""

    pk: int
    external_id: str
    category: str
    question: str
    narrative: str
    chosen: str
    rejected: str
    profile: Any
    rubric_aspects: Any
    extra: Any


# The JSON columns come last: both databases hand them over as text (Django reads
# PostgreSQL's jsonb as text), which orjson decodes far faster than the ORM would.
JSON_FIELDS = 3


def pair_rows(pair_ids: list[int]) -> Iterator[PairRow]:
    """The pairs, in the order given: one query by primary key (a sort in the database would
    carry every answer's text through it), on a plain cursor, as the slice is small."""
    if not pair_ids:
        return
    queryset: QuerySet[Any, Any] = (
        Pair.objects.filter(IdIn("pk", pair_ids)).order_by().values_list(*PairRow._fields)
    )
    # No annotations in the query, so the SQL's columns come in the order asked for.
    _, chunks = raw_rows(queryset, server_side=False)
    found: dict[int, PairRow] = {}
    for rows in chunks:
        for row in rows:
            decoded = [orjson.loads(text) for text in row[-JSON_FIELDS:]]
            found[row[0]] = PairRow(*row[:-JSON_FIELDS], *decoded)
    yield from (found[pair_id] for pair_id in pair_ids)


def records_by_category(
    verdicts: Mapping[int, PairVerdict], exported: list[int], with_validation: bool
) -> dict[str, list[Record]]:
    """The exported records, by category, each category's in the order given."""
    by_category: dict[str, list[Record]] = {}
    for pair in pair_rows(exported):
        record = pair_to_record(pair)
        verdict = verdicts[pair.pk]
        if with_validation:
            if "validation" in record:
                raise ExportError(
                    f"Record {pair.external_id} already has a field named 'validation'; "
                    "export it without the validation object."
                )
            record["validation"] = validation_object(verdict)
        by_category.setdefault(verdict.category, []).append(record)
    return by_category


def record_bytes(record: Any) -> bytes:
    """A record as one line of JSON: its own key order, no whitespace, UTF-8 as is, so stable
    data gives stable bytes. orjson cannot write integers beyond 64 bits, which a record's
    unknown fields may hold; the standard library writes those records instead."""
    try:
        return orjson.dumps(record)
    except orjson.JSONEncodeError:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")


def record_json(record: Any) -> str:
    return record_bytes(record).decode("utf-8")


def jsonl_bytes(rows: Iterable[Any]) -> bytes:
    return b"".join(record_bytes(row) + b"\n" for row in rows)


# What Arrow raises for values it cannot put in one typed column.
ARROW_FAILURES = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError)
# A chunk's columns: an Arrow array per key, or the Python values where Arrow found no type.
Columns = dict[str, pa.Array | list[Any]]


def chunk_columns(chunk: list[Record]) -> Columns:
    """Each key of a chunk's records as one Arrow array (the file's schema is merged from every
    chunk's types before anything is written)."""
    columns: Columns = {}
    for key in dict.fromkeys(key for row in chunk for key in row):
        values = [row.get(key) for row in chunk]
        try:
            columns[key] = pa.array(values)
        except ARROW_FAILURES:
            columns[key] = values
    return columns


def encode_records(rows: list[Record], fmt: str) -> Any:
    if fmt == "jsonl":
        return jsonl_bytes(rows)
    if fmt == "parquet":
        return chunk_columns(rows)
    return rows


# --- annotation rows -----------------------------------------------------------------------


def annotation_columns(criteria: list[str]) -> list[str]:
    return [
        "id",
        "category",
        "annotator",
        "counted",
        "revision",
        "chosen_position",
        *(f"quality_chosen_{name}" for name in criteria),
        *(f"quality_rejected_{name}" for name in criteria),
        *ANSWER_COLUMNS,
        "annotated_at",
    ]


def annotation_schema(criteria: list[str]) -> pa.Schema:
    types = {
        "counted": pa.bool_(),
        "revision": pa.int32(),
        "flagged": pa.bool_(),
        "time_on_task_ms": pa.int64(),
    }
    for name in criteria:
        types[f"quality_chosen_{name}"] = pa.int16()
        types[f"quality_rejected_{name}"] = pa.int16()
    return pa.schema(
        [(name, types.get(name, pa.string())) for name in annotation_columns(criteria)]
    )


def _plain_column(values: pd.Series, kind: str) -> pd.Series:
    """A frame column as JSON-ready Python values: whole numbers as int, missing as None,
    times as ISO 8601 UTC with microseconds (one fixed width, so the bytes never vary)."""
    missing = values.isna()
    if kind == "int":
        converted = pd.to_numeric(values).astype("Int64").astype(object)
    elif kind == "time":
        instants = pd.to_datetime(values, utc=True).dt.tz_localize(None).to_numpy("datetime64[us]")
        text = np.char.add(np.datetime_as_string(instants, unit="us"), "Z")
        converted = pd.Series(text, index=values.index, dtype=object)
    elif kind == "bool":
        converted = values.astype(bool).astype(object)
    else:
        converted = values.astype(object)
    return converted.where(~missing, None)


def annotation_table(
    campaign: Campaign, frame: pd.DataFrame, exported: list[int], options: SliceOptions
) -> pd.DataFrame:
    """One row per current annotation of an exported pair, in dataset orientation, as plain
    values.

    ``counted`` is False for annotators the audit left out (``audit.left_out``: excluded by a
    manager, gold accuracy below the campaign's minimum, or an A-share below its position-bias
    threshold). Ordered by record id, then pseudonym: the order says nothing about who answered
    first.
    """
    criteria = list(campaign.quality_criteria)
    keep = (frame["item_kind"] == CampaignItem.Kind.REGULAR) & frame["pair_id"].isin(exported)
    rows = frame[keep.to_numpy(dtype=bool)]
    annotators = [options.pseudonyms[int(user_id)] for user_id in rows["annotator_id"]]
    keys = pd.DataFrame({"id": rows["external_id"].to_numpy(), "annotator": annotators})
    # Python string order is code point order, the byte order of the data files.
    order = keys.sort_values(["id", "annotator"], kind="stable").index.to_numpy()
    rows = rows.iloc[order]
    kinds = {"revision": "int", "time_on_task_ms": "int", "flagged": "bool"}
    kinds |= {"submitted_at": "time", "annotated_at": "time"}
    kinds |= {f"quality_{side}_{c}": "int" for side in ("chosen", "rejected") for c in criteria}
    excluded = list(options.excluded_annotators)
    return pd.DataFrame(
        {
            "id": _plain_column(rows["external_id"], "str"),
            "category": _plain_column(rows["category"], "str"),
            "annotator": pd.Series(
                np.asarray(annotators, dtype=object)[order], index=rows.index, dtype=object
            ),
            "counted": (~rows["annotator"].isin(excluded)).astype(object),
            **{
                column: _plain_column(rows[column], kinds.get(column, "str"))
                for column in annotation_columns(criteria)[4:]
            },
        }
    )


def frame_rows(table: pd.DataFrame) -> Iterator[Record]:
    columns = list(table.columns)
    values = [table[column].tolist() for column in columns]
    for row in zip(*values, strict=True):
        yield dict(zip(columns, row, strict=True))


def encode_annotations(table: pd.DataFrame, fmt: str, campaign: Campaign) -> Any:
    if fmt == "jsonl":
        return jsonl_bytes(frame_rows(table))
    if fmt == "parquet":
        schema = annotation_schema(list(campaign.quality_criteria))
        return pa.Table.from_pandas(table, schema=schema, preserve_index=False)
    return list(frame_rows(table))


# --- in a worker process -------------------------------------------------------------------

_campaigns: dict[int, Campaign] = {}


def run_slice(task: SliceTask) -> SliceResult:
    """``export_slice`` in a worker process, which reads the campaign once."""
    campaign_id = task.options.campaign_id
    if campaign_id not in _campaigns:
        _campaigns[campaign_id] = Campaign.objects.get(pk=campaign_id)
    return export_slice(_campaigns[campaign_id], task)
