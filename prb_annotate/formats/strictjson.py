"""Strict JSON for everything the project writes: the audit JSON, the API, the manifest.

``json.dumps`` writes ``NaN`` for a float that is not a number (an agreement coefficient over
pairs that all got the same answer, say), which JSON does not allow and many readers refuse.
:func:`dumps` writes such a number as ``null`` (the report's own fields say why, where it
matters) and passes ``allow_nan=False``, so that any that slipped through is an error rather
than a broken file. ``api/renderers.py`` does the same for the API's answers.
"""

import json
import math
from collections.abc import Mapping
from typing import Any

# For JsonResponse(..., json_dumps_params=STRICT): no bare NaN or Infinity in a page's JSON.
STRICT = {"allow_nan": False}


def finite(value: Any) -> Any:
    """``value`` with every float that is not finite (NaN, infinity) replaced by ``None``, in
    mappings, lists and tuples at any depth; numpy floats count as floats."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` of :func:`finite` ``(value)``, strict (``allow_nan=False``)."""
    return json.dumps(finite(value), allow_nan=False, **options)
