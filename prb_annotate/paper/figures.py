"""The audit's charts as vector figures (PDF for LaTeX, SVG for Markdown and the web).

matplotlib is imported inside :func:`draw`, with the Agg backend (no display), so importing
this module (as the web process does to build the zip on request) loads nothing heavy.
The figures show what the tables show: the tables are the numbers to cite.

Labels are names and categories in any script: text is drawn in DejaVu Sans, with the first
Noto Sans CJK family found (Debian: fonts-noto-cjk) as matplotlib's fallback for the Hangul,
kana and Han it lacks (:func:`font_families`). Without one, such a label draws as empty boxes
and matplotlib warns "Glyph ... missing".
"""

import functools
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prb_annotate.paper import numbers as fmt
from prb_annotate.paper.tables import AGREEMENT_KEYS, category_name

WIDTH_INCHES = 6.5
ROW_INCHES = 0.32
INK = "#1d2330"
ACCENT = "#2457c5"
GOOD = "#1f7a3a"
BAD = "#b3261e"
LATIN_FONT = "DejaVu Sans"
# Any of them draws Hangul, kana and Han (in its region's forms): the first found is used.
CJK_FONTS = ("Noto Sans CJK KR", "Noto Sans CJK JP", "Noto Sans CJK SC", "Noto Sans CJK TC")
# Krippendorff (2004): alpha >= 0.800 reliable, >= 0.667 for tentative conclusions.
ALPHA_MARKS = (0.667, 0.8)


@dataclass(frozen=True)
class Row:
    """One bar or dot: a value with its interval (``None`` where there is none to draw)."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Figure:
    name: str
    caption: str
    rows: tuple[Row, ...]
    kind: str  # "interval" (dots, axis may go below 0), "share" (bars in [0, 1]), "count"
    marks: tuple[float, ...] = ()


def _row(label: str, entry: Mapping[str, Any]) -> Row:
    interval = fmt.interval_of(entry)
    if not interval.printable:
        return Row(label, fmt.value_of(entry))
    return Row(label, fmt.value_of(entry), interval.low, interval.high)


def figures(numbers: Mapping[str, Any]) -> list[Figure]:
    audit = numbers["audit"]
    level = fmt.confidence_level(audit["settings"]["confidence"])
    agreement = [
        _row(f"{question['label']}: {'alpha' if key.startswith('alpha') else 'AC'}", coefficient)
        for question in audit["agreement"]
        for key in AGREEMENT_KEYS[question["kind"]]
        for coefficient in question["coefficients"]
        if coefficient["key"] == key
    ]
    validity = audit["validity"]
    shares = [_row("All pairs", validity["overall"]["validated_share"])] + [
        _row(category_name(row["category"]), row["validated_share"])
        for row in validity["per_category"]
    ]
    reasons = [Row(row["label"], row["pairs"]) for row in validity["reasons"] if row["pairs"]]
    position, length = audit["bias"]["position"], audit["bias"]["length"]
    bias = [
        _row("Answers naming response A", position["share_a"]),
        _row("Pairs: chosen is longer", length["pairs_chosen_longer"]),
        _row("Answers picking the longer", length["answers_pick_longer"]),
        _row("Chosen picked | chosen longer", length["pick_chosen_when_chosen_longer"]),
        _row("Chosen picked | chosen shorter", length["pick_chosen_when_chosen_shorter"]),
    ]
    return [
        Figure(
            "agreement",
            f"Agreement per question with {level}% bootstrap intervals; dashed lines at alpha "
            "0.667 and 0.800.",
            tuple(agreement),
            "interval",
            ALPHA_MARKS,
        ),
        Figure(
            "validity",
            f"Validated share of the decided pairs, with {level}% Wilson intervals.",
            tuple(shares),
            "share",
        ),
        Figure("reasons", "Pairs per reason for not being validated.", tuple(reasons), "count"),
        Figure(
            "bias",
            f"Position and length bias: shares with {level}% Wilson intervals; dashed line "
            "at one half.",
            tuple(bias),
            "share",
            (0.5,),
        ),
    ]


def draw(figure: Figure) -> dict[str, bytes]:
    """``{"NAME.pdf": ..., "NAME.svg": ...}``: the same chart in both formats, without dates in
    the files, so that the same audit gives the same bytes."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    matplotlib.rcParams["svg.hashsalt"] = "prb-annotate"
    # Labels are names and categories as users typed them: drawn as plain text, never parsed
    # as math (``$\frac{1}{$`` is a label, not a formula that fails to parse).
    # A list of font families: matplotlib takes each glyph from the first that has it.
    families = list(font_families())
    with matplotlib.rc_context(
        {"text.parse_math": False, "text.usetex": False, "font.family": families}
    ):
        return _drawn(figure, pyplot)


@functools.cache
def font_families() -> tuple[str, ...]:
    """DejaVu Sans, then the first of ``CJK_FONTS`` matplotlib finds (fonts installed after
    its font cache was written are added from the system's font folders)."""
    from matplotlib import font_manager

    def found() -> str | None:
        names = {font.name for font in font_manager.fontManager.ttflist}
        return next((name for name in CJK_FONTS if name in names), None)

    if found() is None:
        for path in font_manager.findSystemFonts():
            if "NotoSansCJK" in path.replace(" ", ""):
                font_manager.fontManager.addfont(path)
    cjk = found()
    return (LATIN_FONT, cjk) if cjk else (LATIN_FONT,)


def _drawn(figure: Figure, pyplot: Any) -> dict[str, bytes]:
    rows = figure.rows or (Row("nothing to show", None),)
    height = 0.8 + ROW_INCHES * len(rows)
    canvas, axes = pyplot.subplots(figsize=(WIDTH_INCHES, height))
    try:
        _plot(axes, figure, rows)
        canvas.tight_layout()
        found = {}
        for extension, metadata in (
            ("pdf", {"CreationDate": None, "Producer": None}),
            ("svg", {"Date": None}),
        ):
            buffer = io.BytesIO()
            canvas.savefig(buffer, format=extension, metadata=metadata)
            found[f"{figure.name}.{extension}"] = buffer.getvalue()
        return found
    finally:
        pyplot.close(canvas)


def _plot(axes: Any, figure: Figure, rows: Sequence[Row]) -> None:
    positions = list(range(len(rows)))[::-1]
    axes.set_yticks(positions, [row.label for row in rows], fontsize=8)
    values = [row.value if row.value is not None else 0.0 for row in rows]
    if figure.kind == "count":
        axes.barh(positions, values, color=BAD, alpha=0.75)
        axes.set_xlabel("pairs")
    elif figure.kind == "share":
        axes.barh(positions, values, color=GOOD, alpha=0.75)
        axes.set_xlim(0, 1)
    else:
        lows = [row.low for row in rows if row.low is not None] + values
        axes.set_xlim(min(0.0, *lows) - 0.05, 1.0)
        axes.plot(values, positions, "o", color=INK)
    for position, row in zip(positions, rows, strict=True):
        if row.low is not None and row.high is not None:
            axes.plot([row.low, row.high], [position, position], color=ACCENT, linewidth=2)
    for mark in figure.marks:
        axes.axvline(mark, color="#5f6b7a", linestyle="--", linewidth=0.8)
    axes.tick_params(axis="x", labelsize=8)
    axes.spines[["top", "right"]].set_visible(False)
