"""Readers of the supported file formats, one record at a time.

Each reader yields Entry ``(line, record, plain)``: the line where the record starts (the row
of a Parquet file) and the record as a dict, or a BadEntry for a line that is not a record,
after which reading goes on. A reader raises Unreadable when the rest of the file cannot be
read (a JSON list cut short, a corrupt Parquet file). Nothing here validates record fields:
``records`` does.

JSON Lines, the format of large files, are decoded by orjson, about twice as fast as the
standard library. The standard library stays the reference: a line orjson refuses, or whose
numbers it might read differently, is decoded by ``json`` as before, so that every file reads
to the same values and the same problems.
"""

import codecs
import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, NamedTuple

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from prb_annotate.datasets import parquet_limits
from prb_annotate.datasets.records import type_name
from prb_annotate.jsondepth import MAX_JSON_DEPTH, too_deep

JSONL_SUFFIXES = {".jsonl", ".ndjson"}
SUFFIXES = JSONL_SUFFIXES | {".json", ".csv", ".parquet"}
CSV_JSON_COLUMNS = ("profile", "rubric_aspects")
CSV_OPTIONAL_COLUMNS = ("id", "category", "narrative", *CSV_JSON_COLUMNS)
PARQUET_BATCH_ROWS = 1000
CELL_TOO_DEEP = f"the JSON in the cell nests deeper than {MAX_JSON_DEPTH} levels"


class Unreadable(Exception):
    """Stops reading one file (its structure is broken, so later lines mean nothing)."""

    def __init__(self, message: str, line: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.field = field


@dataclass(frozen=True)
class BadEntry:
    """A line that is not a record; reading goes on with the next one."""

    message: str
    field: str | None = None


class Entry(NamedTuple):
    """One record (or a BadEntry) and the line where it starts.

    ``plain`` says that the record holds nothing but what JSON text decodes to (dicts, lists,
    strings, integers, booleans and nulls) and no float: ``records`` can then encode it with
    orjson, whose output is the standard library's for such values only.
    """

    line: int
    value: "dict[str, Any] | BadEntry"
    plain: bool = False


def read_entries(
    stream: IO[bytes], suffix: str, *, max_expanded_bytes: int | None = None
) -> Iterator[Entry]:
    """The file's entries. ``max_expanded_bytes`` bounds what a compressed file (Parquet) may
    decode to (``parquet_limits.py``); None reads it whole, as a local file is."""
    if suffix in JSONL_SUFFIXES:
        return read_jsonl(stream)
    if suffix == ".json":
        return read_json(stream)
    if suffix == ".csv":
        return read_csv(stream)
    return read_parquet(stream, max_expanded_bytes)


def read_jsonl(lines: Iterable[bytes]) -> Iterator[Entry]:
    for number, line in enumerate(lines, start=1):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            # Blank lines, a byte order mark, and what only the standard library reads (NaN,
            # lone surrogates) or reports in its own words: it decides, as it always has.
            entry = decode_line(number, line)
            if entry is not None:
                yield entry
            continue
        if type(value) is not dict:
            yield Entry(number, as_record(value))
        elif is_plain(value):
            yield Entry(number, value, plain=True)
        else:
            # orjson reads an integer beyond 64 bits as a float: the standard library keeps it
            # exact, and stays the reference for every other number too.
            yield decode_line(number, line) or Entry(number, as_record(value))


def decode_line(number: int, line: bytes) -> Entry | None:
    """One line through the standard library: the entry, or None for a blank line."""
    try:
        text = line.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        return Entry(number, BadEntry(f"not valid UTF-8 (byte {exc.start + 1})"))
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return Entry(number, BadEntry(f"invalid JSON: {exc.msg} (column {exc.colno})"))
    except RecursionError:
        return Entry(number, BadEntry("JSON nested too deeply"))
    return Entry(number, as_record(value))


def is_plain(value: dict[str, Any]) -> bool:
    """Whether a record decoded by orjson holds no float. One nested too deeply to check is
    not: the standard library then decides, and may find it nested too deeply to read."""
    try:
        return not holds_float(value)
    except RecursionError:
        return False


def holds_float(value: Any) -> bool:
    """Whether a dict or list holds a float anywhere inside (exact types: orjson makes no
    subclasses, and this runs on every record)."""
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if kind is str:
            continue
        if kind is float or ((kind is dict or kind is list) and holds_float(item)):
            return True
    return False


def as_record(value: Any) -> "dict[str, Any] | BadEntry":
    if isinstance(value, dict):
        return value
    return BadEntry(f"expected a JSON object, got {type_name(value)}")


WHITESPACE = re.compile(r"[ \t\n\r]*")


def read_json(stream: IO[bytes]) -> Iterator[Entry]:
    """A JSON list, decoded one element at a time so that each gets its line number."""
    data = stream.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unreadable("not valid UTF-8", data.count(b"\n", 0, exc.start) + 1) from exc
    decoder = json.JSONDecoder()
    pos = skip_whitespace(text, 0)
    if text.startswith("{", pos):
        # JSON Lines saved as .json (as datasets writes them), or one object that is not a list.
        _, end = decode_at(decoder, text, pos)
        if skip_whitespace(text, end) == len(text) or "\n" in text[pos:end]:
            raise Unreadable("expected a JSON list of records (or one object per line)", 1)
        yield from read_jsonl(io.BytesIO(data))
        return
    if not text.startswith("[", pos):
        raise Unreadable("expected a JSON list of records", line_of(text, pos))
    line, counted = 1, 0
    pos = skip_whitespace(text, pos + 1)
    if text.startswith("]", pos):
        return
    while True:
        value, end = decode_at(decoder, text, pos)
        line += text.count("\n", counted, pos)
        counted = pos
        yield Entry(line, as_record(value))
        pos = skip_whitespace(text, end)
        if text.startswith(",", pos):
            pos = skip_whitespace(text, pos + 1)
        elif text.startswith("]", pos):
            if skip_whitespace(text, pos + 1) != len(text):
                raise Unreadable("invalid JSON: extra data after the list", line_of(text, pos))
            return
        else:
            raise Unreadable("invalid JSON: expected ',' or ']'", line_of(text, pos))


def skip_whitespace(text: str, pos: int) -> int:
    match = WHITESPACE.match(text, pos)
    return match.end() if match else pos


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def decode_at(decoder: json.JSONDecoder, text: str, pos: int) -> tuple[Any, int]:
    try:
        return decoder.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno) from exc
    except RecursionError as exc:
        raise Unreadable("JSON nested too deeply", line_of(text, pos)) from exc


def read_csv(stream: IO[bytes]) -> Iterator[Entry]:
    """CSV with a header row; ``profile`` and ``rubric_aspects`` cells are JSON, and an empty
    optional cell means the record has no such field."""
    # A profile of many posts is longer than the csv module's default cell limit (128 KiB).
    csv.field_size_limit(2**31 - 1)
    reader = csv.reader(codecs.iterdecode(stream, "utf-8-sig"))
    try:
        header = next(reader, None)
        if header is None:
            return
        for column in ("chosen", "rejected"):
            if column not in header:
                raise Unreadable(f'missing column "{column}"', 1, column)
        if "question" not in header and "prompt" not in header:
            raise Unreadable('missing column "question" (or "prompt")', 1, "question")
        while True:
            start = reader.line_num + 1
            cells = next(reader, None)
            if cells is None:
                return
            if cells:
                yield Entry(start, csv_record(header, cells))
    except csv.Error as exc:
        raise Unreadable(f"invalid CSV: {exc}", reader.line_num) from exc
    except UnicodeDecodeError as exc:
        raise Unreadable("not valid UTF-8", reader.line_num + 1) from exc


def csv_record(header: list[str], cells: list[str]) -> "dict[str, Any] | BadEntry":
    if len(cells) != len(header):
        return BadEntry(f"{len(cells)} cells where the header has {len(header)}")
    record: dict[str, Any] = {}
    for column, cell in zip(header, cells, strict=True):
        if column in CSV_OPTIONAL_COLUMNS and not cell.strip():
            continue
        if column in CSV_JSON_COLUMNS:
            try:
                value = json.loads(cell)
            except json.JSONDecodeError as exc:
                return BadEntry(f"invalid JSON in the cell: {exc.msg} (column {exc.colno})", column)
            except RecursionError:
                return BadEntry(CELL_TOO_DEEP, column)
            if too_deep(value):
                return BadEntry(CELL_TOO_DEEP, column)
            record[column] = value
        else:
            record[column] = cell
    return record


def read_parquet(stream: IO[bytes], max_expanded_bytes: int | None = None) -> Iterator[Entry]:
    try:
        if max_expanded_bytes is None:
            parquet = pq.ParquetFile(stream)
            budget = None
        else:
            parquet, budget = parquet_limits.bounded_file(stream, max_expanded_bytes)
        row = 0
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS):
            if budget is not None:
                budget.spend(batch)
            for record in batch.to_pylist():
                row += 1
                yield Entry(row, record)
    except parquet_limits.ExpandsTooFar as exc:
        raise Unreadable(str(exc)) from exc
    except (pa.ArrowException, OSError) as exc:
        raise Unreadable(f"invalid Parquet file: {exc}") from exc
