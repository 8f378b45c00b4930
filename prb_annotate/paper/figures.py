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

from prb_annotate.audit.intervals import SHORT_NAMES
from prb_annotate.paper import numbers as fmt
from prb_annotate.paper.method_words import ordered
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
# Krippendorff (2004): alpha >= 0.800 reliable, >= 0.667 for tentative conclusions. They are
# alpha's marks: drawn on the alpha rows only, never across Gwet's AC1 / AC2.
ALPHA_MARKS = (0.667, 0.8)
# How a row whose interval is not drawn says why (as the audit page's chart labels it).
UNRELIABLE_LABEL = "{} (unreliable)"
UNDEFINED_LABEL = "{} (undefined)"


@dataclass(frozen=True)
class Row:
    """One bar or dot: a value with its interval (``None`` where there is none to draw)."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    # Whether the figure's dashed marks are drawn on this row (alpha's marks: alpha rows only).
    marked: bool = True


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


def _agreement_row(question: Mapping[str, Any], coefficient: Mapping[str, Any]) -> Row:
    """A coefficient's dot and interval; an unreliable interval is not drawn and its row says
    "(unreliable)", an undefined coefficient draws nothing and says "(undefined)"; alpha's
    marks are drawn on alpha's rows alone."""
    alpha = str(coefficient["key"]).startswith("alpha")
    label = f"{question['label']}: {'alpha' if alpha else 'AC'}"
    value = fmt.value_of(coefficient)
    if value is None:
        return Row(UNDEFINED_LABEL.format(label), None, marked=alpha)
    if not fmt.interval_of(coefficient).reliable:
        return Row(UNRELIABLE_LABEL.format(label), value, marked=alpha)
    row = _row(label, coefficient)
    return Row(row.label, row.value, row.low, row.high, marked=alpha)


def agreement_figure(audit: Mapping[str, Any]) -> Figure:
    """The agreement per question, its caption saying what is drawn: the intervals' level and
    method where some are drawn, which rows show their estimate alone and why, and that the
    dashed marks are alpha's, on alpha's rows."""
    coefficients = [
        (question, coefficient)
        for question in audit["agreement"]
        for key in AGREEMENT_KEYS[question["kind"]]
        for coefficient in question["coefficients"]
        if coefficient["key"] == key
    ]
    rows = tuple(_agreement_row(question, coefficient) for question, coefficient in coefficients)
    drawn = [c for row, (_, c) in zip(rows, coefficients, strict=True) if row.low is not None]
    caption = "Agreement per question: Krippendorff's alpha and Gwet's AC1 (AC2 for the ratings)"
    if drawn:
        level = fmt.confidence_level(audit["settings"]["confidence"])
        methods = ordered(SHORT_NAMES.get(str(c["method"]), str(c["method"])) for c in drawn)
        caption += f", with {level}% intervals ({'; '.join(methods)}; see the methods)"
    caption += ". " + _undrawn(audit, [c for _, c in coefficients], bool(drawn))
    if any(row.marked for row in rows):
        marks = " and ".join(fmt.real(mark) for mark in ALPHA_MARKS)
        caption += (
            f"Dashed marks on the alpha rows at {marks}, Krippendorff's lowest alpha for "
            "tentative and for reliable conclusions (they do not apply to AC1 or AC2)."
        )
    return Figure("agreement", caption.strip(), rows, "interval", ALPHA_MARKS)


def _undrawn(
    audit: Mapping[str, Any], coefficients: Sequence[Mapping[str, Any]], some_drawn: bool
) -> str:
    """Which rows show their estimate without an interval, and why."""
    text = ""
    if not audit["settings"]["resamples"]:
        text = "No interval was computed (no resamples were drawn): each row is its estimate. "
    elif any(c.get("reliable") is False and fmt.value_of(c) is not None for c in coefficients):
        text = (
            "The rows marked (unreliable) show their estimate alone: their intervals were "
            "marked unreliable (the methods say why). "
            if some_drawn
            else "Every interval was marked unreliable (the methods say why), so each row is its "
            "estimate. "
        )
    if any(fmt.value_of(c) is None for c in coefficients):
        text += "The rows marked (undefined) have no estimate. "
    return text


def figures(numbers: Mapping[str, Any]) -> list[Figure]:
    audit = numbers["audit"]
    level = fmt.confidence_level(audit["settings"]["confidence"])
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
        agreement_figure(audit),
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
        # An undefined coefficient draws no dot (its label says so), never one at zero.
        defined = [
            (row.value, position)
            for position, row in zip(positions, rows, strict=True)
            if row.value is not None
        ]
        if defined:
            axes.plot([x for x, _ in defined], [y for _, y in defined], "o", color=INK)
    for position, row in zip(positions, rows, strict=True):
        if row.low is not None and row.high is not None:
            axes.plot([row.low, row.high], [position, position], color=ACCENT, linewidth=2)
    _marks(axes, figure, rows, positions)
    axes.tick_params(axis="x", labelsize=8)
    axes.spines[["top", "right"]].set_visible(False)


def _marks(axes: Any, figure: Figure, rows: Sequence[Row], positions: Sequence[int]) -> None:
    """The figure's dashed marks: across the figure when every row takes them, else on the
    rows that do (alpha's marks on alpha's rows only)."""
    style = {"color": "#5f6b7a", "linestyle": "--", "linewidth": 0.8}
    for mark in figure.marks:
        if all(row.marked for row in rows):
            axes.axvline(mark, **style)
            continue
        for position, row in zip(positions, rows, strict=True):
            if row.marked:
                axes.plot([mark, mark], [position - 0.4, position + 0.4], **style)
