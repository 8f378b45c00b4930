"""Content negotiation for the endpoints that answer a file (CSV, zip).

DRF picks a renderer from ``Accept`` among the view's renderers (JSON and the browsable API):
a client asking for the file's own type (``Accept: text/csv``, ``application/zip``) matched
none and got 406. The file is not rendered by a renderer at all, so such a request is
answered: the renderer then only renders an error body, in JSON.
"""

from collections.abc import Iterable

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request


class FileNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            return renderers[0], renderers[0].media_type
