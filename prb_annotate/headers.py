"""The Content-Security-Policy header, on every response.

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
