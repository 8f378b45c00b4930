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
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any, NamedTuple

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from django.utils.translation import gettext

from prb_annotate.datasets import parquet_limits
from prb_annotate.datasets.budget import DecodeBudget, OverBudget, bounded
from prb_annotate.datasets.records import type_name
from prb_annotate.security.jsondepth import MAX_JSON_DEPTH, too_deep

JSONL_SUFFIXES = {".jsonl", ".ndjson"}
# ``.arrow``: the Arrow IPC stream files ``datasets``' ``save_to_disk`` writes (``data-*.arrow``).
ROW_SUFFIXES = {".parquet", ".arrow"}
SUFFIXES = JSONL_SUFFIXES | ROW_SUFFIXES | {".json", ".csv"}
CSV_JSON_COLUMNS = ("profile", "rubric_aspects")
CSV_OPTIONAL_COLUMNS = ("id", "category", "narrative", *CSV_JSON_COLUMNS)
PARQUET_BATCH_ROWS = 1000
CELL_TOO_DEEP = f"the JSON in the cell nests deeper than {MAX_JSON_DEPTH} levels"
# Marks a Parquet column of JSON text that stands for other values (an export writes a column
# whose records disagree in type that way): the reader decodes it back.
JSON_TEXT_METADATA = {b"prb_annotate.encoding": b"json"}


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
    record_id: str | None = None


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
    stream: IO[bytes],
    suffix: str,
    *,
    budget: DecodeBudget | None = None,
    renames: Mapping[str, str] | None = None,
) -> Iterator[Entry]:
    """The file's entries. ``budget`` bounds what an upload decodes to and holds at once
    (``budget.py``); None reads the file unbounded, as a local file is. ``renames`` (a
    column mapping's, the file's names -> ours) tells a CSV reader which columns are which;
    records keep the file's names, the importer renames them."""
    if suffix in JSONL_SUFFIXES:
        return within_budget(read_jsonl(bounded(stream, budget)))
    if suffix == ".json":
        return read_json(stream, budget)
    if suffix == ".csv":
        return within_budget(read_csv(bounded(stream, budget), renames or {}))
    if suffix == ".arrow":
        return read_arrow(stream, budget)
    return read_parquet(stream, budget)


def within_budget(entries: Iterator[Entry]) -> Iterator[Entry]:
    """A line-by-line reader's entries; past the budget, Unreadable at the line after the
    last one read (the line that would not fit)."""
    line = 0
    try:
        for entry in entries:
            line = entry.line
            yield entry
    except OverBudget as exc:
        raise Unreadable(str(exc), line + 1) from exc


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
        value, has_long_integer = loads_checked(text)
    except json.JSONDecodeError as exc:
        return Entry(number, BadEntry(f"invalid JSON: {exc.msg} (column {exc.colno})"))
    except RecursionError:
        return Entry(number, BadEntry("JSON nested too deeply"))
    if has_long_integer:
        return Entry(number, long_integer_entry(value))
    return Entry(number, as_record(value))


def loads_checked(text: str) -> tuple[Any, bool]:
    """``json.loads``, but where an integer is longer than Python converts (``int`` raises
    ValueError past ``sys.get_int_max_str_digits()``), the value read with a LongInteger in
    its place, and True. Raises what ``json.loads`` raises for anything else."""
    try:
        return json.loads(text), False
    except json.JSONDecodeError:
        raise
    except ValueError:
        # The only other ValueError json raises: an integer longer than Python converts.
        return json.loads(text, parse_int=checked_int), True


class LongInteger(NamedTuple):
    """Stands in for an integer literal longer than Python converts (``digits`` long)."""

    digits: int


def checked_int(literal: str) -> "int | LongInteger":
    """An integer literal as json reads it, or a LongInteger where ``int`` refuses it."""
    try:
        return int(literal)
    except ValueError:
        return LongInteger(len(literal.lstrip("-")))


LENIENT_DECODER = json.JSONDecoder(parse_int=checked_int)


def long_integer_entry(value: Any) -> BadEntry:
    """The problem of a value decoded with ``checked_int`` that holds a LongInteger: the
    record's field that holds it (its path inside the field in the message), and the record's
    id where it has one."""
    path, digits = long_integer_path(value)
    field = path[0][1:] if path and path[0].startswith(".") else None
    where = "".join(path[1:]) if field else "".join(path)
    record_id = value.get("id") if isinstance(value, dict) else None
    return BadEntry(
        long_integer_message(digits, where),
        field,
        str(record_id) if isinstance(record_id, str | int) else None,
    )


def long_integer_message(digits: int, where: str = "") -> str:
    message = gettext("an integer of %(digits)d digits; at most %(limit)d digits can be read") % {
        "digits": digits,
        "limit": sys.get_int_max_str_digits(),
    }
    return f"{where.lstrip('.')}: {message}" if where else message


def long_integer_path(value: Any) -> tuple[list[str], int]:
    """Where the first LongInteger inside ``value`` is (``[".profile", "[2]", ".score"]``: the
    record's field, then the steps inside it) and its number of digits (0: none)."""
    if isinstance(value, LongInteger):
        return [], value.digits
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(item, LongInteger | dict | list):
            found = long_integer_path(item)
            if found[1]:
                step = f".{key}" if isinstance(value, dict) else f"[{key}]"
                return [step, *found[0]], found[1]
    return [], 0


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


def read_json(stream: IO[bytes], budget: DecodeBudget | None = None) -> Iterator[Entry]:
    """A JSON list, decoded one element at a time so that each gets its line number. The
    file is read whole: an upload's may be at most what its budget holds at once."""
    try:
        data = stream.read() if budget is None else budget.read_whole(stream)
    except OverBudget as exc:
        raise Unreadable(str(exc)) from exc
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
        yield Entry(line, value if isinstance(value, BadEntry) else as_record(value))
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
    """The value at ``pos`` and where it ends; a value holding an integer too long to read is
    a BadEntry (the list goes on after it)."""
    try:
        return decoder.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno) from exc
    except RecursionError as exc:
        raise Unreadable("JSON nested too deeply", line_of(text, pos)) from exc
    except ValueError:
        # An integer longer than Python converts: read again with it stood in for (whatever
        # else is wrong further on is then raised as above).
        value, end = decode_at(LENIENT_DECODER, text, pos)
        return long_integer_entry(value), end


def read_csv(stream: IO[bytes], renames: Mapping[str, str]) -> Iterator[Entry]:
    """CSV with a header row; ``profile`` and ``rubric_aspects`` cells are JSON, and an empty
    optional cell means the record has no such field. Every missing column is named at once."""
    rows = csv_lines(stream)
    first = next(rows, None)
    if first is None:
        return
    header = first[1]
    ours = [renames.get(column, column) for column in header]
    missing = missing_columns(ours, renames)
    if len(missing) == 1:
        raise Unreadable(f"missing column {missing[0]}", 1, missing[0].split('"')[1])
    if missing:
        raise Unreadable(f"missing columns {', '.join(missing)}", 1)
    for start, cells in rows:
        if cells:
            yield Entry(start, csv_record(header, ours, cells))


def csv_lines(
    stream: IO[bytes], *, over_budget_here: bool = False
) -> Iterator[tuple[int, list[str]]]:
    """Every row of a CSV file (UTF-8, a byte-order mark allowed), empty ones too, with the
    line it starts on. Unreadable at its line for what the csv module or the decoder refuses;
    with ``over_budget_here`` also for a stream past its budget, which otherwise passes
    through as OverBudget for the caller to place."""
    # A profile of many posts is longer than the csv module's default cell limit (128 KiB).
    csv.field_size_limit(2**31 - 1)
    reader = csv.reader(codecs.iterdecode(stream, "utf-8-sig"))
    try:
        while True:
            start = reader.line_num + 1
            cells = next(reader, None)
            if cells is None:
                return
            yield start, cells
    except csv.Error as exc:
        raise Unreadable(f"invalid CSV: {exc}", reader.line_num) from exc
    except OverBudget as exc:
        if not over_budget_here:
            raise
        raise Unreadable(str(exc), reader.line_num + 1) from exc
    except UnicodeDecodeError as exc:
        raise Unreadable("not valid UTF-8", reader.line_num + 1) from exc


def missing_columns(header: list[str], renames: Mapping[str, str]) -> list[str]:
    """The required columns a header (in our names) lacks, each as the file should name it:
    chosen and rejected, or two responses and a winner, and a question."""
    theirs = {ours: column for column, ours in renames.items()}
    if "response_a" in header or "response_b" in header:
        required: list[tuple[str, ...]] = [("response_a",), ("response_b",), ("winner", "label")]
    else:
        required = [("chosen",), ("rejected",)]
    required.append(("question", "prompt"))
    missing = []
    for names in required:
        if not any(name in header for name in names):
            spelled = [f'"{theirs.get(name, name)}"' for name in names]
            missing.append(spelled[0] + (f" (or {spelled[1]})" if len(spelled) > 1 else ""))
    return missing


def csv_record(header: list[str], ours: list[str], cells: list[str]) -> "dict[str, Any] | BadEntry":
    """A row under the file's column names; ``ours`` says which of our fields each is."""
    if len(cells) != len(header):
        return BadEntry(f"{len(cells)} cells where the header has {len(header)}")
    record_id = cells[ours.index("id")] if "id" in ours else None
    record: dict[str, Any] = {}
    for column, field, cell in zip(header, ours, cells, strict=True):
        if field in CSV_OPTIONAL_COLUMNS and not cell.strip():
            continue
        if field in CSV_JSON_COLUMNS:
            value = json_cell(cell, column, record_id or None, invalid="invalid JSON in the cell")
            if isinstance(value, BadEntry):
                return value
            record[column] = value
        else:
            record[column] = cell
    return record


def read_parquet(stream: IO[bytes], budget: DecodeBudget | None = None) -> Iterator[Entry]:
    def batches() -> Iterable[pa.RecordBatch]:
        if budget is None:
            parquet = pq.ParquetFile(stream)
        else:
            parquet = parquet_limits.bounded_file(stream, budget)
        return parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS)

    return batch_entries(batches, budget, "Parquet")


def read_arrow(stream: IO[bytes], budget: DecodeBudget | None = None) -> Iterator[Entry]:
    """An Arrow IPC file, one record batch at a time: the stream format ``save_to_disk``
    writes, or the random-access file format, told apart by the file's magic bytes."""

    def batches() -> Iterable[pa.RecordBatch]:
        head = stream.read(6)
        if stream.seekable():
            stream.seek(0)
            source: Any = stream
        else:
            source = pa.PythonFile(io.BufferedReader(Rewound(head, stream)), mode="r")
        opened = pa.ipc.open_file if head == b"ARROW1" else pa.ipc.open_stream
        reader = opened(source)
        if isinstance(reader, pa.ipc.RecordBatchFileReader):
            return (reader.get_batch(index) for index in range(reader.num_record_batches))
        return iter(reader)

    return batch_entries(batches, budget, "Arrow")


def batch_entries(
    batches: Callable[[], Iterable[pa.RecordBatch]], budget: DecodeBudget | None, kind: str
) -> Iterator[Entry]:
    """The records of the batches ``batches()`` opens, numbered from 1, each batch spent
    against ``budget``; a file that cannot be decoded, or that runs over the budget, is
    ``Unreadable`` (the message names the ``kind`` of file)."""
    try:
        row = 0
        for batch in batches():
            if budget is not None:
                parquet_limits.spend(budget, batch)
            json_columns = json_text_columns(batch.schema)
            for record in batch.to_pylist():
                row += 1
                yield Entry(row, decode_json_columns(record, json_columns))
    except OverBudget as exc:
        raise Unreadable(str(exc)) from exc
    except (pa.ArrowException, OSError) as exc:
        raise Unreadable(f"invalid {kind} file: {exc}") from exc


def json_text_columns(schema: pa.Schema) -> list[str]:
    return [
        field.name
        for field in schema
        if field.metadata and JSON_TEXT_METADATA.items() <= field.metadata.items()
    ]


def decode_json_columns(record: dict[str, Any], columns: list[str]) -> "dict[str, Any] | BadEntry":
    """The record with its JSON text columns decoded back (a null stays null); a text that
    cannot be decoded is a BadEntry naming its column."""
    for column in columns:
        text = record.get(column)
        if not isinstance(text, str):
            continue
        value = json_cell(text, column, None, invalid="invalid JSON")
        if isinstance(value, BadEntry):
            return value
        record[column] = value
    return record


def json_cell(text: str, column: str, record_id: str | None, *, invalid: str) -> Any:
    """The value of a cell or column holding JSON text, or a BadEntry naming ``column``: text
    that is not JSON, too deep, or holding an integer too long to read."""
    try:
        value, has_long_integer = loads_checked(text)
    except json.JSONDecodeError as exc:
        return BadEntry(f"{invalid}: {exc.msg} (column {exc.colno})", column)
    except RecursionError:
        return BadEntry(CELL_TOO_DEEP, column)
    if has_long_integer:
        return BadEntry(long_integer_entry({column: value}).message, column, record_id)
    if too_deep(value):
        return BadEntry(CELL_TOO_DEEP, column)
    return value


class Rewound(io.RawIOBase):
    """A stream with the bytes already read from it put back in front (it may not seek)."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self.head = head
        self.rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self.head:
            count = min(len(view), len(self.head))
            view[:count] = self.head[:count]
            self.head = self.head[count:]
            return count
        data = self.rest.read(len(view))
        view[: len(data)] = data
        return len(data)
