"""Requests refused before any view reads them: a NUL character in the path or the query, and
a body larger than the upload limit.

- **NUL.** No URL of the project, no id and no search holds a NUL character, and PostgreSQL
  refuses one in a query with an error (a 500) where SQLite finds nothing. A NUL anywhere in the
  path or in a query parameter's name or value is answered 400 here, on every URL, the admin's
  filters included. A cookie whose name or value holds one (``sessionid="ab\\000cd"``) is
  dropped, as if the browser had not sent it: the session, CSRF and known-login cookies are
  then looked up by nothing PostgreSQL refuses. Bodies are the forms' and serializers'
  business: their text fields refuse NUL with a message naming the field.
- **Size.** ``PRB_UPLOAD_MAX_BYTES`` is the largest file a dataset upload may send; a request
  whose ``Content-Length`` passes it (plus ``FORM_SLACK_BYTES`` for the form's other fields and
  the multipart boundaries) is answered 413 before a byte of the body is read. The WSGI server
  hands a view no more than ``Content-Length`` bytes, so a body cannot be longer than it says.
  The upload endpoint checks the file itself against the same limit.

Under ``/api/`` the answer has the API's error body; elsewhere a plain page, rendered without
the request (nothing here needs the session or the database).
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext

from prb_annotate.formats.error_body import error_body
from prb_annotate.formats.numbers import byte_size
from prb_annotate.formats.strictjson import STRICT

NUL = "\x00"
API_PREFIX = "/api/"
# The upload form's fields besides the file, and the multipart framing around them.
FORM_SLACK_BYTES = 64 * 1024


def too_large_message() -> str:
    return gettext(
        "The request is larger than this server accepts: uploads may be at most %(limit)s "
        "(PRB_UPLOAD_MAX_BYTES)."
    ) % {"limit": byte_size(settings.PRB_UPLOAD_MAX_BYTES)}


def nul_problem(request: HttpRequest) -> tuple[str, str] | None:
    """(where, message) when the path or a query parameter holds a NUL character."""
    if NUL in request.path_info:
        return "path", gettext("The address holds a NUL character.")
    for name, values in request.GET.lists():
        if NUL in name or any(NUL in value for value in values):
            shown = name.replace(NUL, "\\x00")
            return shown, gettext("The query parameter %(name)s holds a NUL character.") % {
                "name": repr(shown)
            }
    return None


def body_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0  # Django reads no body then either


def refusal(request: HttpRequest, status: int, field: str, message: str) -> HttpResponse:
    if request.path_info.startswith(API_PREFIX):
        errors = {} if field == "path" else {field: [message]}
        return JsonResponse(error_body(message, errors), status=status, json_dumps_params=STRICT)
    page = render_to_string("prb_annotate/refused.html", {"status": status, "message": message})
    return HttpResponse(page, status=status)


class RequestLimitsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if body_length(request) > settings.PRB_UPLOAD_MAX_BYTES + FORM_SLACK_BYTES:
            with translation.override(readers_language(request)):
                return refusal(request, 413, "file", too_large_message())
        if nul_problem(request) is not None:
            with translation.override(readers_language(request)):
                problem = nul_problem(request)
                assert problem is not None
                return refusal(request, 400, *problem)
        drop_nul_cookies(request)
        return self.get_response(request)


def readers_language(request: HttpRequest) -> str:
    """The refusal's language: English for the API, as everywhere under it; otherwise the
    chooser's cookie or the browser's (this runs before the session and the locale
    middleware, and before anything reads the body)."""
    if request.path_info.startswith(API_PREFIX):
        return "en"
    return translation.get_language_from_request(request)


def drop_nul_cookies(request: HttpRequest) -> None:
    cookies = request.COOKIES
    if any(NUL in name or NUL in value for name, value in cookies.items()):
        request.COOKIES = {
            name: value for name, value in cookies.items() if NUL not in name and NUL not in value
        }
