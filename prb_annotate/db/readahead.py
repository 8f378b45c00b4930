"""Reading from the database one step ahead of the code that uses the rows.

The audit reads a whole campaign's annotations, hundreds of thousands of rows, in chunks, and
spends as long again turning each chunk into typed columns. Produced in a worker thread, the
next chunk is read while the current one is converted: PostgreSQL's work runs in its own
process, and SQLite's in C code that releases the GIL, so on two cores the two overlap instead
of taking turns.
"""

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar, cast

from django.db import DEFAULT_DB_ALIAS, connections

T = TypeVar("T")
_DONE = object()


def read_ahead(items: Iterator[T], using: str = DEFAULT_DB_ALIAS) -> Iterator[T]:
    """The items of ``items``, each produced in a worker thread while the caller works on the
    one before.

    The worker has its own database connection, closed at the end. Rows written in a
    transaction that has not committed are invisible to any other connection, so inside one
    the items are produced in the caller's thread instead.
    """
    if connections[using].in_atomic_block:
        yield from items
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="read-ahead") as worker:
        try:
            pending = worker.submit(next, items, _DONE)
            while (item := pending.result()) is not _DONE:
                pending = worker.submit(next, items, _DONE)
                yield cast(T, item)
        finally:
            # Queued behind any pending step, so it runs after it, in the same thread.
            worker.submit(_finish, items).result()


def _finish(items: Iterator[object]) -> None:
    """Close the iterator (its cursors) and the worker's connections, in the worker thread."""
    try:
        close = getattr(items, "close", None)
        if close is not None:
            close()
    finally:
        connections.close_all()
