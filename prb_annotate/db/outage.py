"""The database out of reach for a moment: an answer of 503 with ``Retry-After``, never a 500.

The failures handled here all pass by themselves:

- PostgreSQL restarting or shutting down for maintenance: the connection is refused, or a
  connection a worker held is cut ("terminating connection due to administrator command",
  "server closed the connection unexpectedly", "the database system is starting up");
- on SQLite, a writer that waited its whole busy timeout for the one write lock ("database is
  locked"), when more writers queue than the timeout covers.

Such a request changed nothing the client relies on: its transaction rolled back or never began
(SQLite's immediate transactions take the lock before the first write), and the answer leaves
the client's CSRF and session cookies as they were, so the same form sent again is accepted. A
login cut off half-way may leave a new session row that no cookie names; it expires like any
other. The client may send it again; a submit sent again with the same client token is stored
once, whether or not the first one was.

Two places see these errors and both call ``unavailable_response``: the API's exception
handler (DRF catches what its views raise) and ``DatabaseUnavailableMiddleware`` (the pages,
and the API's whole-request transaction, which commits outside DRF). ``server_error`` covers
an error in a middleware, and ``bad_request`` the session saved after the view (Django reports
any failed save of an existing session as "the session was deleted", a 400). The connection
that failed is closed when the request ends (Django closes a connection whose errors leave it
unusable), and ``CONN_HEALTH_CHECKS`` checks a kept connection before a request reuses it: the
same worker processes serve again as soon as the database is back, without a restart.
"""

import logging
import sqlite3
import sys
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults

from prb_annotate.formats.error_body import error_body
from prb_annotate.formats.strictjson import STRICT

logger = logging.getLogger(__name__)

# Seconds a client should wait before sending again: SQLite's lock frees in moments, a database
# server restart takes a few seconds.
RETRY_AFTER_LOCKED = 1
RETRY_AFTER_OUTAGE = 5
# SQLite errors that pass: the lock (busy timeout spent), or the file briefly out of reach.
SQLITE_PASSING = ("database is locked", "database table is locked", "unable to open database")
API_PREFIX = "/api/"


def is_unavailable(error: BaseException) -> bool:
    """A database error that says "try again soon", not "this request is wrong".

    On PostgreSQL every OperationalError and InterfaceError is one (lost or refused connection,
    shutdown, serialization failure, deadlock); on SQLite only the lock and an unreachable file
    are: "no such table" is a broken deployment and stays a 500.
    """
    if isinstance(error, InterfaceError):
        return True
    if not isinstance(error, OperationalError):
        return False
    cause = error.__cause__
    if isinstance(cause, sqlite3.Error):
        return any(text in str(cause) for text in SQLITE_PASSING)
    return True


def retry_after(error: BaseException) -> int:
    return RETRY_AFTER_LOCKED if "locked" in str(error) else RETRY_AFTER_OUTAGE


def unavailable_detail(seconds: int) -> str:
    return f"The database is busy or restarting; nothing was saved. Try again in {seconds} s."


def unavailable_response(request: HttpRequest, error: BaseException) -> HttpResponse:
    """503 with Retry-After: the API's error body under /api/, a plain page elsewhere.

    The page is rendered without the request (no context processors), since loading the user
    or the session would need the database that just failed.
    """
    seconds = retry_after(error)
    # A login rotates the CSRF cookie before its last write: sent with this answer, the new
    # cookie would no longer match the form the client sends again (a 403).
    request.META["CSRF_COOKIE_NEEDS_UPDATE"] = False
    logger.warning("database unavailable: %s %s: %s", request.method, request.path, error)
    response: HttpResponse
    if request.path.startswith(API_PREFIX):
        # The API's error shape (``api/errors.py``), written here so the database layer
        # imports nothing above it.
        body = {"detail": unavailable_detail(seconds), "errors": {}}
        response = JsonResponse(body, status=503, json_dumps_params=STRICT)
    else:
        page = render_to_string("prb_annotate/unavailable.html", {"seconds": seconds})
        response = HttpResponse(page, status=503)
    response["Retry-After"] = str(seconds)
    return response


class DatabaseUnavailableMiddleware:
    """Turns a passing database error raised by a view into ``unavailable_response``."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_unavailable(exception):
            return unavailable_response(request, exception)
        return None


def unavailable_cause(error: BaseException) -> BaseException | None:
    """The passing database error ``error`` was raised while handling, if any."""
    seen: BaseException | None = error
    while seen is not None:
        if is_unavailable(seen):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler400``: a session whose save met a locked or restarting database is a 503 (Django
    raises "the session was deleted", from the failed save); anything else is Django's 400."""
    cause = unavailable_cause(exception)
    if cause is not None:
        return unavailable_response(request, cause)
    return defaults.bad_request(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: a passing database error raised outside a view (in a middleware) is a
    503 too; anything else is Django's own 500 page, or under ``/api/`` the API's error body
    (an API client reads JSON, never a page). Django calls it while handling the exception,
    so ``sys.exc_info`` holds it."""
    error = sys.exc_info()[1]
    if error is not None and is_unavailable(error):
        return unavailable_response(request, error)
    if request.path_info.startswith("/api/"):
        body = error_body("Server error: the request could not be handled.", {})
        return JsonResponse(body, status=500, json_dumps_params=STRICT)
    return defaults.server_error(request)
