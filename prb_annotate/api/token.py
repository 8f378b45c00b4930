"""``POST /api/token/``: DRF's token endpoint, throttled like the login page.

The login throttle (``prb_annotate.logins``) applies: a locked username or address gets 429
with ``Retry-After`` and the API's error body, whatever the password.
"""

from typing import Any

from rest_framework import exceptions, status
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser, MultiPartParser

from prb_annotate.api.parsers import JSONParser
from prb_annotate.logins import (
    LoginLocked,
    check_not_locked,
    client_address,
    record_failure,
    record_success,
)


class LoginThrottled(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "locked"

    def __init__(self, locked: LoginLocked) -> None:
        super().__init__(str(locked))
        # DRF's exception handler turns ``wait`` into the Retry-After header.
        self.wait = locked.retry_after_seconds


class ThrottledAuthTokenSerializer(AuthTokenSerializer):
    def validate(self, attrs: Any) -> Any:
        username = attrs.get("username", "")
        address = client_address(self.context["request"])
        try:
            check_not_locked(username, address)
        except LoginLocked as locked:
            raise LoginThrottled(locked) from locked
        try:
            validated = super().validate(attrs)
        except exceptions.ValidationError:
            record_failure(username, address)
            raise
        record_success(username)
        return validated


class TokenView(ObtainAuthToken):
    serializer_class = ThrottledAuthTokenSerializer
    parser_classes = (FormParser, MultiPartParser, JSONParser)
    extra_error_codes = {"429": "Too many failed logins for this username or address."}


obtain_auth_token = TokenView.as_view()
