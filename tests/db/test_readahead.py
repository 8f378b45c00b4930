"""Reading ahead in a worker thread: same items, own connection, errors and early stops."""

import threading
from collections.abc import Generator, Iterator

import pytest
from django.db import connection, transaction

from prb_annotate.db.readahead import read_ahead
from prb_annotate.models import Dataset, Pair
from tests.conftest import make_pairs


def counts(steps: int, closed: list[str]) -> Iterator[tuple[str, int]]:
    """Which thread made each item, and how many pairs its connection sees."""
    try:
        for _ in range(steps):
            yield threading.current_thread().name, Pair.objects.count()
    finally:
        closed.append(threading.current_thread().name)


@pytest.mark.django_db(transaction=True)
def test_it_reads_committed_rows_in_a_worker_thread_and_closes_up() -> None:
    make_pairs(Dataset.objects.create(name="committed"), 3)
    closed: list[str] = []

    items = list(read_ahead(counts(4, closed)))

    assert len(items) == 4
    assert {count for _, count in items} == {3}
    worker = {name for name, _ in items}
    assert len(worker) == 1
    assert worker != {threading.current_thread().name}
    assert closed == list(worker)


@pytest.mark.django_db(transaction=True)
def test_it_closes_the_iterator_when_the_caller_stops_early() -> None:
    closed: list[str] = []
    reader = read_ahead(counts(10, closed))
    assert isinstance(reader, Generator)
    assert next(reader)[1] == 0
    reader.close()
    assert len(closed) == 1
    assert closed[0] != threading.current_thread().name


@pytest.mark.django_db(transaction=True)
def test_it_hands_the_worker_s_errors_to_the_caller() -> None:
    def failing() -> Iterator[int]:
        yield 1
        raise ValueError("bad chunk")

    reader = read_ahead(failing())
    assert next(reader) == 1
    with pytest.raises(ValueError, match="bad chunk"):
        next(reader)


def test_it_stays_in_the_caller_s_thread_inside_a_transaction(dataset: Dataset) -> None:
    """Uncommitted rows are invisible to another connection: no worker then."""
    closed: list[str] = []
    with transaction.atomic():
        assert connection.in_atomic_block
        items = list(read_ahead(counts(2, closed)))
    assert items == [(threading.current_thread().name, 12)] * 2
