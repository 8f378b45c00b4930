"""Strict JSON for everything the project writes: the audit JSON, the API, the manifest.

``json.dumps`` writes ``NaN`` for a float that is not a number (an agreement coefficient over
pairs that all got the same answer, say), which JSON does not allow and many readers refuse.
:func:`dumps` writes such a number as ``null`` (the report's own fields say why, where it
matters) and passes ``allow_nan=False``, so that any that slipped through is an error rather
than a broken file. The rule is the scorer's own (``evaluation/strict_json.py``), imported
rather than copied; ``api/renderers.py`` applies it to the API's answers.
"""

from evaluation.strict_json import dumps, finite

# For JsonResponse(..., json_dumps_params=STRICT): no bare NaN or Infinity in a page's JSON.
STRICT = {"allow_nan": False}

__all__ = ["STRICT", "dumps", "finite"]
