"""How the paper's LaTeX tables fit a page: ``two`` for a column of a two-column conference
paper (ACL: 7.7 cm), ``one`` for a one-column paper (NeurIPS: 5.5 in).

Nothing is shrunk by scaling. Every table is a ``tabularx`` as wide as the line, whose first
column (the names: questions, categories, models) takes what the numbers leave and wraps,
with a break allowed after ``:`` and ``/`` in names. In a column (``two``) the type is
``\\footnotesize``, each interval goes under its estimate in ``\\scriptsize``, long headings are
abbreviated with their key in the caption, and a table of seven columns or more, or of
several wide figures (``Table.wide``), spans both columns (``table*``).
``tests/paper/test_layout.py`` compiles both layouts at ACL's and NeurIPS' widths and finds
no overfull box in the tables.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prb_annotate.paper.tables import Column, Table

PACKAGES = ("booktabs", "array", "tabularx")
# ``latex.escape``, passed in so that this module keeps no copy of it.
Escape = Callable[[str], str]


@dataclass(frozen=True)
class Layout:
    key: str
    size: str
    stack_intervals: bool
    short_headings: bool
    # Tables with this many columns or more span the page (``table*``) in a two-column paper.
    wide_from: int
    tabcolsep: str
    document_options: str


LAYOUTS = {
    # 2.5 pt between columns: at 3 pt the widest table of a column came within a point of
    # ACL's column with some campaigns' figures, and past it with others.
    "two": Layout("two", r"\footnotesize", True, True, 7, "2.5pt", "twocolumn"),
    "one": Layout("one", r"\small", True, False, 99, "4pt", ""),
}
DEFAULT = "two"
# An estimate with its interval as ``tables`` writes it: "78.8 [62.2, 89.3]", "0.5 unreliable".
ESTIMATE = re.compile(r"^(\S+) (\[.*\]|unreliable)$")


def heading(column: Column, layout: Layout) -> str:
    return column.short if layout.short_headings and column.short else column.heading


def key(columns: Sequence[Column], layout: Layout) -> str:
    """ "Val.: validated; Exc.: excluded." for the abbreviations a table uses."""
    used = [c for c in columns if layout.short_headings and c.short]
    if not used:
        return ""
    return " " + "; ".join(f"{c.short}: {c.heading}" for c in used) + "."


def spec(columns: Sequence[Column]) -> str:
    """The first column, when it holds names, takes the width left and wraps."""
    parts = []
    for index, column in enumerate(columns):
        if column.numeric:
            parts.append("r")
        elif index == 0:
            parts.append(r">{\raggedright\arraybackslash}X")
        else:
            parts.append("l")
    return "".join(parts)


def number_cell(text: str, layout: Layout, escape: Escape) -> str:
    """An estimate with its interval under it (``two``), or as one line."""
    found = ESTIMATE.match(text)
    if not layout.stack_intervals or found is None:
        return escape(text)
    value, interval = (escape(part) for part in found.groups())
    return rf"\begin{{tabular}}[t]{{@{{}}r@{{}}}}{value}\\{{\scriptsize {interval}}}\end{{tabular}}"


def name_cell(text: str, escape: Escape) -> str:
    """A name that may break after ``:`` or ``/`` (``builtin:profile-overlap``)."""
    return re.sub(r"([:/])", r"\1\\allowbreak{}", escape(text))


def table(found: Table, layout: Layout, escape: Escape) -> str:
    wide = len(found.columns) >= layout.wide_from or (found.wide and layout.wide_from < 99)
    environment = "table*" if wide else "table"
    headings = [heading(column, layout) for column in found.columns]
    rows = [
        " & ".join(
            number_cell(cell, layout, escape) if column.numeric else name_cell(cell, escape)
            for cell, column in zip(row, found.columns, strict=True)
        )
        + r" \\"
        for row in found.rows
    ]
    return "\n".join(
        [
            rf"\begin{{{environment}}}[t]",
            r"\centering",
            layout.size,
            rf"\setlength{{\tabcolsep}}{{{layout.tabcolsep}}}",
            rf"\caption{{{escape(found.caption + key(found.columns, layout))}}}",
            rf"\label{{tab:{found.key}}}",
            rf"\begin{{tabularx}}{{\linewidth}}{{{spec(found.columns)}}}",
            r"\toprule",
            " & ".join(escape(text) for text in headings) + r" \\",
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabularx}",
            rf"\end{{{environment}}}",
        ]
    )
