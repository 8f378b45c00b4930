"""The body of every API error, ``{"detail": ..., "errors": {field: [messages]}}``.

It lives here, under everything, because a refusal made before any view (a NUL in the path,
a body over the upload limit: ``security/request_limits.py``) must answer the API's clients
in the same shape as the API's own errors (``api/errors.py``).
"""

from typing import Any


def error_body(detail: str, errors: dict[str, list[str]] | None = None, **more: Any) -> dict:
    return {"detail": detail, "errors": errors or {}, **more}
