"""The API's JSON parser: DRF's, with a limit on how deeply a body may nest.

Python's JSON decoder recurses once per level and raises ``RecursionError`` near 1,000 levels,
which DRF does not expect and which would answer 500. No request of this API nests more than a
few levels, so anything deeper than ``MAX_JSON_DEPTH`` is refused as unreadable (400, the API's
error format) before a serializer, an error formatter or a JSON column walks it recursively.
"""

from collections.abc import Mapping
from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

MAX_JSON_DEPTH = 32
TOO_DEEP = f"JSON parse error - the body nests deeper than {MAX_JSON_DEPTH} levels."


def nesting_depth(value: Any) -> int:
    """How many arrays and objects deep ``value`` goes, walked without recursion."""
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


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as error:
            raise ParseError(TOO_DEEP) from error
        if nesting_depth(data) > MAX_JSON_DEPTH:
            raise ParseError(TOO_DEEP)
        return data
