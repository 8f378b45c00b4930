"""The pages' charts name fonts that draw Hangul, kana and Han, the same stack as the pages'
own text (app.css), so a chart read on its own draws a Korean category as the page does."""

import re
from pathlib import Path

from prb_annotate.audit import charts

APP_CSS = Path(charts.__file__).parents[1] / "static" / "prb_annotate" / "app.css"
CJK = ("Noto Sans CJK KR", "Apple SD Gothic Neo", "Malgun Gothic", "Noto Sans CJK SC")


def families(stack: str) -> list[str]:
    return [name.strip().strip("'\"") for name in stack.split(",")]


def test_a_chart_with_a_korean_label_names_cjk_fonts_as_the_page_does() -> None:
    svg = charts.interval_chart([charts.Interval("건강 관리 <b>", 0.5, 0.3, 0.7)], title="평가")
    assert "건강 관리 &lt;b&gt;" in svg
    stack = re.search(r'font-family="([^"]+)"', svg)
    assert stack is not None
    body = re.search(r"body \{[^}]*font:15px/1\.5 ([^;]+);", APP_CSS.read_text())
    assert body is not None
    assert families(stack.group(1)) == families(body.group(1))
    for name in CJK:
        assert name in families(stack.group(1))
    assert families(stack.group(1))[-1] == "sans-serif"


def test_a_long_label_opens_the_view_box_to_the_left_instead_of_being_cut() -> None:
    """A label set right-aligned before the plot starts inside the picture however long it is
    (an unreliable coefficient's "(unreliable)" made the audit's labels run off the left)."""
    short = charts.Interval("alpha", 0.5, 0.4, 0.6)
    long = charts.Interval("Rejected answer: helpfulness · Kripp. alpha (ord.) (unreliable)", 0.1)
    korean = charts.Interval("거절된 답변: 도움이 되는 정도 · Krippendorff 알파 (신뢰 불가)", 0.1)

    def view_box(chart: str) -> list[float]:
        found = re.search(r'viewBox="([^"]+)"', chart)
        assert found is not None
        return [float(value) for value in found.group(1).split()]

    assert view_box(charts.interval_chart([short], title="t"))[:3] == [0, 0, charts.WIDTH]
    for row in (long, korean):
        for chart in (
            charts.interval_chart([short, row], title="t"),
            charts.share_chart([short, row], title="t"),
            charts.count_chart([(row.label, 3)], title="t"),
        ):
            left, _, width, _ = view_box(chart)
            label_start = charts.LABEL_WIDTH - 8 - charts._text_width(row.label)
            assert left <= label_start < 0
            assert left + width == charts.WIDTH
