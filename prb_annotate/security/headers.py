"""The Content-Security-Policy header, on every response; ``Cache-Control: no-store`` on what
only its reader may see.

Django 5.2 has no CSP support of its own (it arrives in 6.0), and one fixed policy needs no
package: every page loads only the app's own scripts and styles, from static files. No inline
script or style, no ``style=`` attribute, no other origin; server-rendered SVG charts use
presentation attributes, which the policy allows. A response that sets its own policy keeps it.
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase

POLICY_HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if POLICY_HEADER not in response.headers:
            response.headers[POLICY_HEADER] = settings.CONTENT_SECURITY_POLICY
        return response


NO_STORE = "no-store"


class NoStoreMiddleware:
    """``Cache-Control: no-store`` on every answer to a logged-in user (pages, exports, the
    browsable API) and on every API answer, whoever asked: a shared computer's browser cache or
    a proxy must not keep a page of someone's campaign, an export or a token. Static files
    (served before the session is read) and responses that set their own header keep theirs.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if "Cache-Control" not in response.headers and is_private(request):
            response.headers["Cache-Control"] = NO_STORE
        return response


def is_private(request: HttpRequest) -> bool:
    if request.path_info.startswith("/api/") or "HTTP_AUTHORIZATION" in request.META:
        return True
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)
