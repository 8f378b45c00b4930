"""The API's JSON parser: DRF's, with a limit on how deeply a body may nest.

Python's JSON decoder recurses once per level and raises ``RecursionError`` near 1,000 levels,
which DRF does not expect and which would answer 500. Anything deeper than ``MAX_JSON_DEPTH``
(``security/jsondepth.py``) is refused as unreadable (400, the API's error format) before a
serializer, an error formatter or a JSON column walks it recursively. It is the default parser
of every API view (settings ``DEFAULT_PARSER_CLASSES``), and views that name their parsers name
this one.
"""

from typing import Any

from rest_framework import parsers
from rest_framework.exceptions import ParseError

from prb_annotate.security.jsondepth import MAX_JSON_DEPTH, too_deep

TOO_DEEP = f"JSON parse error - the body nests deeper than {MAX_JSON_DEPTH} levels."


class JSONParser(parsers.JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as error:
            raise ParseError(TOO_DEEP) from error
        if too_deep(data):
            raise ParseError(TOO_DEEP)
        return data
