"""A one-page PDF preview of the paper's LaTeX files, for the zip, when the server has pdflatex.

``paper.tex`` is compiled (with bibtex when installed, so the citations resolve) in a
temporary folder, with xelatex where the paper asks for it (``latex.needs_unicode_engine``:
names or categories pdflatex's fonts lack) and the server has it, with pdflatex otherwise,
without shell escape and with a time limit; a second pdflatex run takes its first page alone
(graphicx's ``page=1``), so the preview is one page whatever the paper's length.
``SOURCE_DATE_EPOCH`` fixes the PDF's dates, so the same numbers give the same file.
Without pdflatex, or when a run fails, there is no preview and the zip is the same otherwise.
"""

import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from prb_annotate.paper import latex

PREVIEW = "preview.pdf"
TIME_LIMIT_S = 60
FIRST_PAGE = "\n".join(
    [
        r"\pdftrailerid{}",
        r"\documentclass{article}",
        r"\usepackage{graphicx}",
        r"\usepackage[paperwidth=210mm,paperheight=297mm,margin=0pt]{geometry}",
        r"\pagestyle{empty}",
        r"\begin{document}",
        r"\noindent\includegraphics[page=1,width=\paperwidth,height=\paperheight,"
        r"keepaspectratio]{paper.pdf}",
        r"\end{document}",
        "",
    ]
)

log = logging.getLogger(__name__)


def available() -> bool:
    return shutil.which("pdflatex") is not None


def preview_pdf(files: Mapping[str, bytes]) -> bytes | None:
    """The first page of ``paper.tex`` compiled, or None (no pdflatex, no ``paper.tex``, or
    a failed run, logged)."""
    if not available() or "paper.tex" not in files:
        return None
    with tempfile.TemporaryDirectory(prefix="paper-preview-") as folder:
        work = Path(folder)
        for name, content in files.items():
            path = work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        (work / "first-page.tex").write_text(FIRST_PAGE, encoding="utf-8")
        engine = _engine(files["paper.tex"].decode("utf-8"))
        steps = [[engine, "paper.tex"]]
        if shutil.which("bibtex"):
            steps += [["bibtex", "paper"], [engine, "paper.tex"]]
        steps += [[engine, "paper.tex"], ["pdflatex", "first-page.tex"]]
        for step in steps:
            if not _run(step, work):
                return None
        return (work / "first-page.pdf").read_bytes()


def _engine(document: str) -> str:
    """xelatex for a paper that asks for it, where installed; pdflatex otherwise (it prints
    what its fonts lack as code points)."""
    unicode_engine = latex.UNICODE_ENGINE
    if latex.needs_unicode_engine(document) and shutil.which(unicode_engine):
        return unicode_engine
    return "pdflatex"


def _run(command: list[str], work: Path) -> bool:
    if command[0] in ("pdflatex", latex.UNICODE_ENGINE):
        command = [command[0], "-no-shell-escape", "-interaction=nonstopmode", *command[1:]]
    environment = {**os.environ, "SOURCE_DATE_EPOCH": "0", "FORCE_SOURCE_DATE": "1"}
    try:
        done = subprocess.run(
            command,
            cwd=work,
            capture_output=True,
            timeout=TIME_LIMIT_S,
            env=environment,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        log.warning("paper preview: %s failed: %s", command[0], error)
        return False
    # pdflatex answers 1 for warnings it recovered from; the PDF is what counts.
    if command[0] != "bibtex" and not (work / f"{Path(command[-1]).stem}.pdf").exists():
        log.warning("paper preview: %s wrote no PDF (exit %s)", command[-1], done.returncode)
        return False
    return True
