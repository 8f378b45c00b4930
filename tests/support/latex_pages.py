"""Tables compiled inside the pages papers are written on, and the boxes that overflow them.

``acl``: a two-column article with ACL's text block (16 cm wide, 0.6 cm between columns: a
column of 7.7 cm) at 11 pt; ``neurips``: a one-column article 5.5 in wide at 10 pt. Latin
Modern where installed (wider than the conferences' Times, so a table that fits here fits
there).
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

PAGES = {
    "acl": (
        "11pt,twocolumn",
        "paperwidth=8.5in,paperheight=11in,top=2.5cm,bottom=2.5cm,textwidth=16cm,columnsep=0.6cm",
    ),
    "neurips": ("10pt", "letterpaper,textwidth=5.5in,textheight=9in"),
}
OVERFULL = re.compile(r"^Overfull \\hbox \(([\d.]+)pt too wide\)", re.MULTILINE)


def needs_pdflatex() -> None:
    if shutil.which("pdflatex") is None:
        pytest.skip(
            "pdflatex not installed (Debian: texlive-latex-base, texlive-latex-recommended)"
        )


def compile_page(page: str, body: str, folder: Path, packages: str) -> str:
    """``body`` compiled in ``page``'s article; the log (an error fails the test)."""
    options, geometry = PAGES[page]
    folder.mkdir(parents=True, exist_ok=True)
    source = "\n".join(
        [
            rf"\documentclass[{options}]{{article}}",
            r"\usepackage[T1]{fontenc}",
            r"\IfFileExists{lmodern.sty}{\usepackage{lmodern}}{}",
            rf"\usepackage[{geometry}]{{geometry}}",
            rf"\usepackage{{{packages}}}",
            r"\begin{document}",
            body,
            r"\end{document}",
            "",
        ]
    )
    (folder / f"{page}.tex").write_text(source, encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{page}.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    log = (folder / f"{page}.log").read_text(encoding="utf-8", errors="replace")
    assert done.returncode == 0, log[-3000:]
    return log


def overfull(log: str, tolerance: float = 1.0) -> list[float]:
    """How far each box wider than the line overflows it, beyond ``tolerance`` points."""
    return [float(width) for width in OVERFULL.findall(log) if float(width) > tolerance]
