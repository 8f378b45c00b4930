"""Paper files for any name and category: ``paper.tex`` compiles when a campaign name holds a
blank line or a category is Korean, Chinese, Japanese, an arrow, a comparison or an emoji, and
LaTeX's own markup is printed as text; the Markdown files escape every character Markdown gives
a meaning, as the dataset card does."""

import shutil
import subprocess
from pathlib import Path

import pytest

from prb_annotate.exports.markdown import plain_text
from prb_annotate.paper import latex, markdown
from prb_annotate.paper.tables import Column, Table

HOSTILE = [
    "평가 범주",
    "中文类别",
    "日本語のカテゴリ",
    "≥ 4 → better ≠ worse",
    "emoji 🙂",
    "$\\frac{1}{$",
    "\\input{/etc/passwd} & 50% #1 _x_ ^ ~ {braces}",
    "two\n\nparagraphs\r\nand\u2028more",
]


def hostile_table() -> Table:
    return Table(
        key="categories",
        caption="Validated share per category: 평가 ≥ 0.5",
        columns=(Column("Category", numeric=False), Column("Validated")),
        rows=tuple((name, "0.50") for name in HOSTILE),
    )


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_paper_tex_compiles_for_any_name_and_category(tmp_path: Path) -> None:
    inputs = {"tables": latex.tables([hostile_table()]), "methods": latex.escape(" ".join(HOSTILE))}
    for name, text in inputs.items():
        (tmp_path / f"{name}.tex").write_text(text, encoding="utf-8")
    (tmp_path / "references.bib").write_text("", encoding="utf-8")
    title = "Campaign\n\nwith a blank line, 평가 and $\\frac{1}{$"
    document = latex.document(title, [], inputs=list(inputs.values()))
    (tmp_path / "paper.tex").write_text(document, encoding="utf-8")
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "paper"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "paper.pdf").stat().st_size > 0
    # Every character pdflatex lacks is printed as its code point: 🙂 and 中 among them.
    assert r"\DeclareUnicodeCharacter{1F642}{\codepoint{1F642}}" in document
    assert r"\DeclareUnicodeCharacter{4E2D}{\codepoint{4E2D}}" in document
    assert "Missing character" not in (tmp_path / "paper.log").read_text(errors="replace")


def test_latex_escape_folds_lines_and_leaves_no_markup() -> None:
    escaped = latex.escape("a\n\nb\r\nc ≥ d \\input{x} $y$")
    assert "\n" not in escaped
    assert "\r" not in escaped
    assert "\\input" not in escaped.replace("\\textbackslash{}input", "")
    assert escaped.startswith("a b c $\\geq$ d")


@pytest.mark.parametrize(
    "name",
    [
        "[a link](https://example.org)",
        "![remote image](https://example.org/x.png)",
        "# a heading",
        "<img src=x onerror=alert(1)>",
        "*em* _em_ `code` | column ~~strike~~ $math$",
        "two\n\n# lines",
    ],
)
def test_markdown_escapes_every_name_as_the_dataset_card_does(name: str) -> None:
    escaped = markdown.escape(name)
    # The dataset card's escaping, parentheses aside (they mean nothing after an escaped "]").
    assert escaped == plain_text(name).replace("\\(", "(").replace("\\)", ")")
    assert "\n" not in escaped
    for mark in ("[", "]", "<", "#", "|", "*", "_", "`", "$", "!"):
        assert escaped.count(mark) == escaped.count("\\" + mark), (mark, escaped)
