"""Plain SQL for the hot paths of annotation (next item, submit).

They run many times a second during a campaign, and on SQLite most of them run while other
writers wait for the database lock; plain statements cost a fraction of the ORM's query
building. Every statement using these helpers is written to be portable between SQLite and
PostgreSQL; only the row-lock clause differs, and ``row_lock`` supplies it.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import connection


def db_time(value: datetime) -> Any:
    """A datetime as the database stores it (naive UTC text on SQLite), for comparisons."""
    return connection.ops.adapt_datetimefield_value(value)


def row_lock(*, of: str = "", skip_locked: bool = False) -> str:
    """A row-lock clause where the database has row locks (PostgreSQL). SQLite needs none:
    its immediate transactions already run one at a time."""
    if not connection.features.has_select_for_update:
        return ""
    clause = " FOR UPDATE"
    if of:
        clause += f" OF {of}"
    if skip_locked:
        clause += " SKIP LOCKED"
    return clause


def fetch(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def execute(sql: str, params: Sequence[Any]) -> int:
    """Run a statement that returns no rows; the number of rows it changed."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return int(cursor.rowcount)


def placeholders(count: int) -> str:
    """``%s, %s, ...`` for an IN list of ``count`` parameters."""
    return ", ".join(["%s"] * count)
