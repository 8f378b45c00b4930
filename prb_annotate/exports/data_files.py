"""The data files of an export, written from the slices' payloads as they come, in order.

JSON Lines are appended and hashed on the way in. Parquet records are spooled until every
slice's column types are known and merged into one schema; CSV records until every column is
known. Each file, once finished, gives its manifest entry (``ExportedFile``): path, rows,
sha256 and size.
"""

import hashlib
import json
import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq

from prb_annotate.datasets.readers import JSON_TEXT_METADATA
from prb_annotate.exports.slices import (
    ARROW_FAILURES,
    Columns,
    ExportError,
    Record,
    annotation_schema,
    record_json,
)
from prb_annotate.formats import spreadsheets

# Records per Parquet row group (long texts: about 20 MB a group).
ROW_GROUP_ROWS = 2000


@dataclass(frozen=True)
class ExportedFile:
    """A finished file's entry in the manifest."""

    path: str
    rows: int
    sha256: str
    bytes: int

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rows": self.rows, "sha256": self.sha256, "bytes": self.bytes}


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
        try:
            self.write()
        except ARROW_FAILURES as error:
            # A shape no column type above anticipates: a clean refusal, never a server error.
            raise ExportError(f"{self.relative} cannot be written as Parquet: {error}") from error
        self.spool.close()
        return self.written()

    def write(self) -> None:
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
    """The writer of a category's records in ``fmt``."""
    if fmt == "jsonl":
        return JsonlFile(root, relative)
    if fmt == "parquet":
        return ParquetRecordsFile(root, relative)
    return CsvFile(root, relative)


def annotations_file(root: Path, relative: str, fmt: str, criteria: list[str]) -> DataFile:
    """The writer of the annotations table in ``fmt``, whose columns are known beforehand."""
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
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


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
    (a string here, a number there), or that holds an object empty in every record, is stored
    as JSON text instead of failing the export, marked as such (``JSON_TEXT_METADATA``)."""

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
        # A JSON text column says so in its metadata, so that an import decodes it back.
        return pa.schema(
            [
                pa.field(key, found)
                if found is not None
                else pa.field(key, pa.string(), metadata=JSON_TEXT_METADATA)
                for key, found in self.writable()
            ]
        )

    def as_json(self) -> frozenset[str]:
        return frozenset(key for key, found in self.writable() if found is None)

    def writable(self) -> list[tuple[str, pa.DataType | None]]:
        """Each column's type, None for JSON text: also where the type holds a struct with no
        field (an object empty in every record), which Parquet cannot store."""
        return [
            (key, None if found is None or holds_empty_struct(found) else found)
            for key, found in self.types.items()
        ]


def holds_empty_struct(kind: pa.DataType) -> bool:
    if pa.types.is_struct(kind):
        children = [kind.field(index).type for index in range(kind.num_fields)]
        return not children or any(holds_empty_struct(child) for child in children)
    if pa.types.is_map(kind):
        return holds_empty_struct(kind.key_type) or holds_empty_struct(kind.item_type)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return holds_empty_struct(kind.value_type)
    return False


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
