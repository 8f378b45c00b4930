"""Which database errors are a passing outage (503, try again) and which stay a 500.

Real errors from the real database: a missing table is a broken deployment on every engine,
SQLite's lock held past the busy timeout passes. The answers themselves, under real faults,
are in ``tests/faults/test_faults_load.py``.
"""

import copy
import sqlite3
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, connections

from prb_annotate.db.outage import RETRY_AFTER_LOCKED, is_unavailable, retry_after


def raised_by(sql: str, using_connection: object = connection) -> DatabaseError:
    with pytest.raises(DatabaseError) as caught:
        using_connection.cursor().execute(sql)  # type: ignore[attr-defined]
    return caught.value


@pytest.mark.django_db
def test_it_keeps_a_missing_table_a_500() -> None:
    assert not is_unavailable(raised_by("SELECT * FROM prb_no_such_table"))


@pytest.mark.django_db(transaction=True)
def test_it_takes_sqlite_locked_past_the_busy_timeout_as_passing(tmp_path: Path) -> None:
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's lock; PostgreSQL outages are in test_faults_load.py")
    impatient = connections.create_connection("default")
    impatient.settings_dict = copy.deepcopy(connection.settings_dict)
    impatient.settings_dict["OPTIONS"]["timeout"] = 0.05
    holder = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        error = raised_by("BEGIN IMMEDIATE", impatient)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        impatient.close()
    assert "database is locked" in str(error)
    assert is_unavailable(error)
    assert retry_after(error) == RETRY_AFTER_LOCKED
