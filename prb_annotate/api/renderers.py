"""The API's renderers: strict JSON, and DRF's browsable API under the Content-Security-Policy.

DRF's page inlines the code-highlighting styles of view descriptions in a ``<style>`` block,
which the policy refuses; this renderer's template is DRF's page without that block.
"""

from collections.abc import Mapping
from typing import Any

from rest_framework import renderers

from prb_annotate.formats.strictjson import finite


class StrictJSONRenderer(renderers.JSONRenderer):
    """DRF's JSON renderer (strict already: it refuses NaN) with NaN and infinity written as
    ``null`` first, so that an undefined figure is ``null`` rather than a server error."""

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        return super().render(finite(data), accepted_media_type, renderer_context)


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    template = "prb_annotate/browsable_api.html"
