"""Export a campaign's pairs with their provenance, in a layout pandas and `datasets` load as is.

::

    DIR/<config>/test.<ext>     one folder per category; records in the official schema,
                                optionally with a ``validation`` object
    DIR/annotations.<ext>       one row per current annotation, annotators pseudonymised
    DIR/manifest.json           campaign, dataset, question set, thresholds, counts, agreement,
                                every file with its row count and sha256
    DIR/README.md               dataset card whose YAML header declares the configs and files

Everything written is a function of the database state: rows are ordered by record id
(byte order, the same on SQLite and PostgreSQL), JSON keys keep the record's own order, and no
file carries the time of the export, so exporting twice gives byte-identical folders.

Pairs are read in chunks and written as they come (JSON Lines line by line, Parquet in row
groups, CSV row by row). What is held for the whole campaign is what the audit itself needs:
its annotations frame, read once for the verdicts, the agreement summary and the annotations
file. The export is written into a hidden folder beside ``DIR`` and moved into place at the
end, so a failed export never leaves a half-written folder.
"""

import csv
import hashlib
import hmac
import itertools
import json
import pickle
import re
import secrets
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple, Protocol

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings
from django.utils.text import slugify

import prb_annotate
from prb_annotate import audit
from prb_annotate.auditing import (
    PairVerdict,
    annotations_frame,
    items_frame,
    raw_rows,
    thresholds_for,
)
from prb_annotate.models import Annotation, Campaign, CampaignItem, Pair
from prb_annotate.readahead import read_ahead
from prb_annotate.records import pair_to_record

SUBSETS = ("validated", "excluded", "all")
FORMATS = ("jsonl", "parquet", "csv")
VERDICTS = ("validated", "excluded", "undecided")
SPLIT = "test"
ANNOTATIONS = "annotations"
# Records read from the database per round trip, and per Parquet row group (long texts: about
# 10 MB a group); annotation rows are short and go 10,000 at a time.
CHUNK_ROWS = 2000
ROW_GROUP_ROWS = 10_000
# Bootstrap resamples for the agreement intervals in the manifest, seeded with the campaign seed.
MANIFEST_RESAMPLES = 1000
PSEUDONYM_RULE = "hmac-sha256(secret, campaign, user id)[:16]"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)

Record = dict[str, Any]


class ExportError(Exception):
    """The export cannot be made as asked; nothing was written."""


@dataclass(frozen=True)
class ExportedFile:
    path: str
    rows: int
    sha256: str
    bytes: int

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rows": self.rows, "sha256": self.sha256, "bytes": self.bytes}


# --- names and pseudonyms ------------------------------------------------------------------


def pseudonym(campaign_id: int, user_id: int) -> str:
    """A stable pseudonym for an annotator in one campaign's exports.

    The key is derived from the server's SECRET_KEY and the campaign id, so the same annotator
    gets the same pseudonym in every export of a campaign, different ones in different
    campaigns, and nobody without the server's secret can map a pseudonym back to an account
    (user ids are small integers: an unkeyed hash of them would be reversed by enumeration).
    """
    campaign_key = hmac.new(
        settings.SECRET_KEY.encode(),
        f"prb-annotate export pseudonym, campaign {campaign_id}".encode(),
        hashlib.sha256,
    ).digest()
    return hmac.new(campaign_key, str(user_id).encode(), hashlib.sha256).hexdigest()[:16]


def config_names(categories: Iterable[str]) -> dict[str, str]:
    """Folder and config name for each category: word characters and dashes only, unique.

    ``Art_and_Entertainment`` stays as it is; ``Art & Entertainment`` becomes
    ``Art_Entertainment``. Names are given in sorted category order, so a clash (two categories
    that clean up to the same name, or one named like the annotations table) is resolved the
    same way every time, with a numeric suffix.
    """
    names: dict[str, str] = {}
    taken = {ANNOTATIONS}
    for category in sorted(set(categories)):
        base = re.sub(r"[^\w-]+", "_", category).strip("_-") or "uncategorized"
        name, suffix = base, 2
        while name.lower() in taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        taken.add(name.lower())
        names[category] = name
    return names


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
    }


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


def exported_ids(verdicts: dict[int, PairVerdict], subset: str, category: str) -> list[int]:
    """The pairs of one category to export, by record id in code point order (Python's string
    order, which is the byte order of the UTF-8 files on every database)."""
    chosen = [
        verdict
        for verdict in verdicts.values()
        if verdict.category == category and in_subset(verdict, subset)
    ]
    return [verdict.pair_id for verdict in sorted(chosen, key=lambda v: v.external_id)]


def pair_chunks(pair_ids: list[int]) -> Iterator[tuple[list[int], list[tuple[Any, ...]]]]:
    """The pairs' rows as the database gives them, CHUNK_ROWS at a time by primary key (a sort
    in the database would carry every answer's text through it), with the ids asked for."""
    for start in range(0, len(pair_ids), CHUNK_ROWS):
        wanted = pair_ids[start : start + CHUNK_ROWS]
        # No annotations in the query, so the SQL's columns come in the order asked for.
        _, chunks = raw_rows(
            Pair.objects.filter(pk__in=wanted).order_by().values_list(*PairRow._fields),
            server_side=False,
        )
        yield wanted, [row for chunk in chunks for row in chunk]


def pair_rows(pair_ids: list[int]) -> Iterator[PairRow]:
    """The pairs, in the order given; the next chunk is read while this one is decoded."""
    for wanted, rows in read_ahead(pair_chunks(pair_ids)):
        found: dict[int, PairRow] = {}
        for row in rows:
            decoded = [orjson.loads(text) for text in row[-JSON_FIELDS:]]
            found[row[0]] = PairRow(*row[:-JSON_FIELDS], *decoded)
        yield from (found[pair_id] for pair_id in wanted)


def iter_records(
    verdicts: dict[int, PairVerdict],
    subset: str,
    category: str,
    *,
    with_validation: bool = False,
) -> Iterator[Record]:
    """The exported records of one category, by record id."""
    for pair in pair_rows(exported_ids(verdicts, subset, category)):
        record = pair_to_record(pair)
        if with_validation:
            if "validation" in record:
                raise ExportError(
                    f"Record {pair.external_id} already has a field named 'validation'; "
                    "export it without the validation object."
                )
            record["validation"] = validation_object(verdicts[pair.pk])
        yield record


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
        "rubric_fit",
        "rubric_fit_position",
        "differentiator",
        "confidence",
        "flagged",
        "comment",
        "time_on_task_ms",
        "submitted_at",
        "annotated_at",
    ]


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


def annotation_slices(
    campaign: Campaign, read: "AuditRead", exported: Collection[int]
) -> Iterator[pd.DataFrame]:
    """One row per current annotation of an exported pair, in dataset orientation, taken from
    the audit's annotations frame in slices of ROW_GROUP_ROWS, each converted to plain values
    on its own (only the sort order is computed for all rows at once).

    ``counted`` is False for annotators the audit left out (gold accuracy below the campaign's
    minimum). Ordered by record id, then pseudonym: the order says nothing about who answered
    first.
    """
    criteria = list(campaign.quality_criteria)
    frame = read.frame
    keep = (frame["item_kind"] == CampaignItem.Kind.REGULAR) & frame["pair_id"].isin(exported)
    positions = np.flatnonzero(keep.to_numpy(dtype=bool))
    annotator_ids = frame["annotator_id"].to_numpy()[positions]
    names = {user_id: pseudonym(campaign.pk, int(user_id)) for user_id in set(annotator_ids)}
    keys = pd.DataFrame(
        {
            "id": frame["external_id"].to_numpy()[positions],
            "annotator": [names[user_id] for user_id in annotator_ids],
        }
    )
    # Python string order is code point order, the byte order of the data files.
    order = positions[keys.sort_values(["id", "annotator"], kind="stable").index.to_numpy()]
    kinds = {"revision": "int", "time_on_task_ms": "int", "flagged": "bool"}
    kinds |= {"submitted_at": "time", "annotated_at": "time"}
    kinds |= {f"quality_{side}_{c}": "int" for side in ("chosen", "rejected") for c in criteria}
    excluded = list(read.excluded_annotators)
    for start in range(0, len(order), ROW_GROUP_ROWS):
        rows = frame.iloc[order[start : start + ROW_GROUP_ROWS]]
        yield pd.DataFrame(
            {
                "id": _plain_column(rows["external_id"], "str"),
                "category": _plain_column(rows["category"], "str"),
                "annotator": rows["annotator_id"].map(names).astype(object),
                "counted": (~rows["annotator"].isin(excluded)).astype(object),
                **{
                    column: _plain_column(rows[column], kinds.get(column, "str"))
                    for column in annotation_columns(criteria)[4:]
                },
            }
        )


def frame_rows(slices: Iterable[pd.DataFrame]) -> Iterator[Record]:
    for table in slices:
        columns = list(table.columns)
        values = [table[column].tolist() for column in columns]
        for row in zip(*values, strict=True):
            yield dict(zip(columns, row, strict=True))


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


@dataclass
class AuditRead:
    """What the export needs from the audit, from one read of the campaign's annotations."""

    frame: pd.DataFrame
    verdicts: dict[int, PairVerdict]
    excluded_annotators: set[str]
    agreement: dict[str, Any]


def read_audit(campaign: Campaign, *, resamples: int = MANIFEST_RESAMPLES) -> AuditRead:
    """The verdict of every regular pair, the agreement summary and the annotations frame.

    The same steps as ``auditing.campaign_verdicts`` and ``auditing.campaign_audit`` (a test
    checks that the results agree), composed here so that the annotations are read from the
    database once instead of twice, and without the parts of the full report the manifest
    does not show. The bootstrap is seeded with the campaign's seed, like the audit page.
    """
    items = items_frame(campaign, lengths=False)
    frame = annotations_frame(campaign, items)
    settings_ = thresholds_for(campaign)
    excluded = audit.annotators_below_gold(frame, items, settings_.min_gold_accuracy)
    verdicts = audit.pair_verdicts(frame, settings_, items=items, excluded_annotators=excluded)
    counted = audit.counted_annotations(frame, items, excluded)
    questions = audit.agreement_by_question(
        counted, settings_, resamples=resamples, seed=campaign.seed
    )
    validity = audit.validity_summary(verdicts)
    summary = {
        "resamples": resamples,
        "seed": campaign.seed,
        "confidence": 0.95,
        "questions": [
            {
                "question": question["question"],
                "label": question["label"],
                "kind": question["kind"],
                "units": question["units"],
                "ratings": question["ratings"],
                "coefficients": {
                    coefficient["key"]: {
                        key: coefficient.get(key) for key in ("value", "ci_low", "ci_high")
                    }
                    for coefficient in question["coefficients"]
                },
            }
            for question in questions
        ],
        "validated_share": validity["overall"]["validated_share"],
        "validated_share_by_category": {
            row["category"]: row["validated_share"] for row in validity["per_category"]
        },
    }
    return AuditRead(frame, verdicts, set(excluded), audit.jsonable(summary))


# --- writing -------------------------------------------------------------------------------


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


class RowSink(Protocol):
    def write(self, rows: list[Record]) -> None: ...

    def close(self) -> None: ...


class JsonlSink:
    def __init__(self, path: Path) -> None:
        self.file = path.open("wb")

    def write(self, rows: list[Record]) -> None:
        self.file.write(b"".join(record_bytes(row) + b"\n" for row in rows))

    def close(self) -> None:
        self.file.close()


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    # Nested fields, numbers and booleans as JSON, so that they read back without guessing.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class CsvSink:
    def __init__(self, path: Path, columns: list[str]) -> None:
        self.columns = columns
        self.file = path.open("w", encoding="utf-8", newline="")
        self.writer = csv.writer(self.file, lineterminator="\n")
        self.writer.writerow(columns)

    def write(self, rows: list[Record]) -> None:
        self.writer.writerows([_csv_cell(row.get(key)) for key in self.columns] for row in rows)

    def close(self) -> None:
        self.file.close()


# What Arrow raises for values it cannot put in one typed column.
ARROW_FAILURES = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError)
# A chunk's columns: an Arrow array per key, or the Python values where Arrow found no type.
Columns = dict[str, pa.Array | list[Any]]


def chunk_columns(chunk: list[Record]) -> Columns:
    """Each key of a chunk's records as one Arrow array (converted once, kept for writing)."""
    columns: Columns = {}
    for key in dict.fromkeys(key for row in chunk for key in row):
        values = [row.get(key) for row in chunk]
        try:
            columns[key] = pa.array(values)
        except ARROW_FAILURES:
            columns[key] = values
    return columns


class ParquetSchema:
    """One Arrow type per column over every chunk of a file. A column whose records disagree
    (a string here, a number there) is stored as JSON text instead of failing the export."""

    def __init__(self) -> None:
        self.types: dict[str, pa.DataType | None] = {}

    def add(self, columns: Columns) -> None:
        for key, values in columns.items():
            known = self.types.get(key, pa.null())
            if known is None or isinstance(values, list):
                self.types[key] = None
                continue
            try:
                self.types[key] = _merge_types(known, values.type)
            except ARROW_FAILURES:
                self.types[key] = None

    def schema(self) -> pa.Schema:
        return pa.schema(
            [(key, pa.string() if found is None else found) for key, found in self.types.items()]
        )

    def as_json(self) -> frozenset[str]:
        return frozenset(key for key, found in self.types.items() if found is None)


def _merge_types(known: pa.DataType, new: pa.DataType) -> pa.DataType:
    # Arrow's permissive promotion: null widens to anything, structs gain each other's fields,
    # int widens to float. Anything else (text in one record, a number in another) raises.
    merged = pa.unify_schemas(
        [pa.schema([("v", known)]), pa.schema([("v", new)])], promote_options="permissive"
    )
    return merged.field("v").type


def final_column(
    values: pa.Array | list[Any] | None, field: pa.Field, as_json: bool, length: int
) -> pa.Array:
    """A chunk's column in the file's type: as it is, cast, or as JSON text."""
    if values is None:
        return pa.nulls(length, field.type)
    if as_json:
        python = values if isinstance(values, list) else values.to_pylist()
        return pa.array(
            [None if value is None else record_json(value) for value in python], pa.string()
        )
    assert not isinstance(values, list)  # a column Arrow could not type is stored as JSON
    if values.type == field.type:
        return values
    try:
        return values.cast(field.type)
    except ARROW_FAILURES:
        # Casts Arrow lacks (say, a struct gaining fields) go through Python values.
        return pa.array(values.to_pylist(), type=field.type)


def write_parquet(relative: str, path: Path, chunks: Iterable[list[Record]]) -> ExportedFile:
    """Each chunk becomes one row group. The chunks are converted to Arrow once and spooled
    while their types are merged, then cast to the file's schema and written."""
    schema = ParquetSchema()
    count = 0
    with tempfile.TemporaryFile(dir=path.parent) as spool:
        for chunk in chunks:
            columns = chunk_columns(chunk)
            schema.add(columns)
            pickle.dump((len(chunk), columns), spool, protocol=pickle.HIGHEST_PROTOCOL)
        final, as_json = schema.schema(), schema.as_json()
        with pq.ParquetWriter(path, final) as writer:
            for length, columns in unspooled(spool):
                arrays = [
                    final_column(columns.get(field.name), field, field.name in as_json, length)
                    for field in final
                ]
                writer.write_table(pa.Table.from_arrays(arrays, schema=final))
                count += length
    return ExportedFile(relative, count, file_sha256(path), path.stat().st_size)


def infer_csv_columns(chunks: Iterable[list[Record]]) -> list[str]:
    columns: dict[str, None] = {}
    for chunk in chunks:
        for row in chunk:
            columns.update(dict.fromkeys(row))
    return list(columns)


def chunked(rows: Iterable[Record], size: int = CHUNK_ROWS) -> Iterator[list[Record]]:
    iterator = iter(rows)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def write_table(
    root: Path,
    relative: str,
    fmt: str,
    rows: Callable[[], Iterable[Record]],
    *,
    csv_columns: list[str] | None = None,
) -> ExportedFile:
    """Write one data file from ``rows`` (a callable, called once).

    Parquet and CSV need every column (and Arrow type) before the first row is written: the
    chunks are spooled to a temporary file while they are inspected, then written from there,
    which costs far less than reading and converting the records a second time.
    """
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        return _write_chunks(relative, path, JsonlSink(path), chunked(rows()))
    if fmt == "csv" and csv_columns:
        return _write_chunks(relative, path, CsvSink(path, csv_columns), chunked(rows()))
    if fmt == "parquet":
        return write_parquet(relative, path, chunked(rows()))
    with tempfile.TemporaryFile(dir=root) as spool:
        inspected = spooled(chunked(rows()), spool)
        sink = CsvSink(path, infer_csv_columns(inspected))
        return _write_chunks(relative, path, sink, unspooled(spool))


def _write_chunks(
    relative: str, path: Path, sink: RowSink, chunks: Iterable[list[Record]]
) -> ExportedFile:
    count = 0
    try:
        for chunk in chunks:
            sink.write(chunk)
            count += len(chunk)
    finally:
        sink.close()
    return ExportedFile(relative, count, file_sha256(path), path.stat().st_size)


def spooled(chunks: Iterable[list[Record]], spool: IO[bytes]) -> Iterator[list[Record]]:
    """Each chunk, also pickled to ``spool`` (a private temporary file this export wrote)."""
    for chunk in chunks:
        pickle.dump(chunk, spool, protocol=pickle.HIGHEST_PROTOCOL)
        yield chunk


def unspooled(spool: IO[bytes]) -> Iterator[Any]:
    spool.seek(0)
    while True:
        try:
            # Safe: the file is private to this export and holds only what spooled() wrote.
            yield pickle.load(spool)  # noqa: S301
        except EOFError:
            return


def write_slices(
    root: Path,
    relative: str,
    fmt: str,
    slices: Callable[[], Iterator[pd.DataFrame]],
    schema: pa.Schema,
) -> ExportedFile:
    """Write a table with a fixed schema that comes in slices (the annotations)."""
    if fmt != "parquet":
        return write_table(
            root, relative, fmt, lambda: frame_rows(slices()), csv_columns=schema.names
        )
    path = root / relative
    rows = 0
    with pq.ParquetWriter(path, schema) as writer:
        for table in slices():
            writer.write_table(pa.Table.from_pandas(table, schema=schema, preserve_index=False))
            rows += len(table)
    return ExportedFile(relative, rows, file_sha256(path), path.stat().st_size)


# --- the export ----------------------------------------------------------------------------


def check_options(subset: str, fmt: str) -> None:
    if subset not in SUBSETS:
        raise ExportError(f"Unknown subset {subset!r}; expected one of {', '.join(SUBSETS)}.")
    if fmt not in FORMATS:
        raise ExportError(f"Unknown format {fmt!r}; expected one of {', '.join(FORMATS)}.")


def category_counts(verdicts: dict[int, PairVerdict], subset: str) -> dict[str, dict[str, int]]:
    """Pairs per category and verdict over the whole campaign, and how many are exported."""
    counts: dict[str, dict[str, int]] = {}
    for verdict in verdicts.values():
        row = counts.setdefault(
            verdict.category, {**dict.fromkeys(VERDICTS, 0), "total": 0, "exported": 0}
        )
        row[verdict.verdict] += 1
        row["total"] += 1
        row["exported"] += in_subset(verdict, subset)
    return dict(sorted(counts.items()))


def export_split(
    campaign: Campaign,
    out_dir: Path | str,
    *,
    subset: str = "validated",
    fmt: str = "jsonl",
    with_validation: bool = False,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Write the ``subset`` of the campaign's pairs to ``out_dir``; returns the manifest.

    ``out_dir`` must be missing or empty unless ``overwrite``. Raises ExportError (having
    written nothing) for a bad option or a target that is in the way.
    """
    check_options(subset, fmt)
    target = Path(out_dir)
    if target.exists() and not overwrite and (not target.is_dir() or any(target.iterdir())):
        raise ExportError(f"{target} already exists and is not empty; choose another folder.")
    if target.exists() and not target.is_dir():
        raise ExportError(f"{target} is a file, not a folder.")
    target.parent.mkdir(parents=True, exist_ok=True)
    read = read_audit(campaign)
    work = sibling_folder(target, "tmp")
    try:
        manifest = write_export(work, campaign, read, subset, fmt, with_validation)
        replace_folder(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return manifest


def sibling_folder(target: Path, label: str) -> Path:
    """A new hidden folder beside ``target`` (same file system, so moving it is a rename)."""
    folder = target.parent / f".{target.name}.{label}-{secrets.token_hex(6)}"
    folder.mkdir()
    return folder


def replace_folder(new: Path, target: Path) -> None:
    """Move the finished export into place; an old folder is removed only after the move."""
    if not target.exists():
        new.rename(target)
        return
    old = sibling_folder(target, "old")
    old.rmdir()
    target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def write_export(
    root: Path,
    campaign: Campaign,
    read: AuditRead,
    subset: str,
    fmt: str,
    with_validation: bool,
) -> dict[str, Any]:
    verdicts = read.verdicts
    counts = category_counts(verdicts, subset)
    configs = config_names(counts)
    files: list[tuple[str, str, ExportedFile]] = []
    for category, row in counts.items():
        if not row["exported"]:
            continue

        def records(category: str = category) -> Iterator[Record]:
            return iter_records(verdicts, subset, category, with_validation=with_validation)

        written = write_table(root, f"{configs[category]}/{SPLIT}.{fmt}", fmt, records)
        files.append((configs[category], category, written))

    exported = {pair_id for pair_id, verdict in verdicts.items() if in_subset(verdict, subset)}
    criteria = list(campaign.quality_criteria)
    annotations = write_slices(
        root,
        f"{ANNOTATIONS}.{fmt}",
        fmt,
        lambda: annotation_slices(campaign, read, exported),
        annotation_schema(criteria),
    )
    manifest = build_manifest(
        campaign,
        subset=subset,
        fmt=fmt,
        with_validation=with_validation,
        counts=counts,
        configs=files,
        annotations=annotations,
        agreement=read.agreement,
    )
    card = dataset_card(manifest)
    (root / "README.md").write_text(card, encoding="utf-8", newline="\n")
    manifest["card"] = {
        "path": "README.md",
        "sha256": hashlib.sha256(card.encode("utf-8")).hexdigest(),
    }
    (root / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8", newline="\n"
    )
    return manifest


def question_set(campaign: Campaign) -> dict[str, Any]:
    def values(choices: Any) -> list[str]:
        return [str(value) for value in choices.values]

    return {
        "quality": {
            "criteria": list(campaign.quality_criteria),
            "scale": [1, campaign.rating_scale_max],
            "asked_for": ["chosen", "rejected"],
        },
        "rubric_fit": values(Annotation.RubricFit),
        "differentiator": values(Annotation.Differentiator),
        "confidence": values(Annotation.Confidence),
        "flagged": [False, True],
        "comment": "free text",
    }


def thresholds(campaign: Campaign) -> dict[str, Any]:
    return {
        "quality_statistic": "median",
        "quality_threshold": campaign.quality_threshold,
        "majority_threshold": campaign.majority_threshold,
        "min_gold_accuracy": campaign.min_gold_accuracy,
        "rule": (
            "validated: k annotations, both answers reach the quality threshold on every "
            "criterion, and a majority (share above majority_threshold) names personal "
            "preference as the differentiator and prefers the dataset's chosen answer"
        ),
    }


def build_manifest(
    campaign: Campaign,
    *,
    subset: str,
    fmt: str,
    with_validation: bool,
    counts: dict[str, dict[str, int]],
    configs: list[tuple[str, str, ExportedFile]],
    annotations: ExportedFile,
    agreement: dict[str, Any],
) -> dict[str, Any]:
    dataset = campaign.dataset
    totals = {verdict: sum(row[verdict] for row in counts.values()) for verdict in VERDICTS}
    return {
        "format": "prb-annotate export",
        "format_version": 1,
        "tool": {"name": "prb-annotate", "version": prb_annotate.__version__},
        "campaign": {
            "id": campaign.pk,
            "name": campaign.name,
            "status": campaign.status,
            "created_at": campaign.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "seed": campaign.seed,
            "gold_rate": campaign.gold_rate,
        },
        "dataset": {
            "id": dataset.pk,
            "name": dataset.name,
            "source": dataset.source,
            "description": dataset.description,
        },
        "subset": subset,
        "file_format": fmt,
        "with_validation": with_validation,
        "question_set": question_set(campaign),
        "k": campaign.annotations_per_pair,
        "thresholds": thresholds(campaign),
        "counts": {
            "pairs": {**totals, "total": sum(totals.values())},
            "exported_pairs": sum(written.rows for _, _, written in configs),
            "annotations": annotations.rows,
            "by_category": counts,
        },
        "agreement": agreement,
        "pseudonym": PSEUDONYM_RULE,
        "configs": [
            {
                "config_name": name,
                "category": category,
                "split": SPLIT,
                "path": written.path,
                "rows": written.rows,
            }
            for name, category, written in configs
        ],
        "files": [written.as_dict() for _, _, written in configs] + [annotations.as_dict()],
        "exported_at": None,
        "determinism": (
            "No export time is recorded (exported_at is null): the same database state gives "
            "byte-identical files, this manifest and the dataset card included."
        ),
    }


def _yaml_string(value: str) -> str:
    # JSON strings are valid YAML scalars: quoting them this way needs no YAML library.
    return json.dumps(value, ensure_ascii=False)


def dataset_card(manifest: dict[str, Any]) -> str:
    """README.md whose YAML header declares each config and its files, as on the Hub."""
    fmt = manifest["file_format"]
    pretty_name = f"{manifest['campaign']['name']} ({manifest['subset']})"
    lines = ["---", "configs:"]
    for config in manifest["configs"]:
        lines += [
            f"- config_name: {_yaml_string(config['config_name'])}",
            "  data_files:",
            f"  - split: {config['split']}",
            f"    path: {_yaml_string(config['path'])}",
        ]
    lines += [
        f"- config_name: {ANNOTATIONS}",
        "  data_files:",
        "  - split: train",
        f"    path: {ANNOTATIONS}.{fmt}",
        f"pretty_name: {_yaml_string(pretty_name)}",
        "---",
        "",
    ]
    campaign, dataset, counts = manifest["campaign"], manifest["dataset"], manifest["counts"]
    pairs = counts["pairs"]
    lines += [
        f"# {campaign['name']}: {manifest['subset']} pairs",
        "",
        f"Exported by prb-annotate {manifest['tool']['version']} from campaign "
        f'{campaign["id"]} over dataset "{dataset["name"]}"'
        + (f" ({dataset['source']})" if dataset["source"] else "")
        + ".",
        "",
        f"Each pair was judged by k = {manifest['k']} annotators. Of {pairs['total']} pairs, "
        f"{pairs['validated']} were validated, {pairs['excluded']} excluded and "
        f"{pairs['undecided']} undecided. This export holds the **{manifest['subset']}** "
        f"subset: {counts['exported_pairs']} pairs"
        + (", each with a `validation` object" if manifest["with_validation"] else "")
        + f", and {counts['annotations']} annotations.",
        "",
        f"A pair is validated when {manifest['thresholds']['rule']}.",
        "",
        "| config | category | pairs | file |",
        "|---|---|---:|---|",
    ]
    for config in manifest["configs"]:
        lines.append(
            f"| {config['config_name']} | {config['category']} | {config['rows']} "
            f"| `{config['path']}` |"
        )
    lines += [
        f"| {ANNOTATIONS} | (all) | {counts['annotations']} | `{ANNOTATIONS}.{fmt}` |",
        "",
        "Records keep the source dataset's schema, unknown fields included. "
        "`rubric_aspects` and `narrative` describe what the user expects: they belong to the "
        "dataset, but a reward model must never see them.",
        "",
        "`annotations` has one row per annotation in dataset orientation (answers about the "
        "chosen and rejected response, `chosen_position` says where the annotator saw the "
        f"chosen one). Annotators are pseudonymised as {manifest['pseudonym']}, with a secret "
        "that stays on the server: stable across exports of this campaign, not reversible "
        "from the export.",
        "",
        "`manifest.json` lists the question set, thresholds, counts per verdict and category, "
        "the agreement summary with confidence intervals, and every file's row count and "
        "sha256.",
        "",
        "## Loading",
        "",
        "```python",
        "import pandas as pd",
    ]
    first = manifest["configs"][0]["path"] if manifest["configs"] else None
    if fmt == "jsonl":
        reader = "pd.read_json({!r}, lines=True)"
    elif fmt == "parquet":
        reader = "pd.read_parquet({!r})"
    else:
        reader = "pd.read_csv({!r})"
    if first:
        lines.append("pairs = " + reader.format(first))
    lines.append("annotations = " + reader.format(f"{ANNOTATIONS}.{fmt}"))
    lines += [
        "",
        "import datasets",
    ]
    if first:
        lines.append(
            f'split = datasets.load_dataset("path/to/this/folder", '
            f'{manifest["configs"][0]["config_name"]!r}, split="test")'
        )
    lines += ["```", ""]
    return "\n".join(lines)


# --- zip download --------------------------------------------------------------------------


def export_basename(campaign: Campaign, subset: str, fmt: str) -> str:
    return f"{slugify(campaign.name) or 'campaign'}-{campaign.pk}-{subset}-{fmt}"


def write_zip(folder: Path, file: IO[bytes], prefix: str) -> None:
    """Zip ``folder`` under ``prefix/``, in name order with fixed dates: same files, same zip."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(f"{prefix}/{path.relative_to(folder).as_posix()}", ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with path.open("rb") as source, archive.open(info, "w") as target:
                shutil.copyfileobj(source, target, 1 << 20)


def export_zip(
    campaign: Campaign, *, subset: str, fmt: str, with_validation: bool = False
) -> tuple[IO[bytes], str]:
    """The export as a zip in an anonymous temporary file (rewound), and its file name.

    The caller streams the file and closes it; it disappears when closed.
    """
    check_options(subset, fmt)
    name = export_basename(campaign, subset, fmt)
    # Handed to the caller, who closes it (a FileResponse does once it is sent).
    archive = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        with tempfile.TemporaryDirectory() as work:
            folder = Path(work) / name
            export_split(campaign, folder, subset=subset, fmt=fmt, with_validation=with_validation)
            write_zip(folder, archive, name)
    except BaseException:
        archive.close()
        raise
    archive.seek(0)
    return archive, f"{name}.zip"
