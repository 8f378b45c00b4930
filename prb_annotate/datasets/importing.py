"""Import preference records from files into a Dataset, all or nothing.

Formats: JSON Lines (``.jsonl``, ``.ndjson``), a JSON list (``.json``; a ``.json`` file holding
one object per line is read as JSON Lines, as Hugging Face ``datasets`` does), CSV (``profile``
and ``rubric_aspects`` cells hold JSON) and Parquet; or a folder laid out like a Hugging Face
dataset snapshot, one sub-folder per config (``Art_and_Entertainment/test-*.parquet``), where a
record without a category takes its config's name.

Files are streamed, and written as they are read, inside one transaction: memory does not grow
with the file (except for the set of ids seen, which finds duplicates), and any problem rolls
everything back. Every problem names its file, line (or Parquet row), record id and field.
"""

import io
import json
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from django.conf import settings
from django.db import connection, transaction
from psycopg import Copy

from prb_annotate.datasets.provenance import display_name, sources_sha256
from prb_annotate.datasets.readers import SUFFIXES, BadEntry, Unreadable, read_entries
from prb_annotate.datasets.records import (
    SHAPE_KEY,
    ParsedRecord,
    RecordInvalid,
    canonical_json,
    parse_record,
)
from prb_annotate.models import Dataset, Pair

BATCH_SIZE = 1000
# Large reads: a record of a big file is about 10 KB, more than the default buffer.
READ_BUFFER_BYTES = 1 << 20
MAX_DATASET_NAME_CHARS = 200
MAX_LISTED_PROBLEMS = 20
# Problems kept on ImportFailed.problems; the rest are only counted, so that a file that is
# wrong on every line does not fill memory.
MAX_KEPT_PROBLEMS = 1000
# Metadata files of a Hugging Face snapshot that are not records.
# An export folder (exports/manifest.py) names its record files in this manifest.
EXPORT_MANIFEST = "manifest.json"
EXPORT_FORMAT = "prb-annotate export"
SNAPSHOT_METADATA = {"dataset_infos.json", "dataset_info.json", "dataset_dict.json", "state.json"}
# Pair columns in the order of the rows PairWriter writes.
INSERTED_FIELDS = (
    "dataset",
    "external_id",
    "category",
    "question",
    "profile",
    "rubric_aspects",
    "narrative",
    "chosen",
    "rejected",
    "extra",
    "content_hash",
)
# The types of INSERTED_FIELDS in a binary COPY. A JSON column gets the bytes of jsonb's binary
# form (a version byte, then the JSON text); as "bytea" psycopg sends them as they are.
COPY_TYPES = (
    "int8",
    "text",
    "text",
    "text",
    "bytea",
    "bytea",
    "text",
    "text",
    "text",
    "bytea",
    "text",
)
JSONB_VERSION = b"\x01"
UPDATED_FIELDS = [
    "category",
    "question",
    "profile",
    "rubric_aspects",
    "narrative",
    "chosen",
    "rejected",
    "extra",
    "content_hash",
]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the input. ``line`` counts lines of JSON and CSV files and rows of
    Parquet files (see ``unit``); it is None for a problem with a whole file."""

    file: str
    line: int | None
    field: str | None
    message: str
    record_id: str | None = None
    unit: str = "line"

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f" {self.unit} {self.line}"
        if self.record_id is not None:
            where += f' (id "{self.record_id}")'
        if self.field is not None:
            where += f', field "{self.field}"'
        return f"{where}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "unit": self.unit,
            "record_id": self.record_id,
            "field": self.field,
            "message": self.message,
        }


class ImportFailed(Exception):
    """Nothing was imported. ``problems`` holds the first problems, ``total`` counts them all."""

    def __init__(self, problems: list[Problem], total: int | None = None) -> None:
        self.problems = problems
        self.total = len(problems) if total is None else total
        lines = [f"  {problem}" for problem in problems[:MAX_LISTED_PROBLEMS]]
        if self.total > MAX_LISTED_PROBLEMS:
            lines.append(f"  ... and {self.total - MAX_LISTED_PROBLEMS} more")
        noun = "problem" if self.total == 1 else "problems"
        super().__init__(
            f"Import failed with {self.total} {noun}; nothing was imported.\n" + "\n".join(lines)
        )


@dataclass
class ImportReport:
    dataset: Dataset
    source: str
    source_sha256: str = ""
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    # Records of this import per category (created, updated and unchanged alike).
    categories: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    @property
    def summary(self) -> str:
        if not self.created and not self.updated:
            return (
                f"nothing to do: {self.unchanged} records already imported "
                f'in dataset "{self.dataset.name}"'
            )
        per_category = ", ".join(
            f"{name or '(no category)'} {count}" for name, count in sorted(self.categories.items())
        )
        return (
            f'dataset "{self.dataset.name}": {self.created} created, {self.updated} updated, '
            f"{self.unchanged} unchanged ({self.total} records: {per_category})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset.name,
            "dataset_id": self.dataset.pk,
            "source": self.source,
            "source_sha256": self.source_sha256,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "categories": dict(sorted(self.categories.items())),
            "files": self.files,
            "summary": self.summary,
        }


@dataclass(frozen=True)
class Source:
    """One file to read: its name in messages, how to open it, and the default category."""

    name: str
    suffix: str
    open: Callable[[], AbstractContextManager[IO[bytes]]]
    default_category: str = ""
    # What a compressed file may decode to (uploads: PRB_UPLOAD_MAX_EXPANDED_BYTES); None: all.
    max_expanded_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class Location:
    """Where a record starts: its file, and its line (or Parquet row)."""

    file: str
    unit: str
    line: int | None

    def problem(self, field: str | None, message: str, record_id: str | None = None) -> Problem:
        return Problem(self.file, self.line, field, message, record_id=record_id, unit=self.unit)

    def relative_to(self, other: "Location") -> str:
        """This location as seen from ``other``: "line 3", or "a.jsonl line 3" in another file."""
        place = f"{self.unit} {self.line}"
        return place if self.file == other.file else f"{self.file} {place}"


def import_path(
    path: Path,
    dataset_name: str,
    *,
    update: bool = False,
    max_text_chars: int | None = None,
    source: str | None = None,
) -> ImportReport:
    """Import a file or an HF-style snapshot folder into the dataset ``dataset_name``.

    The dataset is created when missing. Records whose id is already in the dataset with the
    same content are left alone; with different content they are an error unless ``update``.
    Raises ImportFailed, having written nothing, when anything is wrong.
    """
    path = Path(path)
    sources = path_sources(path)
    return import_sources(
        sources,
        dataset_name,
        source=source or display_name(path),
        source_sha256=sources_sha256(sources, folder=path.is_dir()),
        update=update,
        max_text_chars=max_text_chars,
    )


def import_upload(
    data: bytes | IO[bytes],
    filename: str,
    dataset_name: str,
    *,
    update: bool = False,
    max_text_chars: int | None = None,
) -> ImportReport:
    """Import one uploaded file (bytes or a binary file object); the format comes from the
    suffix of ``filename``. Same rules as :func:`import_path`."""
    name = Path(filename).name
    suffix = Path(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise ImportFailed([unsupported(name)])
    stream: IO[bytes] = io.BytesIO(data) if isinstance(data, bytes) else data
    if stream.seekable():
        # A form or a size check may have read the upload already.
        stream.seek(0)
    limit = settings.PRB_UPLOAD_MAX_EXPANDED_BYTES
    upload = Source(name, suffix, lambda: nullcontext(stream), max_expanded_bytes=limit)
    return import_sources(
        [upload],
        dataset_name,
        source=f"upload:{name}",
        source_sha256=sources_sha256([upload], folder=False),
        update=update,
        max_text_chars=max_text_chars,
    )


def unsupported(name: str) -> Problem:
    known = ", ".join(sorted(SUFFIXES))
    return Problem(name, None, None, f"unsupported file type (expected one of {known})")


def path_sources(path: Path) -> list[Source]:
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix not in SUFFIXES:
            raise ImportFailed([unsupported(path.name)])
        return [Source(path.name, suffix, opener(path))]
    if not path.is_dir():
        raise ImportFailed([Problem(str(path), None, None, "no such file or folder")])
    sources = []
    exported = export_record_paths(path)
    for file in sorted(path.rglob("*")):
        relative = file.relative_to(path)
        if (
            not file.is_file()
            or file.suffix.lower() not in SUFFIXES
            or file.name in SNAPSHOT_METADATA
            # Hidden folders hold caches (.cache/huggingface of a snapshot download), not data.
            or any(part.startswith(".") for part in relative.parts)
            # An export's annotations and manifest are not pairs.
            or (exported is not None and relative.as_posix() not in exported)
        ):
            continue
        # The first sub-folder is the config; a config's name is its category.
        config = relative.parts[0] if len(relative.parts) > 1 else ""
        sources.append(
            Source(relative.as_posix(), file.suffix.lower(), opener(file), default_category=config)
        )
    if not sources:
        known = ", ".join(sorted(SUFFIXES))
        raise ImportFailed([Problem(str(path), None, None, f"no {known} files in this folder")])
    return sources


def export_record_paths(folder: Path) -> set[str] | None:
    """The record files an export folder's manifest lists (``configs``), or None when the
    folder is not an export of this tool."""
    manifest_path = folder / EXPORT_MANIFEST
    if not manifest_path.is_file():
        return None
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
        return None
    configs = manifest.get("configs")
    if not isinstance(configs, list):
        return None
    return {
        str(config["path"]) for config in configs if isinstance(config, dict) and "path" in config
    }


def opener(file: Path) -> Callable[[], IO[bytes]]:
    return lambda: file.open("rb", buffering=READ_BUFFER_BYTES)


def import_sources(
    sources: list[Source],
    dataset_name: str,
    *,
    source: str,
    source_sha256: str,
    update: bool,
    max_text_chars: int | None,
) -> ImportReport:
    name = dataset_name.strip()
    if not name or len(name) > MAX_DATASET_NAME_CHARS:
        message = f"a dataset name needs 1 to {MAX_DATASET_NAME_CHARS} characters"
        raise ImportFailed([Problem(sources[0].name, None, "dataset", message)])
    limit = settings.PRB_MAX_TEXT_CHARS if max_text_chars is None else max_text_chars
    with transaction.atomic():
        provenance = {"source": source, "source_sha256": source_sha256}
        dataset, created = Dataset.objects.get_or_create(name=name, defaults=provenance)
        # Two imports into one dataset would both see an id as new and one would fail on the
        # unique constraint; the row lock makes the second wait and then see the first's rows.
        # NO KEY: rows that only reference the dataset (a new campaign) need not wait.
        dataset = Dataset.objects.select_for_update(no_key=True).get(pk=dataset.pk)
        prefer_lz4_compression()
        with writer_for(dataset) as writer:
            importer = Importer(
                dataset, writer, is_new=created, update=update, max_text_chars=limit
            )
            for item in sources:
                importer.read(item)
            report = importer.finish(source)
        report.source_sha256 = source_sha256
        changed = (dataset.source, dataset.source_sha256) != (source, source_sha256)
        if not created and (report.created or report.updated) and changed:
            dataset.source, dataset.source_sha256 = source, source_sha256
            dataset.save(update_fields=["source", "source_sha256", "updated_at"])
    return report


def prefer_lz4_compression() -> None:
    """On PostgreSQL, compress this transaction's large values (the profiles) with LZ4 instead
    of the default pglz: the server then spends about half the CPU on an import, and reads
    them back faster. Values read the same either way; a server built without LZ4 (or older
    than PostgreSQL 14, which lacks the setting) keeps its default."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
        row = cursor.fetchone()
        if row is not None and row[0]:
            cursor.execute("SET LOCAL default_toast_compression = 'lz4'")


class Importer:
    """The state of one import: the batch waiting to be written, ids seen, problems, counts.

    Records for a new dataset go straight to the writer: none can be stored already, so there
    is nothing to look up. For an existing one they wait in batches, each compared with the
    stored rows in one query.
    """

    def __init__(
        self,
        dataset: Dataset,
        writer: "PairWriter",
        *,
        is_new: bool,
        update: bool,
        max_text_chars: int,
    ) -> None:
        self.dataset = dataset
        self.writer = writer
        self.is_new = is_new
        self.update = update
        self.max_text_chars = max_text_chars
        self.batch: list[tuple[ParsedRecord, Location]] = []
        # id -> where it was first seen, for duplicates within the file (or the folder).
        self.seen: dict[str, Location] = {}
        self.problems: list[Problem] = []
        self.problem_count = 0
        self.counts = Counter[str]()
        self.categories = Counter[str]()
        self.files: list[str] = []

    def problem(self, problem: Problem) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_KEPT_PROBLEMS:
            self.problems.append(problem)

    def read(self, source: Source) -> None:
        self.files.append(source.name)
        unit = "row" if source.suffix == ".parquet" else "line"
        try:
            with source.open() as stream:
                entries = read_entries(
                    stream, source.suffix, max_expanded_bytes=source.max_expanded_bytes
                )
                for line, entry, plain in entries:
                    where = Location(source.name, unit, line)
                    if isinstance(entry, BadEntry):
                        self.problem(where.problem(entry.field, entry.message))
                    else:
                        self.add(entry, where, source.default_category, plain=plain)
        except Unreadable as exc:
            self.problem(Location(source.name, unit, exc.line).problem(exc.field, exc.message))
        except OSError as exc:
            self.problem(Problem(source.name, None, None, f"cannot read the file: {exc}"))

    def add(
        self, raw: dict[str, Any], where: Location, default_category: str, *, plain: bool
    ) -> None:
        try:
            record = parse_record(
                raw,
                max_text_chars=self.max_text_chars,
                default_category=default_category,
                plain=plain,
            )
        except RecordInvalid as exc:
            for item in exc.problems:
                self.problem(where.problem(item.field, item.message, exc.record_id))
            return
        first = self.seen.get(record.external_id)
        if first is not None:
            self.problem(duplicate(record, where, first))
            return
        self.seen[record.external_id] = where
        self.categories[record.category] += 1
        if self.is_new:
            # Once anything is wrong the transaction will roll back: keep reading to report
            # every problem, but write no more.
            if not self.problem_count:
                self.writer.add(record)
                self.counts["created"] += 1
            return
        self.batch.append((record, where))
        if len(self.batch) >= BATCH_SIZE:
            self.flush()

    def flush(self) -> None:
        batch, self.batch = self.batch, []
        stored: dict[str, str] = {}
        if batch:
            ids = [record.external_id for record, _ in batch]
            stored = dict(
                Pair.objects.filter(dataset=self.dataset, external_id__in=ids).values_list(
                    "external_id", "content_hash"
                )
            )
        new, changed, conflicts = [], [], []
        for record, where in batch:
            stored_hash = stored.get(record.external_id)
            if stored_hash is None:
                new.append(record)
            elif stored_hash == record.content_hash:
                self.counts["unchanged"] += 1
            elif self.update:
                changed.append(record)
            else:
                conflicts.append((record, where))
        if conflicts:
            self.report_conflicts(conflicts)
        # Once anything is wrong the transaction will roll back: keep reading to report every
        # problem, but write no more.
        if self.problem_count:
            return
        for record in new:
            self.writer.add(record)
        # Written before the next batch's query (PostgreSQL runs nothing else during a COPY).
        self.writer.flush()
        self.counts["created"] += len(new)
        if changed:
            self.write_changes(changed)

    def write_changes(self, changed: list[ParsedRecord]) -> None:
        ids = [record.external_id for record in changed]
        pks = dict(
            Pair.objects.filter(dataset=self.dataset, external_id__in=ids).values_list(
                "external_id", "pk"
            )
        )
        pairs = []
        for record in changed:
            pair = record.to_pair(self.dataset)
            pair.pk = pks[record.external_id]
            pairs.append(pair)
        Pair.objects.bulk_update(pairs, UPDATED_FIELDS)
        self.counts["updated"] += len(changed)

    def report_conflicts(self, conflicts: list[tuple[ParsedRecord, Location]]) -> None:
        ids = [record.external_id for record, _ in conflicts]
        stored = {
            pair.external_id: pair
            for pair in Pair.objects.filter(dataset=self.dataset, external_id__in=ids)
        }
        for record, where in conflicts:
            fields = changed_fields(record, stored[record.external_id])
            what = f"{', '.join(fields)} differ" if fields else "the fields present differ"
            message = (
                f'already in dataset "{self.dataset.name}" with different content ({what}); '
                "use --update to replace it"
            )
            field_name = fields[0] if len(fields) == 1 else "id"
            self.problem(where.problem(field_name, message, record.external_id))

    def finish(self, source: str) -> ImportReport:
        self.flush()
        if not self.problem_count and not self.seen:
            names = ", ".join(self.files)
            self.problem(Problem(names, None, None, "no records found"))
        if self.problem_count:
            # Conflicts with stored rows are found a batch later than problems of single lines.
            order = {name: index for index, name in enumerate(self.files)}
            self.problems.sort(key=lambda item: (order.get(item.file, len(order)), item.line or 0))
            raise ImportFailed(self.problems, self.problem_count)
        return ImportReport(
            dataset=self.dataset,
            source=source,
            created=self.counts["created"],
            updated=self.counts["updated"],
            unchanged=self.counts["unchanged"],
            categories=dict(self.categories),
            files=self.files,
        )


def writer_for(dataset: Dataset) -> "PairWriter":
    if connection.vendor == "postgresql":
        return CopyWriter(dataset)
    return PairWriter(dataset)


class PairWriter:
    """Inserts new pairs, in batches of one prepared INSERT run many times.

    Not bulk_create: with records of ~10 KB it spends most of an import preparing rows in
    Python (on PostgreSQL, quoting its UNNEST arrays of text) and encodes each JSON column
    again, while these statements take the JSON text already made for the content hash. The
    import is then three to five times faster on both databases (bench/import_bench.py).

    A context manager: rows still waiting are written at the end, and dropped on an error
    (the transaction then rolls back anyway).
    """

    def __init__(self, dataset: Dataset) -> None:
        self.dataset_id = dataset.pk
        self.rows: list[tuple[Any, ...]] = []
        quote = connection.ops.quote_name
        column_of = {field.name: field.column for field in Pair._meta.concrete_fields}
        self.table = quote(Pair._meta.db_table)
        self.columns = ", ".join(quote(column_of[name]) for name in INSERTED_FIELDS)

    def __enter__(self) -> "PairWriter":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc is None:
            self.flush()

    def json_value(self, text: bytes) -> Any:
        """A JSON column's value as this writer sends it: text for a parameter."""
        return text.decode("ascii")

    def row(self, record: ParsedRecord) -> tuple[Any, ...]:
        """The values of INSERTED_FIELDS for one record."""
        json_text = record.json_text
        return (
            self.dataset_id,
            record.external_id,
            record.category,
            record.question,
            self.json_value(json_text["profile"]),
            self.json_value(json_text["rubric_aspects"]),
            record.narrative,
            record.chosen,
            record.rejected,
            self.json_value(json_text["extra"]),
            record.content_hash,
        )

    def add(self, record: ParsedRecord) -> None:
        self.rows.append(self.row(record))
        if len(self.rows) >= BATCH_SIZE:
            self.flush()

    def flush(self) -> None:
        """Write the rows added so far."""
        if not self.rows:
            return
        placeholders = ", ".join(["%s"] * len(INSERTED_FIELDS))
        sql = f"INSERT INTO {self.table} ({self.columns}) VALUES ({placeholders})"  # noqa: S608
        with connection.cursor() as cursor:
            cursor.executemany(sql, self.rows)
        self.rows = []


class CopyWriter(PairWriter):
    """Inserts new pairs on PostgreSQL with one binary COPY, kept open from one row to the
    next until something else needs the connection.

    The server then stores rows (parsing jsonb, compressing, indexing: more work than the
    client's) while the client reads the next ones, on another core. Binary, because the
    server reads that format about a fifth faster than text, and the JSON text goes out as
    it is, with no escaping.
    """

    def __init__(self, dataset: Dataset) -> None:
        super().__init__(dataset)
        self.stack = ExitStack()
        self.copy: Copy | None = None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # An error ends the COPY by cancelling it.
        self.copy = None
        self.stack.__exit__(exc_type, exc, traceback)

    def json_value(self, text: bytes) -> Any:
        # Binary jsonb: a version byte, then the JSON text.
        return JSONB_VERSION + text

    def add(self, record: ParsedRecord) -> None:
        (self.copy or self.start()).write_row(self.row(record))

    def start(self) -> Copy:
        cursor = self.stack.enter_context(connection.cursor())
        sql = f"COPY {self.table} ({self.columns}) FROM STDIN (FORMAT BINARY)"
        self.copy = self.stack.enter_context(cursor.cursor.copy(sql))
        self.copy.set_types(COPY_TYPES)
        return self.copy

    def flush(self) -> None:
        """End the COPY, so that the connection can run other statements."""
        self.copy = None
        self.stack.close()


def duplicate(record: ParsedRecord, where: Location, first: Location) -> Problem:
    place = first.relative_to(where)
    if "id" in record.extra.get(SHAPE_KEY, {}).get("absent", []):
        message = f"same content as {place} (records without an id are named by their content)"
    else:
        message = f"duplicate id, first seen on {place}"
    return where.problem("id", message, record.external_id)


def changed_fields(record: ParsedRecord, pair: Pair) -> list[str]:
    """Names of the fields whose stored value differs from the record's, for the message."""
    stored = {
        "question": pair.question,
        "profile": pair.profile,
        "rubric_aspects": pair.rubric_aspects,
        "narrative": pair.narrative,
        "category": pair.category,
        "chosen": pair.chosen,
        "rejected": pair.rejected,
        **{key: value for key, value in pair.extra.items() if key != SHAPE_KEY},
    }
    new = {key: value for key, value in record.content().items() if key != "extra"}
    new.update((key, value) for key, value in record.extra.items() if key != SHAPE_KEY)
    names = [
        name
        for name in {**stored, **new}
        if name not in stored
        or name not in new
        or canonical_json(stored[name]) != canonical_json(new[name])
    ]
    return [record.question_key if name == "question" else name for name in names]
