"""A campaign whose name and categories are Korean gets a paper: ``paper.tex`` compiles with
xelatex (the Korean words are in the PDF's text) and with pdflatex (each Korean character
printed as its code point, visibly); the files say which engine prints them whole."""

import hashlib
import io
import re
import shutil
import subprocess
import warnings
import zipfile
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.models import Campaign, Dataset, Pair
from prb_annotate.paper import figures as charts
from prb_annotate.paper import latex
from tests.support.audit import annotate

CAMPAIGN_NAME = "한국어 개인화 평가"
CATEGORIES = ("건강 관리", "요리")


@pytest.fixture
def korean(db: None) -> Campaign:
    """Eight pairs in two Korean categories, each answered by two annotators."""
    dataset = Dataset.objects.create(name="한국어 데이터", source="tests")
    Pair.objects.bulk_create(
        Pair(
            dataset=dataset,
            external_id=f"ko-{index}",
            category=CATEGORIES[index % 2],
            question=f"질문 {index}",
            chosen="짧은 답",
            rejected="긴 답변입니다",
            content_hash=hashlib.sha256(f"ko{index}".encode()).hexdigest(),
        )
        for index in range(8)
    )
    campaign = create_campaign(dataset, CAMPAIGN_NAME, k=2, seed=1)
    users = [User.objects.create_user(name) for name in ("민지", "서준")]
    for item in campaign.items.order_by("pk"):
        for user in users:
            annotate(item, user, fit="chosen" if item.pk % 3 else "rejected")
    return campaign


def write_paper(campaign: Campaign, folder: Path) -> Path:
    call_command(
        "audit",
        "--campaign",
        str(campaign.pk),
        "--format",
        "latex",
        "--out",
        str(folder),
        "--resamples",
        "50",
        stderr=StringIO(),
    )
    return folder


def tex_finds(*files: str) -> bool:
    """Whether TeX's own search (kpsewhich) finds every one of ``files``."""
    if shutil.which("kpsewhich") is None:
        return False
    found = subprocess.run(["kpsewhich", *files], capture_output=True, text=True, check=False)
    return len(found.stdout.split()) == len(files)


# The text in the order it was set: a heading broken over two lines stays whole even where a
# float of the other column sits beside its second line (read by position, the float's line
# would come between them).
IN_SET_ORDER = ("-raw",)


def compiled(folder: Path, engine: str) -> str:
    """``paper.tex`` compiled by ``engine`` (skipped where it or pdftotext is missing); the
    PDF's text without its blanks (a heading may break anywhere)."""
    missing = [tool for tool in (engine, "pdftotext") if shutil.which(tool) is None]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} not installed (Debian: texlive-xetex, texlive-lang-cjk, "
            "fonts-noto-cjk, poppler-utils)"
        )
    if engine == "xelatex" and not tex_finds("xeCJK.sty", "ctexhook.sty"):
        pytest.skip("xeCJK or its ctexhook not installed (Debian: texlive-lang-cjk, -chinese)")
    done = subprocess.run(
        [engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "paper.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    return squeezed(
        subprocess.run(
            ["pdftotext", *IN_SET_ORDER, "paper.pdf", "-"],
            cwd=folder,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_the_files_say_to_compile_with_xelatex(korean: Campaign, tmp_path: Path) -> None:
    folder = write_paper(korean, tmp_path / "paper")
    paper = (folder / "paper.tex").read_text(encoding="utf-8")
    assert paper.startswith("% Compile with xelatex")
    assert CAMPAIGN_NAME in paper
    assert r"\usepackage{xeCJK}" in paper
    assert r"\DeclareUnicodeCharacter{D55C}{\codepoint{D55C}}" in paper  # 한
    assert "$pdf_mode = 5;" in (folder / "latexmkrc").read_text()
    tables = (folder / "tables.tex").read_text(encoding="utf-8")
    assert CATEGORIES[0] in tables
    assert "compile with xelatex" in tables.split(r"\begin")[0]


def test_korean_names_and_categories_print_with_xelatex(korean: Campaign, tmp_path: Path) -> None:
    folder = write_paper(korean, tmp_path / "paper")
    if not _has_cjk_font():
        pytest.skip("no Noto CJK font for xelatex (Debian: fonts-noto-cjk)")
    text = compiled(folder, "xelatex")
    for words in (CAMPAIGN_NAME, *CATEGORIES):
        assert squeezed(words) in text, words
    assert "[U+" not in text


def test_pdflatex_prints_what_its_fonts_lack_as_code_points(
    korean: Campaign, tmp_path: Path
) -> None:
    folder = write_paper(korean, tmp_path / "paper")
    text = compiled(folder, "pdflatex")
    assert "[U+D55C][U+AD6D][U+C5B4]" in text  # 한국어, the campaign's name
    assert "[U+AC1C][U+C778][U+D654]" in text  # 개인화
    assert "[U+C694][U+B9AC]" in text  # 요리, a category in the tables
    # Nothing lost to "?" (citations are unresolved without bibtex: "(?)").
    assert "?" not in text.replace("(??)", "").replace("(?)", "")


def test_xelatex_prints_what_its_fonts_lack_as_code_points(tmp_path: Path) -> None:
    """Thai, Cyrillic, Greek and emoji have no glyph in Latin Modern: printed as code points,
    nothing left out silently (xelatex's log would say "Missing character")."""
    names = "평가 中文 ภาษา Привет αβ 🙂 café"
    for name in ("methods.tex", "tables.tex", "references.bib"):
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "paper.tex").write_text(latex.document(names, []), encoding="utf-8")
    if not _has_cjk_font():
        pytest.skip("no Noto CJK font for xelatex (Debian: fonts-noto-cjk)")
    text = compiled(tmp_path, "xelatex")
    assert squeezed("평가 中文 [U+0E20][U+0E32][U+0E29][U+0E32] [U+041F]") in text
    assert "[U+03B1][U+03B2][U+1F642]café" in text
    assert "Missing character" not in (tmp_path / "paper.log").read_text(errors="replace")


def test_an_english_paper_asks_for_no_other_engine(tmp_path: Path) -> None:
    document = latex.document("A campaign ≥ 2 — “quoted”", [], inputs=["Résumé, café, 50\\%"])
    assert document.startswith("% Compiles with pdflatex, xelatex or lualatex.")
    assert not latex.needs_unicode_engine(document)
    assert "DeclareUnicodeCharacter" not in document
    assert "xeCJK" not in document


def test_the_audit_tables_alone_name_their_engine(korean: Campaign, tmp_path: Path) -> None:
    """``audit --format latex`` to standard output: the tables say what to compile them with,
    and they compile with xelatex inside a document with paper.tex's preamble."""
    out = StringIO()
    call_command(
        "audit", "--campaign", str(korean.pk), "--format", "latex", "--resamples", "50", stdout=out
    )
    printed = out.getvalue()
    assert "compile with xelatex" in printed
    assert r"\usepackage{xeCJK}" in printed
    if not _has_cjk_font():
        pytest.skip("no Noto CJK font for xelatex (Debian: fonts-noto-cjk)")
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "methods.tex").write_text("", encoding="utf-8")
    (folder / "tables.tex").write_text(printed, encoding="utf-8")
    (folder / "references.bib").write_text("", encoding="utf-8")
    (folder / "paper.tex").write_text(
        latex.document("tables", [], inputs=[printed]), encoding="utf-8"
    )
    text = compiled(folder, "xelatex")
    assert squeezed(CATEGORIES[1]) in text


def test_the_zip_holds_latexmkrc_and_a_preview_in_korean(korean: Campaign, login: Any) -> None:
    manager = User.objects.create_user("manager-ko", is_staff=True)
    response = login(manager).get(reverse("campaign_audit_paper", args=[korean.pk]))
    assert response.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    folder = archive.namelist()[0].split("/")[0]
    assert archive.read(f"{folder}/latexmkrc").decode().endswith("$pdf_mode = 5;\n")
    missing = [t for t in ("xelatex", "pdflatex", "pdftotext") if shutil.which(t) is None]
    if missing or not _has_cjk_font():
        pytest.skip(f"no preview in Korean here: {missing or 'no Noto CJK font'}")
    preview = archive.read(f"{folder}/preview.pdf")
    text = subprocess.run(
        ["pdftotext", *IN_SET_ORDER, "-", "-"], input=preview, capture_output=True, check=True
    ).stdout.decode()
    assert squeezed(CAMPAIGN_NAME) in squeezed(text)


def _has_cjk_font() -> bool:
    if shutil.which("fc-list") is None:
        return False
    families = subprocess.run(
        ["fc-list", ":", "family"], capture_output=True, text=True, check=False
    ).stdout
    return latex.CJK_FONTS[0] in families


def test_a_figure_with_a_korean_category_draws_every_glyph() -> None:
    """No "Glyph missing" warning: the label's Hangul, kana and Han come from a Noto CJK font,
    and the PDF holds the label as text."""
    if len(charts.font_families()) < 2:
        pytest.skip("no Noto Sans CJK font for matplotlib (Debian: fonts-noto-cjk)")
    label = "건강 관리 · 中文类别 · 日本語のカテゴリ"
    figure = charts.Figure("validity", "A caption", (charts.Row(label, 0.5, 0.3, 0.7),), "share")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph is a UserWarning
        drawn = charts.draw(figure)
    assert drawn["validity.svg"].startswith(b"<?xml")
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext not installed (Debian: poppler-utils)")
    text = subprocess.run(
        ["pdftotext", "-", "-"], input=drawn["validity.pdf"], capture_output=True, check=True
    ).stdout.decode()
    assert squeezed(label) in squeezed(text)
