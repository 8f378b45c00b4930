"""Plain SQL for the hot paths of annotation (next item, submit).

They run many times a second during a campaign, and on SQLite most of them run while other
writers wait for the database lock; plain statements cost a fraction of the ORM's query
building. Every statement using these helpers is written to be portable between SQLite and
PostgreSQL; only the row-lock clause differs, and ``row_lock`` supplies it.
"""

import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Model

M = TypeVar("M", bound=Model)
Converter = Callable[[Any, Any, Any], Any]


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


# --- whole rows as model instances --------------------------------------------------------


def columns(model: type[Model], alias: str) -> str:
    """Every column of the model, in field order, for a SELECT that ``instance`` reads back."""
    key = (connection.vendor, model, alias)
    if key not in _columns:
        quote = connection.ops.quote_name
        fields = model._meta.concrete_fields
        _columns[key] = ", ".join(f"{alias}.{quote(field.column)}" for field in fields)
    return _columns[key]


_columns: dict[tuple[str, type[Model], str], str] = {}


def instance(model: type[M], row: Sequence[Any], start: int = 0) -> M:
    """The model instance whose ``columns`` start at ``row[start]``: values converted as the
    ORM converts them (JSON, datetimes on SQLite), every field loaded, nothing deferred."""
    names, converters = _reading(model)
    values = list(row[start : start + len(names)])
    for index, col, chain in converters:
        value = values[index]
        for convert in chain:
            value = convert(value, col, connection)
        values[index] = value
    return model.from_db(connection.alias, names, values)


# Per thread, as Django's connections are: the converters are methods of one connection.
_local = threading.local()
_Reading = tuple[list[str], list[tuple[int, Any, list[Converter]]]]


def _reading(model: type[Model]) -> _Reading:
    """The model's field names, and the converters of the fields that have any."""
    cache: dict[tuple[str, type[Model]], _Reading] = _local.__dict__.setdefault("reading", {})
    key = (connection.alias, model)
    if key not in cache:
        fields = model._meta.concrete_fields
        converters = []
        for index, field in enumerate(fields):
            col = field.get_col(model._meta.db_table)
            chain = connection.ops.get_db_converters(col) + col.get_db_converters(connection)
            if chain:
                converters.append((index, col, chain))
        cache[key] = ([field.attname for field in fields], converters)
    return cache[key]


INSERT_SQL = "INSERT INTO {table} ({columns}) VALUES ({values}) RETURNING {pk}"


def insert(obj: M) -> M:
    """Store a new instance (auto-increment primary key) in one plain statement.

    Values are prepared as ``save()`` prepares them (defaults, ``auto_now_add``, JSON), but no
    save signals are sent: only for models without receivers.
    """
    meta = obj._meta
    quote = connection.ops.quote_name
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    values = [field.get_db_prep_save(field.pre_save(obj, True), connection) for field in fields]
    sql = INSERT_SQL.format(
        table=quote(meta.db_table),
        columns=", ".join(quote(field.column) for field in fields),
        values=placeholders(len(fields)),
        pk=quote(meta.pk.column),
    )
    obj.pk = fetch(sql, values)[0][0]
    obj._state.adding = False
    obj._state.db = connection.alias
    return obj
