"""Strict JSON: what the project writes never holds a bare NaN or Infinity.

``json.dumps`` writes ``NaN`` for a float that is not a number, which JSON does not allow and
many readers refuse. Every file the scorer writes goes through :func:`dumps`, and so does every
JSON file and answer of the web app (``prb_annotate/formats/strictjson.py`` imports it): a
number that is not finite becomes ``null`` (the figure beside it, a ``reason`` where there is
one, says why), and ``allow_nan=False`` makes any that slipped through an error rather than a
broken file. Numpy's floats are floats here too.
"""

import json
import math
from collections.abc import Mapping
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every float that is not finite (NaN, infinity) replaced by ``None``, in
    mappings, lists and tuples at any depth; other values pass through."""
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
