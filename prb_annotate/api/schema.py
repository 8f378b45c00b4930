"""OpenAPI generation: drf-spectacular's, plus the error answers every endpoint can give.

Documenting 400/403/404 with the shared error body lets clients (and the schema-driven
tests) check error responses against the schema like any other. There is no 401: session
authentication comes first, and it names no ``WWW-Authenticate`` scheme, so DRF answers a
request without credentials, or with an unknown or expired token, with 403 (docs/api.md).
"""

from typing import Any, Literal

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from rest_framework import serializers

ERROR_CODES = {
    "400": "Invalid input: `errors` names each field with its messages.",
    "403": "Not authenticated (no credentials, or an unknown or expired token), or not "
    "allowed for this account.",
    "404": "No such object, or not visible to this account.",
}
BODY_ERROR_CODES = {"415": "Unsupported media type for the request body."}


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    # DRF's metaclass takes declared fields off the class: this shadows no property.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField())
    )


class ImportErrorSerializer(ErrorSerializer):
    """An import that failed: nothing was written; the first problems of the file."""

    problems = serializers.ListField(child=serializers.DictField(), required=False)
    total = serializers.IntegerField(required=False)


class AutoSchema(SpectacularAutoSchema):
    def _get_response_bodies(
        self, direction: Literal["request", "response"] = "response"
    ) -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        if direction != "response":
            return responses
        error = self._get_response_for_code(ErrorSerializer, "400")
        codes = dict(ERROR_CODES)
        if self.method in ("POST", "PUT", "PATCH"):
            codes |= BODY_ERROR_CODES
        # A view may name answers of its own, e.g. the token endpoint's 429 for a locked login.
        codes |= getattr(self.view, "extra_error_codes", {})
        for code, description in codes.items():
            if code not in responses:
                responses[code] = {**error, "description": description}
        return responses
