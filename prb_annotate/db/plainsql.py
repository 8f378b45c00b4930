"""Plain SQL and transactions for the hot paths of annotation (next item, submit).

They run many times a second during a campaign, and on SQLite most of them run while other
writers wait for the database lock; plain statements cost a fraction of the ORM's query
building. Every statement using these helpers is written to be portable between SQLite and
PostgreSQL; only the row-lock clause differs, and ``row_lock`` supplies it.

Transactions: on PostgreSQL an API request of the annotators' work cycle runs as one
transaction (``whole_request_transaction``), and the service it calls joins it
(``operation_transaction``) instead of opening a savepoint. On SQLite each service keeps its own
immediate transaction, since one around the whole request would hold the database's single
write lock while the request authenticates and plans.
"""

import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import wraps
from typing import Any, TypeVar

from django.db import connection, transaction
from django.db.models import Model
from django.http import HttpRequest, HttpResponse

M = TypeVar("M", bound=Model)
Converter = Callable[[Any, Any, Any], Any]


def db_time(value: datetime) -> Any:
    """A datetime as the database stores it (naive UTC text on SQLite), for comparisons."""
    return connection.ops.adapt_datetimefield_value(value)


def has_row_locks() -> bool:
    """PostgreSQL: yes. SQLite: no, its immediate transactions already run one at a time."""
    return bool(connection.features.has_select_for_update)


def row_lock(*, of: str = "", skip_locked: bool = False) -> str:
    """A row-lock clause where the database has row locks (PostgreSQL). SQLite needs none:
    its immediate transactions already run one at a time."""
    if not has_row_locks():
        return ""
    clause = " FOR UPDATE"
    if of:
        clause += f" OF {of}"
    if skip_locked:
        clause += " SKIP LOCKED"
    return clause


# --- transactions -------------------------------------------------------------------------


class _WholeRequest(transaction.Atomic):
    """The transaction ``whole_request_transaction`` opens; services recognise it by its class."""


View = TypeVar("View", bound=Callable[..., HttpResponse])


def whole_request_transaction(view: View) -> View:
    """Run the view, authentication included, as one transaction on a database with row locks
    (PostgreSQL): otherwise every read outside the service's own block is a transaction of its
    own. An answer of 400 or more rolls back whatever the request wrote. SQLite runs the view
    as it is: its services take the single write lock only for their own block."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not has_row_locks():
            return view(request, *args, **kwargs)
        with _WholeRequest(None, savepoint=True, durable=False):
            response = view(request, *args, **kwargs)
            if response.status_code >= 400:
                transaction.set_rollback(True)
            elif transaction.get_rollback():
                # A service failed and the view answered success anyway: its writes would be
                # rolled back behind the client's back.
                raise transaction.TransactionManagementError(
                    f"{request.path} answered {response.status_code} after a failed operation."
                )
        return response

    return wrapper  # type: ignore[return-value]


def operation_transaction() -> transaction.Atomic:
    """A service's transaction. Inside a whole-request transaction it joins that one without a
    savepoint (two statements fewer), so an error leaves the whole request to roll back; the
    API views answer such errors without touching the database again."""
    blocks = connection.atomic_blocks
    joined = bool(blocks) and isinstance(blocks[-1], _WholeRequest)
    return transaction.atomic(savepoint=not joined)


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
