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


def test_a_long_label_moves_the_plot_over_instead_of_being_cut() -> None:
    """A label set right-aligned before the plot starts inside the picture (an unreliable
    coefficient's "(unreliable)" made the audit's labels run off the left): the plot starts
    after the longest label, up to half the chart; a longer label is shortened with "…" and
    keeps its whole text in its tooltip. The picture keeps its width, so its text keeps its
    size on a phone."""
    short = charts.Interval("alpha", 0.5, 0.4, 0.6)
    long = charts.Interval("Rejected answer: helpfulness · Kripp. alpha (ord.) (unreliable)", 0.1)
    korean = charts.Interval("거절된 답변: 도움이 되는 정도 · Krippendorff 알파 (신뢰 불가)", 0.1)
    endless = charts.Interval("a very long category name " * 6, 0.2)

    def drawn(chart: str) -> tuple[str, list[float]]:
        view = re.search(r'viewBox="([^"]+)"', chart)
        anchors = re.findall(r'<text x="([0-9.]+)" y="[0-9.]+" text-anchor="end"', chart)
        assert view is not None
        return view.group(1), [float(x) for x in anchors]

    for row in (long, korean):
        for chart in (
            charts.interval_chart([short, row], title="t"),
            charts.share_chart([short, row], title="t"),
            charts.count_chart([(row.label, 3)], title="t"),
        ):
            view, anchors = drawn(chart)
            assert view.split()[:3] == ["0", "0", str(charts.WIDTH)]
            assert max(anchors) - charts._text_width(row.label) >= 0
            assert row.label in chart
    chart = charts.interval_chart([short, endless], title="t")
    _, anchors = drawn(chart)
    assert max(anchors) == charts.WIDTH / 2 - 8
    assert f"<title>{endless.label}</title>" in chart
    assert "…</text>" in chart
