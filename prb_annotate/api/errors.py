"""One error body for every 4xx answer of the API::

    {"detail": "Invalid input.", "errors": {"name": ["This field is required."]}}

``detail`` is one human-readable sentence; ``errors`` maps each field (dotted for nested
fields, ``non_field_errors`` for the whole request) to its messages, and is empty when no field
is to blame (404, 403, ...). Django's own ValidationError, raised by a service, is a 400 too.
The database out of reach for a moment is a 503 with ``Retry-After`` in the same shape.
"""

from typing import Any

from django.core.exceptions import (
    RequestDataTooBig,
    SuspiciousMultipartForm,
    TooManyFieldsSent,
    TooManyFilesSent,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler as drf_exception_handler

from prb_annotate.db.outage import is_unavailable, retry_after, unavailable_detail
from prb_annotate.formats.error_body import error_body

NON_FIELD = "non_field_errors"
# Raised by Django while DRF parses the body inside the view; left alone, Django would answer
# with its HTML 400 page.
UNREADABLE_BODY = (RequestDataTooBig, SuspiciousMultipartForm, TooManyFieldsSent, TooManyFilesSent)


def flatten_errors(detail: Any, prefix: str = "") -> dict[str, list[str]]:
    """Field -> messages, with nested serializer errors joined by dots (``items.0.name``)."""
    errors: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            for field, messages in flatten_errors(value, name).items():
                errors.setdefault(field, []).extend(messages)
    elif isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            errors[prefix or NON_FIELD] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                for field, messages in flatten_errors(item, f"{prefix}.{index}").items():
                    errors.setdefault(field.lstrip("."), []).extend(messages)
    else:
        errors[prefix or NON_FIELD] = [str(detail)]
    return {field: messages for field, messages in errors.items() if messages}


def validation_body(detail: Any) -> dict:
    errors = flatten_errors(detail)
    if list(errors) == [NON_FIELD] and len(errors[NON_FIELD]) == 1:
        return error_body(errors[NON_FIELD][0], errors)
    return error_body("Invalid input.", errors)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if is_unavailable(exc):
        # The database restarting or locked (prb_annotate/db/outage.py): 503, try again.
        seconds = retry_after(exc)
        return Response(
            error_body(unavailable_detail(seconds)),
            status=503,
            headers={"Retry-After": str(seconds)},
        )
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=as_serializer_error(exc))
    elif isinstance(exc, UNREADABLE_BODY):
        exc = exceptions.ParseError(f"Request body refused: {exc}")
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        response.data = validation_body(exc.detail)
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = error_body(str(response.data["detail"]))
    else:
        response.data = validation_body(response.data)
    return response
