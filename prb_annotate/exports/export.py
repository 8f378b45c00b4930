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

The campaign's regular pairs are taken by record id in slices (``export_slices``): each slice
is audited and encoded on its own, in this process or, with ``workers``, in worker processes,
and its rows are appended to the files as the slices come back in order. Memory therefore does
not grow with the campaign, except for the counted answers the agreement bootstrap needs (a
few dozen bytes per annotation). The export is written into a hidden folder beside ``DIR`` and
moved into place at the end, so a failed export never leaves a half-written folder.
"""

import contextlib
import hashlib
import hmac
import json
import pickle
import re
import shutil
import tempfile
import zipfile
from array import array
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings
from django.db import connection
from django.db.models import CharField, Model, QuerySet
from django.db.models.expressions import Func
from django.utils.text import slugify

import prb_annotate
from prb_annotate import spreadsheets
from prb_annotate.audit import decisions, verdicts
from prb_annotate.audit.exclusions import left_out_annotators
from prb_annotate.audit.frames import raw_rows, thresholds_for
from prb_annotate.exports.folders import clear_abandoned, put_in_place, work_folder
from prb_annotate.exports.markdown import plain_text, source_words
from prb_annotate.exports.processes import can_share_work, ordered_map
from prb_annotate.exports.slices import (
    ARROW_FAILURES,
    SLICE_PAIRS,
    VERDICTS,
    Columns,
    ExportError,
    Record,
    SliceOptions,
    SliceResult,
    SliceTask,
    annotation_schema,
    compact_answers,
    export_slice,
    record_json,
    run_slice,
)
from prb_annotate.models import Annotation, Assignment, Campaign, CampaignItem, Pair

__all__ = [
    "ExportError",
    "ExportWriteError",
    "config_names",
    "export_split",
    "export_zip",
    "pseudonym",
]

SUBSETS = ("validated", "excluded", "all")
FORMATS = ("jsonl", "parquet", "csv")
SPLIT = "test"
ANNOTATIONS = "annotations"
# Records per Parquet row group (long texts: about 20 MB a group).
ROW_GROUP_ROWS = 2000
# Bootstrap resamples for the agreement intervals in the manifest, seeded with the campaign seed.
MANIFEST_RESAMPLES = 1000
PSEUDONYM_RULE = "hmac-sha256(secret, campaign, user id)[:16]"
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


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


# --- what to export ------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportPlan:
    """What is known before the slices: the shared options and the pairs, by record id."""

    options: SliceOptions
    pair_ids: array  # of int64
    categories: list[str]

    def tasks(self) -> Iterator[SliceTask]:
        for start in range(0, len(self.pair_ids), SLICE_PAIRS):
            yield SliceTask(self.options, tuple(self.pair_ids[start : start + SLICE_PAIRS]))


class ByteOrder(Func):
    """Text compared byte by byte, which is how Python compares str (by code point, the order
    of UTF-8 bytes): SQLite's default, and PostgreSQL's "C" collation."""

    output_field = CharField()
    template = "%(expressions)s"

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template='%(expressions)s COLLATE "C"')


def regular_pairs_by_record_id(campaign: Campaign) -> tuple[array, list[str]]:
    """The campaign's regular pairs sorted by record id, and their distinct categories.

    Both queries name the dataset, so that SQLite walks its indexes on the pairs (dataset and
    record id; dataset and category) instead of reading every pair's row, answers and all.
    """
    regular = {
        "campaign_items__campaign": campaign,
        "campaign_items__kind": CampaignItem.Kind.REGULAR,
        "dataset_id": campaign.dataset_id,
    }
    by_record_id: QuerySet[Any, Any] = (
        Pair.objects.filter(**regular).order_by(ByteOrder("external_id")).values_list("pk")
    )
    pair_ids = array("q")
    _, chunks = raw_rows(by_record_id)
    for rows in chunks:
        pair_ids.extend(row[0] for row in rows)
    categories = Pair.objects.filter(**regular).order_by().values_list("category", flat=True)
    return pair_ids, sorted(categories.distinct())


def audit_exclusions(campaign: Campaign) -> frozenset[str]:
    """Annotators out of the audit: excluded by a manager, below the minimum gold accuracy, or
    over the position-bias threshold (``exclusions.left_out_annotators``)."""
    return frozenset(left_out_annotators(campaign))


def campaign_annotators(campaign: Campaign) -> dict[int, str]:
    """Everyone who was handed an item of the campaign: id -> username."""
    return dict(
        Assignment.objects.filter(campaign=campaign)
        .order_by()
        .values_list("annotator_id", "annotator__username")
        .distinct()
    )


def analyze_if_never_analyzed(models: Iterable[type[Model]]) -> list[str]:
    """On PostgreSQL, gather planner statistics for the tables that have none; returns them.

    A slice reads its rows through indexes only if the planner knows how many rows a range
    of ids holds; with no statistics it scans whole tables, for every slice. Autovacuum
    gathers them on its own, but a server that runs without it (or a bulk load seconds ago)
    has none, and a table's first ANALYZE takes a fraction of a second.
    """
    if connection.vendor != "postgresql":
        return []
    tables = [model._meta.db_table for model in models]
    with connection.cursor() as cursor:
        # reltuples is -1 until a table is first analyzed or vacuumed (PostgreSQL 14 on).
        cursor.execute(
            "SELECT relname FROM pg_class WHERE relname = ANY(%s) AND reltuples < 0", [tables]
        )
        missing = sorted(row[0] for row in cursor.fetchall())
        for table in missing:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    return missing


def plan_export(campaign: Campaign, subset: str, fmt: str, with_validation: bool) -> ExportPlan:
    analyze_if_never_analyzed([Pair, CampaignItem, Assignment, Annotation])
    pair_ids, categories = regular_pairs_by_record_id(campaign)
    annotators = campaign_annotators(campaign)
    options = SliceOptions(
        campaign_id=campaign.pk,
        subset=subset,
        fmt=fmt,
        with_validation=with_validation,
        excluded_annotators=audit_exclusions(campaign),
        pseudonyms={user_id: pseudonym(campaign.pk, user_id) for user_id in annotators},
        annotators=tuple(sorted(annotators.values())),
        adjudications=decisions.current_adjudications(campaign),
    )
    return ExportPlan(options, pair_ids, categories)


def slice_results(campaign: Campaign, plan: ExportPlan, workers: int) -> Iterator[SliceResult]:
    """Every slice's result, in record-id order: from worker processes where they can read
    what this process sees, else computed here."""
    if workers > 1 and can_share_work():
        yield from ordered_map(run_slice, plan.tasks(), workers=workers)
    else:
        yield from (export_slice(campaign, task) for task in plan.tasks())


# --- agreement and counts ------------------------------------------------------------------


def add_counts(total: dict[str, dict[str, int]], part: dict[str, dict[str, int]]) -> None:
    for category, row in part.items():
        into = total.setdefault(category, dict.fromkeys(row, 0))
        for key, value in row.items():
            into[key] += value


def agreement_summary(
    campaign: Campaign,
    counted: pd.DataFrame,
    counts: dict[str, dict[str, int]],
    *,
    resamples: int = MANIFEST_RESAMPLES,
) -> dict[str, Any]:
    """Agreement per question with bootstrap intervals, and the validated shares.

    The same statistics as the audit page (a test checks they agree): the bootstrap is seeded
    with the campaign's seed, and shares are over decided pairs, as ``verdicts.validity_summary``
    has them.
    """
    questions = verdicts.agreement_by_question(
        counted, thresholds_for(campaign), resamples=resamples, seed=campaign.seed
    )

    def share(rows: Collection[dict[str, int]]) -> dict[str, Any]:
        validated = sum(row["validated"] for row in rows)
        decided = validated + sum(row["excluded"] for row in rows)
        return verdicts.share_with_interval(validated, decided)

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
        "validated_share": share(counts.values()),
        "validated_share_by_category": {
            category: share([row]) for category, row in sorted(counts.items())
        },
    }
    return verdicts.jsonable(summary)


def counted_answers(campaign: Campaign, parts: list[pd.DataFrame]) -> pd.DataFrame:
    if parts:
        return pd.concat(parts, ignore_index=True)
    # No regular pair at all: the same columns, empty.
    columns = [
        "pair_id",
        "annotator",
        *(q.column for q in verdicts.questions(thresholds_for(campaign))),
    ]
    return compact_answers(pd.DataFrame({column: [] for column in columns}), campaign, ())


# --- writing -------------------------------------------------------------------------------


class DataFile(Protocol):
    """A file written from the slices' payloads, in slice order."""

    def add(self, payload: Any, rows: int) -> None: ...

    def finish(self) -> ExportedFile: ...

    def close(self) -> None: ...


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while block := file.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class OutputFile:
    """Where a data file goes, and how many rows it has been given."""

    def __init__(self, root: Path, relative: str) -> None:
        self.relative, self.path = relative, root / relative
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.rows = 0

    def written(self, sha256: str | None = None) -> ExportedFile:
        """The finished file's entry in the manifest (hashed here unless ``sha256`` is known)."""
        digest = sha256 or file_sha256(self.path)
        return ExportedFile(self.relative, self.rows, digest, self.path.stat().st_size)


class JsonlFile(OutputFile):
    """JSON Lines appended as they come, hashed on the way in."""

    def __init__(self, root: Path, relative: str) -> None:
        super().__init__(root, relative)
        self.file = self.path.open("wb")
        self.digest = hashlib.sha256()

    def add(self, payload: bytes, rows: int) -> None:
        self.file.write(payload)
        self.digest.update(payload)
        self.rows += rows

    def finish(self) -> ExportedFile:
        self.file.close()
        return self.written(self.digest.hexdigest())

    def close(self) -> None:
        self.file.close()


class Spool:
    """Payloads kept in a private temporary file until the file's columns are all known."""

    def __init__(self, folder: Path) -> None:
        # Closed by close(), which the export calls whether it succeeds or fails.
        self.file = tempfile.TemporaryFile(dir=folder)  # noqa: SIM115

    def add(self, payload: Any) -> None:
        pickle.dump(payload, self.file, protocol=pickle.HIGHEST_PROTOCOL)

    def __iter__(self) -> Iterator[Any]:
        self.file.seek(0)
        while True:
            try:
                # Safe: the file is private to this export and holds only what add() wrote.
                yield pickle.load(self.file)  # noqa: S301
            except EOFError:
                return

    def close(self) -> None:
        self.file.close()


class ParquetRecordsFile(OutputFile):
    """Records as Parquet: the slices' Arrow columns are spooled while their types are merged
    into one schema, then cast to it and written in row groups of about ROW_GROUP_ROWS."""

    def __init__(self, root: Path, relative: str, row_group_rows: int = ROW_GROUP_ROWS) -> None:
        super().__init__(root, relative)
        self.spool = Spool(root)
        self.schema = ParquetSchema()
        self.row_group_rows = row_group_rows

    def add(self, payload: Columns, rows: int) -> None:
        self.schema.add(payload)
        self.spool.add((rows, payload))
        self.rows += rows

    def finish(self) -> ExportedFile:
        final, as_json = self.schema.schema(), self.schema.as_json()
        with pq.ParquetWriter(self.path, final) as writer:
            group: list[pa.Table] = []
            grouped = 0
            for length, columns in self.spool:
                arrays = [
                    final_column(columns.get(field.name), field, field.name in as_json, length)
                    for field in final
                ]
                group.append(pa.Table.from_arrays(arrays, schema=final))
                grouped += length
                if grouped >= self.row_group_rows:
                    writer.write_table(pa.concat_tables(group))
                    group, grouped = [], 0
            if group:
                writer.write_table(pa.concat_tables(group))
        self.spool.close()
        return self.written()

    def close(self) -> None:
        self.spool.close()


class ParquetTableFile(OutputFile):
    """A table with a fixed schema (the annotations): each slice's rows are one row group."""

    def __init__(self, root: Path, relative: str, schema: pa.Schema) -> None:
        super().__init__(root, relative)
        self.writer = pq.ParquetWriter(self.path, schema)

    def add(self, payload: pa.Table, rows: int) -> None:
        if rows:
            self.writer.write_table(payload)
        self.rows += rows

    def finish(self) -> ExportedFile:
        self.writer.close()
        return self.written()

    def close(self) -> None:
        self.writer.close()


class CsvFile(OutputFile):
    """Records as CSV, one column per key found in any record (in order of appearance):
    spooled until every key is known, or written at once when the columns are given."""

    def __init__(self, root: Path, relative: str, columns: list[str] | None = None) -> None:
        super().__init__(root, relative)
        self.spool = Spool(root) if columns is None else None
        self.sink = None if columns is None else CsvSink(self.path, columns)
        self.columns: dict[str, None] = {}

    def add(self, payload: list[Record], rows: int) -> None:
        if self.sink is not None:
            self.sink.write(payload)
        else:
            assert self.spool is not None
            for row in payload:
                self.columns.update(dict.fromkeys(row))
            self.spool.add(payload)
        self.rows += rows

    def finish(self) -> ExportedFile:
        if self.spool is not None:
            self.sink = CsvSink(self.path, list(self.columns))
            for payload in self.spool:
                self.sink.write(payload)
            self.spool.close()
        assert self.sink is not None
        self.sink.close()
        return self.written()

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()
        if self.sink is not None:
            self.sink.close()


def records_file(root: Path, relative: str, fmt: str) -> DataFile:
    if fmt == "jsonl":
        return JsonlFile(root, relative)
    if fmt == "parquet":
        return ParquetRecordsFile(root, relative)
    return CsvFile(root, relative)


def annotations_file(root: Path, fmt: str, criteria: list[str]) -> DataFile:
    relative = f"{ANNOTATIONS}.{fmt}"
    schema = annotation_schema(criteria)
    if fmt == "jsonl":
        return JsonlFile(root, relative)
    if fmt == "parquet":
        return ParquetTableFile(root, relative, schema)
    return CsvFile(root, relative, schema.names)


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
        self.writer = spreadsheets.writer(self.file, lineterminator="\n")
        self.writer.writerow(columns)

    def write(self, rows: list[Record]) -> None:
        self.writer.writerows([_csv_cell(row.get(key)) for key in self.columns] for row in rows)

    def close(self) -> None:
        self.file.close()


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


# --- the export ----------------------------------------------------------------------------


def check_options(subset: str, fmt: str) -> None:
    if subset not in SUBSETS:
        raise ExportError(f"Unknown subset {subset!r}; expected one of {', '.join(SUBSETS)}.")
    if fmt not in FORMATS:
        raise ExportError(f"Unknown format {fmt!r}; expected one of {', '.join(FORMATS)}.")


def export_split(
    campaign: Campaign,
    out_dir: Path | str,
    *,
    subset: str = "validated",
    fmt: str = "jsonl",
    with_validation: bool = False,
    overwrite: bool = False,
    workers: int = 1,
) -> dict[str, Any]:
    """Write the ``subset`` of the campaign's pairs to ``out_dir``; returns the manifest.

    ``out_dir`` must be missing or empty unless ``overwrite``. Raises ExportError (having
    written nothing) for a bad option, a target that is in the way, or a disk that fills up.
    Stopped at any point, even by SIGKILL, it leaves the previous export or the new one
    (``folders.py``). With ``workers`` above one, the slices are made in that many worker
    processes where they can be (not inside a transaction, whose rows they could not see: there
    they are made here); the files are the same either way.
    """
    check_options(subset, fmt)
    target = Path(out_dir)
    try:
        # First: an export stopped by force may have left the previous one aside.
        clear_abandoned(target)
    except OSError as error:
        raise ExportWriteError(cannot_write(target, error)) from error
    if target.exists() and not overwrite and (not target.is_dir() or any(target.iterdir())):
        raise ExportError(
            f"{target} already exists and is not empty; choose another folder, or replace it "
            "with --overwrite."
        )
    if target.exists() and not target.is_dir():
        raise ExportError(f"{target} is a file, not a folder.")
    plan = plan_export(campaign, subset, fmt, with_validation)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = work_folder(target)
    except OSError as error:
        raise ExportWriteError(cannot_write(target, error)) from error
    try:
        manifest = write_export(work, campaign, plan, workers)
        put_in_place(work, target)
    except OSError as error:
        # A full disk, or a file system that refuses: one line naming the target; nothing
        # of this export is left (the previous one, if any, is untouched).
        shutil.rmtree(work, ignore_errors=True)
        raise ExportWriteError(cannot_write(target, error)) from error
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return manifest


class ExportWriteError(ExportError):
    """The export was refused by the file system (a full disk, a size limit): the server's
    problem, not the request's."""


def cannot_write(target: Path, error: OSError) -> str:
    return f"Cannot write the export to {target}: {error.strerror or error}."


def write_export(root: Path, campaign: Campaign, plan: ExportPlan, workers: int) -> dict[str, Any]:
    options = plan.options
    configs = config_names(plan.categories)
    counts: dict[str, dict[str, int]] = {}
    answers: list[pd.DataFrame] = []
    files: dict[str, DataFile] = {}
    with contextlib.ExitStack() as open_files:
        annotations = annotations_file(root, options.fmt, list(campaign.quality_criteria))
        open_files.callback(annotations.close)
        for result in slice_results(campaign, plan, workers):
            for category, payload in result.records.items():
                if category not in files:
                    relative = f"{configs[category]}/{SPLIT}.{options.fmt}"
                    files[category] = records_file(root, relative, options.fmt)
                    open_files.callback(files[category].close)
                files[category].add(payload, result.record_rows[category])
            annotations.add(result.annotations, result.annotation_rows)
            add_counts(counts, result.counts)
            answers.append(result.agreement)
        written = [
            (configs[category], category, files[category].finish()) for category in sorted(files)
        ]
        annotations_written = annotations.finish()
    manifest = build_manifest(
        campaign,
        subset=options.subset,
        fmt=options.fmt,
        with_validation=options.with_validation,
        counts=dict(sorted(counts.items())),
        configs=written,
        annotations=annotations_written,
        agreement=agreement_summary(campaign, counted_answers(campaign, answers), counts),
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


ADJUDICATION_RULE = (
    "a manager's adjudication in force replaces the annotators' verdict of its pair "
    "(validation.adjudicated is true and validation.annotators_verdict keeps theirs); "
    "agreement statistics use the annotators' answers only"
)


def thresholds(campaign: Campaign) -> dict[str, Any]:
    return {
        "quality_statistic": "median",
        "quality_threshold": campaign.quality_threshold,
        "majority_threshold": campaign.majority_threshold,
        "min_gold_accuracy": campaign.min_gold_accuracy,
        "position_bias_max_p": campaign.position_bias_max_p,
        "rule": verdicts.RULE,
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
    adjudicated = sum(row.get("adjudicated", 0) for row in counts.values())
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
            "source_sha256": dataset.source_sha256,
            "description": dataset.description,
        },
        "subset": subset,
        "file_format": fmt,
        "with_validation": with_validation,
        "question_set": question_set(campaign),
        "k": campaign.annotations_per_pair,
        "thresholds": thresholds(campaign),
        "counts": {
            "pairs": {**totals, "total": sum(totals.values()), "adjudicated": adjudicated},
            "exported_pairs": sum(written.rows for _, _, written in configs),
            "annotations": annotations.rows,
            "by_category": counts,
        },
        "agreement": agreement,
        "adjudication": {
            "pairs": adjudicated,
            "rule": ADJUDICATION_RULE,
        },
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
        f"# {plain_text(campaign['name'])}: {manifest['subset']} pairs",
        "",
        f"Exported by prb-annotate {manifest['tool']['version']} from campaign "
        f'{campaign["id"]} over dataset "{plain_text(dataset["name"])}"'
        + (f" ({source_words(dataset)})" if dataset["source"] else "")
        + ".",
        "",
        f"Each pair was judged by k = {manifest['k']} annotators. Of {pairs['total']} pairs, "
        f"{pairs['validated']} were validated, {pairs['excluded']} excluded and "
        f"{pairs['undecided']} undecided. This export holds the **{manifest['subset']}** "
        f"subset: {counts['exported_pairs']} pairs"
        + (", each with a `validation` object" if manifest["with_validation"] else "")
        + f", and {counts['annotations']} annotations.",
        "",
        f"The verdict rule: {manifest['thresholds']['rule']}.",
        "",
        f"{pairs['adjudicated']} of these verdicts are a manager's adjudication, not the "
        f"annotators' verdict: {ADJUDICATION_RULE}.",
        "",
        "| config | category | pairs | file |",
        "|---|---|---:|---|",
    ]
    for config in manifest["configs"]:
        lines.append(
            f"| {config['config_name']} | {plain_text(config['category'])} | {config['rows']} "
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


def write_zip(folder: Path, file: IO[bytes]) -> None:
    """Zip what ``folder`` holds, in name order with fixed dates: same files, same zip.

    Paths are relative to the folder, with no top-level folder of their own, so that
    ``extractall("export")`` gives the layout ``export_split --out export/`` writes."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), ZIP_EPOCH)
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
            write_zip(folder, archive)
    except (OSError, ExportWriteError) as error:
        # The server's temporary space is full (or refuses): said in one line, not a 500, and
        # without the temporary folder's name, which means nothing to the person asking.
        archive.close()
        cause = error if isinstance(error, OSError) else error.__cause__
        reason = getattr(cause, "strerror", None) or cause or error
        raise ExportWriteError(f"Cannot write the export's zip on the server: {reason}.") from error
    except BaseException:
        archive.close()
        raise
    archive.seek(0)
    return archive, f"{name}.zip"
