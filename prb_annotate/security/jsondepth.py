"""How deeply JSON may nest, wherever the project reads it from a client: request bodies
(``api/parsers.py``) and the JSON cells of an uploaded CSV file (``datasets/readers.py``).

Python's JSON decoder recurses once per level and raises ``RecursionError`` near 1,000 levels,
and so do the encoders and the walks over a decoded value. No request and no record of this
project nests more than a few levels (a profile is a list of objects of text), so anything
deeper than ``MAX_JSON_DEPTH`` is refused as unreadable before anything walks it recursively.
"""

from collections.abc import Mapping
from typing import Any

MAX_JSON_DEPTH = 32


def nesting_depth(value: Any) -> int:
    """How many arrays and objects deep ``value`` goes (stopping past the limit), walked
    without recursion."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        current, depth = pending.pop()
        if isinstance(current, Mapping):
            children: Any = current.values()
        elif isinstance(current, list):
            children = current
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_JSON_DEPTH:
            break
        pending.extend((child, depth + 1) for child in children)
    return deepest


def too_deep(value: Any) -> bool:
    return nesting_depth(value) > MAX_JSON_DEPTH
