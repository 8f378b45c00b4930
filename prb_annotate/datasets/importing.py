"""Import preference records from files into a Dataset, all or nothing.

Formats: JSON Lines (``.jsonl``, ``.ndjson``), a JSON list (``.json``; a ``.json`` file holding
one object per line is read as JSON Lines, as Hugging Face ``datasets`` does), CSV (``profile``
and ``rubric_aspects`` cells hold JSON) and Parquet; or a folder laid out like a Hugging Face
dataset snapshot, one sub-folder per config (``Art_and_Entertainment/test-*.parquet``), where a
record without a category takes its config's name; or a folder ``datasets``' ``save_to_disk``
wrote (a Dataset, or a DatasetDict's splits: Arrow ``data-*.arrow`` files). Records shaped as
chat messages or as two responses and a winner are read through ``shapes``.

Files are streamed, and written as they are read, inside one transaction: memory does not grow
with the file, and any problem rolls everything back. Duplicate ids are found by a filter of
fixed size (``seen_ids``); a record it suspects is held back (only its id is kept) and settled
by reading the files again once, which is exact and finds where the id was first seen. Every
problem names its file, line (or Parquet row), record id and field.
"""

import io
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import transaction

from evaluation.records import export_manifest
from prb_annotate.datasets.budget import DecodeBudget, upload_budget
from prb_annotate.datasets.mapping import NO_MAPPING, ColumnMapping
from prb_annotate.datasets.pair_writers import (
    BATCH_SIZE,
    INSERTED_FIELDS,
    PairWriter,
    prefer_lz4_compression,
    writer_for,
)
from prb_annotate.datasets.provenance import display_name, sources_sha256
from prb_annotate.datasets.readers import (
    ROW_SUFFIXES,
    SUFFIXES,
    BadEntry,
    Unreadable,
    read_entries,
)
from prb_annotate.datasets.records import (
    SHAPE_KEY,
    ParsedRecord,
    RecordInvalid,
    canonical_json,
    parse_record,
)
from prb_annotate.datasets.seen_ids import SeenIds
from prb_annotate.models import Dataset, Pair

# How often an import reports the records it has read.
PROGRESS_EVERY = 10_000
# Large reads: a record of a big file is about 10 KB, more than the default buffer.
READ_BUFFER_BYTES = 1 << 20
MAX_DATASET_NAME_CHARS = 200
MAX_LISTED_PROBLEMS = 20
# Problems kept on ImportFailed.problems; the rest are only counted, so that a file that is
# wrong on every line does not fill memory.
MAX_KEPT_PROBLEMS = 1000
# Metadata files of a Hugging Face snapshot that are not records.
SNAPSHOT_METADATA = {"dataset_infos.json", "dataset_info.json", "dataset_dict.json", "state.json"}
# What an update rewrites: every written field but the keys that found the pair.
UPDATED_FIELDS = [name for name in INSERTED_FIELDS if name not in ("dataset", "external_id")]


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
    # What an upload may decode to and hold at once (shared by its files); None: unbounded.
    budget: DecodeBudget | None = None


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
    budget: DecodeBudget | None = None,
    mapping: ColumnMapping = NO_MAPPING,
    progress: Callable[[int], None] | None = None,
    before_commit: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import a file or an HF-style snapshot folder into the dataset ``dataset_name``.

    The dataset is created when missing. Records whose id is already in the dataset with the
    same content are left alone; with different content they are an error unless ``update``.
    Raises ImportFailed, having written nothing, when anything is wrong. ``budget`` bounds
    what the files decode to (an unpacked upload's); None reads a local path unbounded.
    ``mapping`` reads the files' own column names and winner labels as ours; ``progress`` is
    called with the number of records read every ``PROGRESS_EVERY`` records; ``before_commit``
    gets the report as the last thing inside the import's transaction (an import job ends
    there, and rolls the import back by raising when it was cancelled).
    """
    path = Path(path)
    sources = path_sources(path, budget)
    return import_sources(
        sources,
        dataset_name,
        source=source or display_name(path),
        source_sha256=sources_sha256(sources, folder=path.is_dir()),
        update=update,
        max_text_chars=max_text_chars,
        mapping=mapping,
        progress=progress,
        before_commit=before_commit,
    )


def import_upload(
    data: bytes | IO[bytes],
    filename: str,
    dataset_name: str,
    *,
    update: bool = False,
    max_text_chars: int | None = None,
    mapping: ColumnMapping = NO_MAPPING,
    progress: Callable[[int], None] | None = None,
    before_commit: Callable[[ImportReport], None] | None = None,
) -> ImportReport:
    """Import one uploaded file (bytes or a binary file object); the format comes from the
    suffix of ``filename``. Same rules as :func:`import_path`."""
    name = Path(filename).name
    suffix = Path(name).suffix.lower()
    if suffix not in SUFFIXES:
        raise ImportFailed([unsupported(name)])
    stream: IO[bytes] = io.BytesIO(data) if isinstance(data, bytes) else data
    upload = Source(name, suffix, lambda: rewound(stream), budget=upload_budget())
    return import_sources(
        [upload],
        dataset_name,
        source=f"upload:{name}",
        source_sha256=sources_sha256([upload], folder=False),
        update=update,
        max_text_chars=max_text_chars,
        mapping=mapping,
        progress=progress,
        before_commit=before_commit,
    )


def rewound(stream: IO[bytes]) -> AbstractContextManager[IO[bytes]]:
    """The upload from its start: a form or a size check may have read it already, and a
    duplicate id is settled by reading it again."""
    if stream.seekable():
        stream.seek(0)
    return nullcontext(stream)


def unsupported(name: str) -> Problem:
    known = ", ".join(sorted(SUFFIXES))
    return Problem(name, None, None, f"unsupported file type (expected one of {known})")


def path_sources(path: Path, budget: DecodeBudget | None = None) -> list[Source]:
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix not in SUFFIXES:
            raise ImportFailed([unsupported(path.name)])
        return [Source(path.name, suffix, opener(path), budget=budget)]
    if not path.is_dir():
        raise ImportFailed([Problem(str(path), None, None, "no such file or folder")])
    sources = []
    exported = export_record_paths(path)
    # A folder ``save_to_disk`` wrote: its sub-folders are splits (of a DatasetDict), not
    # configs, so they name no category.
    saved = (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()
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
        # The first sub-folder is the config; a config's name is its category, but in an
        # export, whose folder names are cleaned up (``uncategorized/`` for no category), the
        # manifest's category for the file.
        config = relative.parts[0] if len(relative.parts) > 1 and not saved else ""
        if exported is not None and exported.get(relative.as_posix()) is not None:
            config = str(exported[relative.as_posix()])
        sources.append(
            Source(
                relative.as_posix(),
                file.suffix.lower(),
                opener(file),
                default_category=config,
                budget=budget,
            )
        )
    if not sources:
        known = ", ".join(sorted(SUFFIXES))
        raise ImportFailed([Problem(str(path), None, None, f"no {known} files in this folder")])
    return sources


def export_record_paths(folder: Path) -> dict[str, str | None] | None:
    """The record files an export folder's manifest lists (``configs``), each with the
    category the manifest gives it (None where it gives none), or None when the folder is not
    an export of this tool."""
    manifest = export_manifest(folder)
    if manifest is None:
        return None
    configs = manifest.get("configs")
    if not isinstance(configs, list):
        return None
    return {
        str(config["path"]): manifest_category(config)
        for config in configs
        if isinstance(config, dict) and "path" in config
    }


def manifest_category(config: dict[str, Any]) -> str | None:
    category = config.get("category")
    return category if isinstance(category, str) else None


def unit_of(source: Source) -> str:
    """What a source's places count: rows of a Parquet or Arrow file, lines of the others."""
    return "row" if source.suffix in ROW_SUFFIXES else "line"


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
    mapping: ColumnMapping = NO_MAPPING,
    progress: Callable[[int], None] | None = None,
    before_commit: Callable[[ImportReport], None] | None = None,
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
                dataset,
                writer,
                is_new=created,
                update=update,
                max_text_chars=limit,
                mapping=mapping,
                progress=progress,
            )
            for item in sources:
                importer.read(item)
            report = importer.finish(source)
        report.source_sha256 = source_sha256
        changed = (dataset.source, dataset.source_sha256) != (source, source_sha256)
        if not created and (report.created or report.updated) and changed:
            dataset.source, dataset.source_sha256 = source, source_sha256
            dataset.save(update_fields=["source", "source_sha256", "updated_at"])
        if before_commit is not None:
            before_commit(report)
    return report


class Importer:
    """The state of one import: the batch waiting to be written, ids seen, problems, counts.

    Records for a new dataset go straight to the writer: none can be stored already, so there
    is nothing to look up. For an existing one they wait in batches, each compared with the
    stored rows in one query. A record whose id the filter may have seen is held back: only
    its id is kept, and ``recheck`` reads it again at the end.
    """

    def __init__(
        self,
        dataset: Dataset,
        writer: "PairWriter",
        *,
        is_new: bool,
        update: bool,
        max_text_chars: int,
        mapping: ColumnMapping = NO_MAPPING,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.dataset = dataset
        self.mapping = mapping
        self.progress = progress
        self.read_count = 0
        self.writer = writer
        self.is_new = is_new
        self.update = update
        self.max_text_chars = max_text_chars
        self.batch: list[tuple[ParsedRecord, Location]] = []
        # Duplicates within the file (or the folder): the ids met, in fixed memory, and the
        # number and ids of the records held back as possible duplicates.
        self.seen = SeenIds()
        self.held = 0
        self.suspect_ids: set[str] = set()
        self.accepted = 0
        self.sources: list[Source] = []
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
        self.sources.append(source)
        try:
            for where, entry, plain in self.entries(source):
                self.count_read()
                if isinstance(entry, BadEntry):
                    self.problem(where.problem(entry.field, entry.message, entry.record_id))
                else:
                    self.add(entry, where, self.category_of(source), plain=plain)
        except Unreadable as exc:
            where = Location(source.name, unit_of(source), exc.line)
            self.problem(where.problem(exc.field, exc.message))
        except OSError as exc:
            self.problem(Problem(source.name, None, None, f"cannot read the file: {exc}"))

    def category_of(self, source: Source) -> str:
        """The category of the source's records that name none."""
        return self.mapping.default_category or source.default_category

    def entries(self, source: Source) -> Iterator[tuple[Location, dict[str, Any] | BadEntry, bool]]:
        """The source's entries, each with where it starts."""
        unit = unit_of(source)
        with source.open() as stream:
            entries = read_entries(
                stream, source.suffix, budget=source.budget, renames=self.mapping.renames
            )
            for line, entry, plain in entries:
                yield Location(source.name, unit, line), entry, plain

    def count_read(self) -> None:
        self.read_count += 1
        if self.progress is not None and self.read_count % PROGRESS_EVERY == 0:
            self.progress(self.read_count)

    def parse(self, raw: dict[str, Any], default_category: str, *, plain: bool) -> ParsedRecord:
        """The record under the mapping; RecordInvalid when it is wrong."""
        raw, renamed = self.mapping.apply(raw)
        return parse_record(
            raw,
            max_text_chars=self.max_text_chars,
            default_category=default_category,
            plain=plain,
            spellings=self.mapping.spellings,
            renamed=renamed,
        )

    def add(
        self, raw: dict[str, Any], where: Location, default_category: str, *, plain: bool
    ) -> None:
        try:
            record = self.parse(raw, default_category, plain=plain)
        except RecordInvalid as exc:
            for item in exc.problems:
                self.problem(where.problem(item.field, item.message, exc.record_id))
            return
        if self.seen.add(record.external_id):
            self.held += 1
            self.suspect_ids.add(record.external_id)
            return
        self.accept(record, where)

    def accept(self, record: ParsedRecord, where: Location) -> None:
        """Count a record known to be the first with its id, and write it (or batch it)."""
        self.accepted += 1
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

    def recheck(self) -> None:
        """Settle the records held back, reading the files again up to the last of them.

        The same records given to a fresh filter in the same order raise the same alarms, so
        the held records are found again without keeping their places. A held record whose
        id was met earlier is a duplicate of the first record with it; any other was a false
        alarm of the filter and is accepted now. Problems of single lines were reported by
        the first reading."""
        self.seen = SeenIds()
        first: dict[str, Location] = {}
        remaining = self.held
        for where, record in self.reread():
            held = self.seen.add(record.external_id)
            if record.external_id not in self.suspect_ids:
                continue
            earlier = first.setdefault(record.external_id, where)
            if not held:
                continue
            remaining -= 1
            if earlier == where:
                self.accept(record, where)
            else:
                self.problem(duplicate(record, where, earlier))
            if not remaining:
                return
        # The files changed while they were read.
        message = f"{remaining} records could not be read again to check their ids"
        self.problem(Problem(", ".join(self.files), None, None, message))

    def reread(self) -> Iterator[tuple[Location, ParsedRecord]]:
        """Every source's valid records again, read against fresh budgets of the same limits
        (shared by the sources that shared one)."""
        budgets: dict[int, DecodeBudget] = {}
        for source in self.sources:
            budget = source.budget and budgets.setdefault(
                id(source.budget), DecodeBudget(source.budget.limit, source.budget.held)
            )
            try:
                for where, entry, plain in self.entries(replace(source, budget=budget)):
                    if isinstance(entry, BadEntry):
                        continue
                    try:
                        record = self.parse(entry, self.category_of(source), plain=plain)
                    except RecordInvalid:
                        continue
                    yield where, record
            except (Unreadable, OSError):
                continue

    def finish(self, source: str) -> ImportReport:
        self.flush()
        if self.held:
            self.recheck()
            self.flush()
        if not self.problem_count and not self.accepted:
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
