"""DRF's browsable API under the Content-Security-Policy.

DRF's page inlines the code-highlighting styles of view descriptions in a ``<style>`` block,
which the policy refuses; this renderer's template is DRF's page without that block.
"""

from rest_framework import renderers


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    template = "prb_annotate/browsable_api.html"
