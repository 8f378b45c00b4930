"""``POST /api/token/``: DRF's token endpoint, throttled like the login page.

The login throttle (``prb_annotate.security.logins``) applies: a locked username or address gets 429
with ``Retry-After`` and the API's error body, whatever the password.
"""

from typing import Any

from rest_framework import exceptions, status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from prb_annotate.api.authentication import token_expired
from prb_annotate.api.parsers import JSONParser
from prb_annotate.security.logins import LoginLocked, begin_attempt, client_address, is_known


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
    """The user's token, made when they have none; an expired one is replaced by a new one."""

    serializer_class = ThrottledAuthTokenSerializer
    parser_classes = (FormParser, MultiPartParser, JSONParser)
    extra_error_codes = {"429": "Too many failed logins for this username or address."}

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = current_token(serializer.validated_data["user"])
        return Response({"token": token.key})


def current_token(user: Any) -> Token:
    """The user's token; a new one when they had none or theirs has expired."""
    token, created = Token.objects.get_or_create(user=user)
    if not created and token_expired(token):
        token.delete()
        token = Token.objects.create(user=user)
    return token


obtain_auth_token = TokenView.as_view()
