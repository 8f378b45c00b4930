"""A paper table as plain data: its columns, formatted cells, caption, and the methods of the
intervals and tests its cells print (``Printed``). ``tables.py`` and ``human_tables.py`` build
tables of this shape; ``latex``, ``layout`` and ``markdown`` write them."""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prb_annotate.audit import intervals as drawn
from prb_annotate.paper import numbers as fmt
from prb_annotate.paper.method_words import ordered, words

# The coefficients the agreement tables show, per kind of question: alpha, then Gwet's.
AGREEMENT_KEYS = {"nominal": ("alpha_nominal", "ac1"), "ordinal": ("alpha_ordinal", "ac2_ordinal")}


@dataclass(frozen=True)
class Column:
    """``short``: the heading's abbreviation where a column is narrow (``layout.py``; the
    caption then gives its key)."""

    heading: str
    numeric: bool = True
    short: str = ""


# The columns most tables open with: what a row is about, and its n.
CATEGORY = Column("Category", numeric=False)
N = Column("n")


@dataclass(frozen=True)
class Table:
    """``key`` names the table (its LaTeX label is ``tab:KEY``); ``caption`` is plain text;
    ``methods`` are the methods of the intervals and tests its cells print (the methods
    paragraph words these and no others); ``centred`` names the coefficients whose printed
    intervals were centred on their estimate (their ``centred``)."""

    key: str
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]
    methods: tuple[str, ...] = ()
    # Too many wide figures for a column: it spans the page in a two-column paper.
    wide: bool = False
    centred: tuple[str, ...] = ()


class Printed:
    """Formats a table's cells and remembers the method of every interval and test printed,
    and which coefficients' printed intervals were centred on their estimate."""

    def __init__(self) -> None:
        self.methods: list[str] = []
        self.centred: list[str] = []

    def estimate(self, entry: Mapping[str, Any], show: Any = fmt.real) -> str:
        if fmt.printed_interval(entry):
            method = fmt.method_of(entry)
            if method is None:
                raise ValueError(f"an interval without the name of its method: {dict(entry)}")
            self.methods.append(method)
            if entry.get("centred"):
                self.centred.append(str(entry.get("label") or entry.get("key")))
        return fmt.estimate(entry, show)

    def test(self, method: str, p: float | None) -> str:
        if p is not None:
            self.methods.append(method)
        return fmt.p_value(p)

    def intervals(self, level_text: str) -> str:
        """ "Intervals: 95% plain Wilson score interval." for a caption, from what was
        printed; or why there are none."""
        kinds = [m for m in ordered(self.methods) if words(m).kind == "interval"]
        if not kinds:
            return "No interval is printed (none was computed, or each was unreliable)."
        named = f"Intervals: {level_text}% {'; '.join(words(m).phrase for m in kinds)}."
        adjusted = adjustments(kinds, self.centred)
        return f"{named} {adjusted[0].upper()}{adjusted[1:]}." if adjusted else named


def adjustments(methods: Sequence[str], centred: Sequence[str]) -> str:
    """What the agreement intervals' method did after drawing (``intervals.adjustment_text``:
    the centring of the ``centred`` coefficients' intervals, the widening to hold the
    estimate), when one of ``methods`` is such a method; "" otherwise."""
    if not any(method in drawn.METHODS for method in methods):
        return ""
    return drawn.adjustment_text(ordered(centred))


def _table(
    key: str,
    caption: str,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    printed: Printed | None = None,
    wide: bool = False,
) -> Table:
    methods = tuple(ordered(printed.methods)) if printed else ()
    centred = tuple(ordered(printed.centred)) if printed else ()
    return Table(
        key, caption, tuple(columns), tuple(tuple(row) for row in rows), methods, wide, centred
    )


def measured_table(
    key: str,
    caption: str,
    level_text: str,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    printed: Printed,
    wide: bool = False,
) -> Table:
    """A table of cells ``printed`` formatted: its caption ends with the sentence that names
    their intervals at the confidence level ``level_text``."""
    return _table(key, f"{caption} {printed.intervals(level_text)}", columns, rows, printed, wide)


Cells = Callable[[Mapping[str, Any], Printed], tuple[str, ...]]


def category_table(
    key: str,
    caption: str,
    level_text: str,
    section: Mapping[str, Any],
    overall: str,
    columns: Sequence[Column],
    cells: Cells,
) -> Table:
    """A row per category of ``section["per_category"]``, then ``section["overall"]`` (named
    ``overall``): the category, then the ``cells`` of its entry under ``columns``."""
    printed = Printed()
    rows = [
        (category_name(row["category"]), *cells(row, printed)) for row in section["per_category"]
    ]
    rows.append((overall, *cells(section["overall"], printed)))
    return measured_table(key, caption, level_text, [CATEGORY, *columns], rows, printed)


def level(numbers: Mapping[str, Any]) -> str:
    return fmt.confidence_level(numbers["audit"]["settings"]["confidence"])


def category_name(category: str | None) -> str:
    return (category or "(no category)").replace("_", " ")
