"""CSV cells that a spreadsheet shows as text, never runs as a formula, for evaluation's CSV
files (``compare --format csv``).

The rule of every CSV file the project writes (OWASP's remedy for CSV injection; the web app's
writers in ``prb_annotate/formats/spreadsheets.py`` import it, and its docstring says why): a
cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading
apostrophe, unless it is a plain number; a cell already starting with an apostrophe gets one
more, so that removing one leading apostrophe gives the value back; every cell is quoted.
"""

import csv
import re
from collections.abc import Mapping, Sequence
from typing import IO, Any

# What a spreadsheet may take as the start of a formula (OWASP "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
TEXT_MARK = "'"
PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def neutralised_cell(value: str) -> str:
    """``value`` as a CSV cell that no spreadsheet evaluates."""
    if not value.startswith((*FORMULA_STARTS, TEXT_MARK)) or PLAIN_NUMBER.fullmatch(value):
        return value
    return TEXT_MARK + value


class SafeDictWriter:
    """``csv.DictWriter`` with every text cell neutralised and every cell quoted."""

    def __init__(self, file: IO[str], fieldnames: Sequence[str], **options: Any) -> None:
        self._writer = csv.DictWriter(
            file, fieldnames=fieldnames, **{**options, "quoting": csv.QUOTE_ALL}
        )
        self.fieldnames = list(fieldnames)

    def writeheader(self) -> None:
        self._writer.writerow({name: neutralised_cell(name) for name in self.fieldnames})

    def writerow(self, row: Mapping[str, Any]) -> None:
        self._writer.writerow(
            {
                key: neutralised_cell(value) if isinstance(value, str) else value
                for key, value in row.items()
            }
        )
