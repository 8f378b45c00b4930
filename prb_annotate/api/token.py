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
from prb_annotate.logins import LoginLocked, begin_attempt, client_address, is_known


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
        request = self.context["request"]
        # The Django request under DRF's: its cookies, its session, and where a successful
        # login leaves the mark that sets the known-login cookie.
        http_request = getattr(request, "_request", request)
        address = client_address(http_request)
        known = is_known(http_request, username, address)
        try:
            attempt = begin_attempt(username, address, known=known)
        except LoginLocked as locked:
            raise LoginThrottled(locked) from locked
        validated = super().validate(attrs)  # a wrong password raises: its row stays
        attempt.succeeded(http_request)
        return validated


class TokenView(ObtainAuthToken):
    serializer_class = ThrottledAuthTokenSerializer
    parser_classes = (FormParser, MultiPartParser, JSONParser)
    extra_error_codes = {"429": "Too many failed logins for this username or address."}


obtain_auth_token = TokenView.as_view()
