"""Small server-rendered SVG charts: no JavaScript, no CDN, readable offline and in print.

Each function returns a complete ``<svg>`` element as a string. Every piece of text is escaped
here, so callers may mark the result safe.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 880
LABEL_WIDTH = 340
ROW_HEIGHT = 24
TOP = 26
BOTTOM = 10
RIGHT = 70
INK = "#1d2330"
MUTED = "#5f6b7a"
LINE = "#d9dee5"
ACCENT = "#2457c5"
GOOD = "#1f7a3a"
BAD = "#b3261e"
# The pages' font stack (app.css), for a chart read without it: names and categories in any
# script, Hangul, kana and Han from the first CJK font the reader has.
FONT_FAMILY = (
    "system-ui,-apple-system,'Segoe UI','Noto Sans CJK KR','Noto Sans KR','Apple SD Gothic Neo',"
    "'Malgun Gothic','Noto Sans CJK JP','Noto Sans CJK SC',sans-serif"
)
# Each colour as a class (app.css maps it to the page theme, light or dark) and, for a chart
# read without that stylesheet, the light theme's colour as a presentation attribute.
INK_FILL = f'class="c-ink" fill="{INK}"'
MUTED_FILL = f'class="c-muted" fill="{MUTED}"'
GRID_STROKE = f'class="c-grid" stroke="{LINE}"'
MARK_STROKE = f'class="c-mark" stroke="{MUTED}"'
ACCENT_STROKE = f'class="c-accent" stroke="{ACCENT}"'
INK_STROKE = f'class="c-ink-line" stroke="{INK}"'
GOOD_FILL = f'class="c-good" fill="{GOOD}"'
BAD_FILL = f'class="c-bad" fill="{BAD}"'


@dataclass(frozen=True)
class Interval:
    """One row of a chart: a point with an optional interval around it."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""
    # Whether the chart's marks (interval_chart's ``marks``) are drawn across this row: the
    # agreement chart's alpha thresholds belong to the alpha rows only.
    marked: bool = True


def _scale(lo: float, hi: float, left: float = LABEL_WIDTH) -> "_Scale":
    return _Scale(lo, hi, left, WIDTH - RIGHT)


@dataclass(frozen=True)
class _Scale:
    lo: float
    hi: float
    left: float
    right: float

    def __call__(self, value: float) -> float:
        value = min(max(value, self.lo), self.hi)
        return self.left + (value - self.lo) / (self.hi - self.lo) * (self.right - self.left)


# Estimated widths at the charts' 12 px font: a Latin letter, a CJK character (a full em).
LATIN_CHAR_PX = 6.8
WIDE_CHAR_PX = 12.0


def _text_width(text: str) -> float:
    return sum(WIDE_CHAR_PX if ord(char) >= 0x1100 else LATIN_CHAR_PX for char in text)


def _label_column(labels: Sequence[str]) -> float:
    """Where the plot starts: after the longest label (set right-aligned before it), from
    ``LABEL_WIDTH`` up to half the chart. The picture keeps its width, so its text keeps its
    size on a phone; a label longer than half the chart is shortened (``_shown_label``)."""
    widest = max((_text_width(label) for label in labels), default=0.0)
    return float(math.ceil(min(max(LABEL_WIDTH, widest + 12), WIDTH / 2)))


def _shown_label(label: str, left: float) -> str:
    """The label as drawn at ``left``: shortened with "…" where it would run off the left
    edge (the whole label stays in the element's tooltip)."""
    room = left - 12
    if _text_width(label) <= room:
        return escape(label)
    shown = label
    while shown and _text_width(shown + "…") > room:
        shown = shown[:-1]
    return f"<title>{escape(label)}</title>{escape(shown.rstrip())}…"


def _frame(height: float, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {WIDTH} {height:.0f}" width="100%" '
        # Presentation attributes, not a style attribute: the pages' Content-Security-Policy
        # allows no inline styles (app.css caps the width).
        f'font-family="{FONT_FAMILY}" font-size="12">'
        f"<title>{escape(title)}</title>" + "".join(body) + "</svg>"
    )


def _axis(
    scale: _Scale, ticks: Sequence[float], height: float, marks: Sequence[float]
) -> list[str]:
    parts = []
    for tick in ticks:
        x = scale(tick)
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{height - BOTTOM}" '
            f"{GRID_STROKE}/>"
            f'<text x="{x:.1f}" y="{TOP - 10}" text-anchor="middle" {MUTED_FILL}>'
            f"{tick:g}</text>"
        )
    for mark in marks:
        x = scale(mark)
        parts.append(
            f'<line x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{height - BOTTOM}" '
            f'{MARK_STROKE} stroke-dasharray="3 3"/>'
        )
    return parts


def interval_chart(
    rows: Sequence[Interval],
    *,
    title: str,
    lo: float | None = None,
    hi: float = 1.0,
    marks: Sequence[float] = (),
) -> str:
    """Dots with interval bars, one row each (coefficients with bootstrap intervals).

    The axis starts at ``lo`` (default: 0, or lower when an interval reaches below 0). The
    ``marks`` are dashed across the rows that are ``marked`` only.
    """
    lows = [row.low for row in rows if row.low is not None] + [
        row.value for row in rows if row.value is not None
    ]
    start = lo if lo is not None else min([0.0, *lows])
    start = min(start, -0.2) if start < 0 else start
    left = _label_column([row.label for row in rows])
    scale = _scale(start, hi, left)
    height = TOP + ROW_HEIGHT * max(len(rows), 1) + BOTTOM
    step = 0.2 if hi - start <= 1.4 else 0.5
    first = round(start / step) * step
    ticks = [round(first + i * step, 2) for i in range(int((hi - first) / step + 1.01))]
    parts = _axis(scale, ticks, height, ())
    for index, row in enumerate(rows):
        y = TOP + ROW_HEIGHT * index + ROW_HEIGHT / 2
        if row.marked:
            parts += _row_marks(scale, marks, y)
        parts.append(
            f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" {INK_FILL}>'
            f"{_shown_label(row.label, left)}</text>"
        )
        if row.value is None:
            parts.append(
                f'<text x="{left + 4}" y="{y + 4:.1f}" {MUTED_FILL}>'
                f"{escape(row.note or 'undefined')}</text>"
            )
            continue
        if row.low is not None and row.high is not None:
            parts.append(
                f'<line x1="{scale(row.low):.1f}" y1="{y:.1f}" x2="{scale(row.high):.1f}" '
                f'y2="{y:.1f}" {ACCENT_STROKE} stroke-width="3" stroke-linecap="round">'
                f"<title>{row.low:.3f} to {row.high:.3f}</title></line>"
            )
        parts.append(
            f'<circle cx="{scale(row.value):.1f}" cy="{y:.1f}" r="5" {INK_FILL}>'
            f"<title>{escape(row.label)}: {row.value:.3f}</title></circle>"
            f'<text x="{WIDTH - RIGHT + 8}" y="{y + 4:.1f}" {INK_FILL}>{row.value:.3f}</text>'
        )
    return _frame(height, title, parts)


def _row_marks(scale: _Scale, marks: Sequence[float], y: float) -> list[str]:
    half = ROW_HEIGHT / 2
    return [
        f'<line x1="{scale(mark):.1f}" y1="{y - half:.1f}" x2="{scale(mark):.1f}" '
        f'y2="{y + half:.1f}" {MARK_STROKE} stroke-dasharray="3 3"/>'
        for mark in marks
    ]


def share_chart(rows: Sequence[Interval], *, title: str, marks: Sequence[float] = ()) -> str:
    """Horizontal bars of shares in [0, 1], with their intervals."""
    left = _label_column([row.label for row in rows])
    scale = _scale(0.0, 1.0, left)
    height = TOP + ROW_HEIGHT * max(len(rows), 1) + BOTTOM
    parts = _axis(scale, [0, 0.25, 0.5, 0.75, 1], height, marks)
    for index, row in enumerate(rows):
        y = TOP + ROW_HEIGHT * index
        middle = y + ROW_HEIGHT / 2
        parts.append(
            f'<text x="{left - 8}" y="{middle + 4:.1f}" text-anchor="end" {INK_FILL}>'
            f"{_shown_label(row.label, left)}</text>"
        )
        if row.value is None:
            parts.append(
                f'<text x="{left + 4}" y="{middle + 4:.1f}" {MUTED_FILL}>'
                f"{escape(row.note or 'no data')}</text>"
            )
            continue
        parts.append(
            f'<rect x="{left}" y="{y + 5:.1f}" width="{scale(row.value) - left:.1f}"'
            f' height="{ROW_HEIGHT - 10}" {GOOD_FILL} opacity="0.75">'
            f"<title>{escape(row.label)}: {row.value:.1%}</title></rect>"
        )
        if row.low is not None and row.high is not None:
            parts.append(
                f'<line x1="{scale(row.low):.1f}" y1="{middle:.1f}" x2="{scale(row.high):.1f}" '
                f'y2="{middle:.1f}" {INK_STROKE} stroke-width="1.5"/>'
            )
        parts.append(
            f'<text x="{WIDTH - RIGHT + 8}" y="{middle + 4:.1f}" {INK_FILL}>{row.value:.1%}</text>'
        )
    return _frame(height, title, parts)


def count_chart(rows: Sequence[tuple[str, int]], *, title: str) -> str:
    """Horizontal bars of counts (e.g. pairs per failure reason)."""
    top = max([count for _, count in rows] + [1])
    left = _label_column([label for label, _ in rows])
    scale = _scale(0.0, float(top), left)
    height = TOP + ROW_HEIGHT * max(len(rows), 1) + BOTTOM
    parts = [
        f'<text x="{left}" y="{TOP - 10}" {MUTED_FILL}>0</text>'
        f'<text x="{WIDTH - RIGHT}" y="{TOP - 10}" text-anchor="end" {MUTED_FILL}>{top}</text>'
    ]
    for index, (label, count) in enumerate(rows):
        y = TOP + ROW_HEIGHT * index
        middle = y + ROW_HEIGHT / 2
        parts.append(
            f'<text x="{left - 8}" y="{middle + 4:.1f}" text-anchor="end" {INK_FILL}>'
            f"{_shown_label(label, left)}</text>"
            f'<rect x="{left}" y="{y + 5:.1f}" width="{scale(count) - left:.1f}" '
            f'height="{ROW_HEIGHT - 10}" {BAD_FILL} opacity="0.7"/>'
            f'<text x="{WIDTH - RIGHT + 8}" y="{middle + 4:.1f}" {INK_FILL}>{count}</text>'
        )
    return _frame(height, title, parts)


@dataclass(frozen=True)
class Point:
    """One point of a line over time: seconds since the epoch, and a value."""

    at: float
    value: float


def line_chart(
    points: Sequence[Point], *, title: str, top: float, top_label: str, time_labels: Sequence[str]
) -> str:
    """A step line rising over time (e.g. items complete), up to a dashed ``top`` (the total).

    ``time_labels`` name the first and last time under the axis.
    """
    height = 200.0
    left, right, upper, lower = 60.0, WIDTH - 20.0, 20.0, height - 30.0
    top = max(top, max((point.value for point in points), default=0.0), 1.0)
    start = points[0].at if points else 0.0
    span = (points[-1].at - start) if len(points) > 1 else 1.0
    span = span or 1.0

    def x(at: float) -> float:
        return left + (at - start) / span * (right - left)

    def y(value: float) -> float:
        return lower - value / top * (lower - upper)

    parts = [
        f'<line x1="{left}" y1="{lower}" x2="{right}" y2="{lower}" {GRID_STROKE}/>'
        f'<line x1="{left}" y1="{y(top):.1f}" x2="{right}" y2="{y(top):.1f}" {MARK_STROKE} '
        f'stroke-dasharray="3 3"/>'
        f'<text x="{left - 6}" y="{y(top) + 4:.1f}" text-anchor="end" {MUTED_FILL}>'
        f"{escape(top_label)}</text>"
        f'<text x="{left - 6}" y="{lower + 4}" text-anchor="end" {MUTED_FILL}>0</text>'
    ]
    if time_labels:
        parts.append(
            f'<text x="{left}" y="{height - 8}" {MUTED_FILL}>{escape(time_labels[0])}</text>'
            f'<text x="{right}" y="{height - 8}" text-anchor="end" {MUTED_FILL}>'
            f"{escape(time_labels[-1])}</text>"
        )
    if points:
        steps = [f"{x(points[0].at):.1f},{y(0):.1f}"]
        previous = 0.0
        for point in points:
            steps += [
                f"{x(point.at):.1f},{y(previous):.1f}",
                f"{x(point.at):.1f},{y(point.value):.1f}",
            ]
            previous = point.value
        parts.append(
            f'<polyline points="{" ".join(steps)}" fill="none" {ACCENT_STROKE} stroke-width="2"/>'
        )
    else:
        parts.append(f'<text x="{left + 8}" y="{lower - 8}" {MUTED_FILL}>nothing yet</text>')
    return _frame(height, title, parts)
