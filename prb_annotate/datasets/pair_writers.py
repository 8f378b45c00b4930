"""Writing new pairs fast: one prepared INSERT run many times (``PairWriter``), or on
PostgreSQL one binary COPY kept open (``CopyWriter``), with the JSON text the content hash was
computed from sent as it is.

Invariant: a writer writes the rows it was given, all of them, inside the caller's transaction:
what is still waiting is written at the end and dropped on an error (the transaction then rolls
back anyway).
"""

from contextlib import ExitStack
from types import TracebackType
from typing import Any

from django.db import connection
from psycopg import Copy

from prb_annotate.datasets.records import ParsedRecord
from prb_annotate.models import Dataset, Pair

BATCH_SIZE = 1000
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
        else:
            self.abandon(exc)

    def abandon(self, exc: BaseException) -> None:
        """After an error: the rows still waiting are not written."""

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

    def abandon(self, exc: BaseException) -> None:
        # An error ends the COPY by cancelling it.
        self.copy = None
        self.stack.__exit__(type(exc), exc, exc.__traceback__)

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
