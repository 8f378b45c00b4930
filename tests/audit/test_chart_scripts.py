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
