"""Independent tasks spread over worker processes that read the caller's database.

An export slice is Python work (decoding, building and encoding records, pandas): threads
would take turns on the GIL, so slices go to processes. Workers are forked, so they start at
once with everything the caller has imported and configured (settings, test database names),
and nothing is imported twice. The caller's database connections are closed first: a forked
copy of an open connection would share its socket with the parent; each worker opens its own,
and the caller's reopens when it next queries.
"""

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

from django.db import DEFAULT_DB_ALIAS, connections

T = TypeVar("T")
R = TypeVar("R")


# Beyond a few workers the exporting process, which writes and hashes every byte, and the
# database become the limit, while each worker holds its own slices in memory.
MAX_DEFAULT_WORKERS = 4


def default_workers() -> int:
    """One worker per core the process may use, up to MAX_DEFAULT_WORKERS."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, MAX_DEFAULT_WORKERS))


def can_share_work(using: str = DEFAULT_DB_ALIAS) -> bool:
    """Whether worker processes can take over: the platform forks, and another connection
    sees what this one sees.

    Not inside a transaction (its rows are invisible to other connections until it commits,
    and a test runs inside one; closing the connection would also end it), and not an
    in-memory SQLite database (private to its connection).
    """
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    connection = connections[using]
    if connection.in_atomic_block:
        return False
    if connection.vendor == "sqlite":
        # The SQLite backend's own test of its database name (":memory:", "mode=memory").
        return not connection.is_in_memory_db()  # type: ignore[attr-defined]
    return True


def ordered_map(function: Callable[[T], R], tasks: Iterable[T], *, workers: int) -> Iterator[R]:
    """``function`` of each task, in the order of the tasks, computed in ``workers`` forked
    processes (tasks and results must pickle; see ``can_share_work``).

    At most two tasks per worker are in flight: results are consumed in order, so memory stays
    bounded however many tasks there are.
    """
    connections.close_all()
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
    try:
        pending: deque[Future[R]] = deque()
        remaining = iter(tasks)
        for task in remaining:
            pending.append(pool.submit(function, task))
            if len(pending) >= 2 * workers:
                break
        while pending:
            result = pending.popleft().result()
            for task in remaining:
                pending.append(pool.submit(function, task))
                break
            yield result
    finally:
        # Also on an error or an abandoned iteration: queued tasks are dropped, running ones
        # finish, and the workers exit, closing their connections.
        pool.shutdown(wait=True, cancel_futures=True)
