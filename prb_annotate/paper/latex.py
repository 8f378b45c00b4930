"""The tables (booktabs), the methods paragraph and a document that puts them together.

``tables.tex`` and ``methods.tex`` are meant to be ``\\input`` into a paper (the tables need
``\\usepackage{booktabs}``, the citations natbib's ``\\citep``); ``paper.tex`` is a document of
its own that compiles them with the figures and ``references.bib``.

Names and categories come in any script. ``paper.tex`` compiles with pdflatex or xelatex
whatever they hold, and never drops a character silently: xelatex prints Korean, Chinese and
Japanese through xeCJK and a Noto CJK font, and a character its fonts lack (Thai, emoji, or
CJK without xeCJK) as its code point (``[U+0E20]``); pdflatex prints each character outside
:data:`PDFLATEX_REACH` as its code point. A document that holds such characters says at its
top to compile it with xelatex and comes with a ``latexmkrc`` that picks xelatex.
"""

import re
import unicodedata
from collections.abc import Sequence

from evaluation.latex import LATEX_SPECIALS
from prb_annotate.formats.reading import character_script
from prb_annotate.paper import layout
from prb_annotate.paper.methods import Cite, Part
from prb_annotate.paper.tables import Table

# LaTeX's markup characters (the table ``compare --format latex`` escapes with), and the
# comparison signs, typeset as math.
SPECIALS = {**LATEX_SPECIALS, "<": r"$<$", ">": r"$>$"}
# Symbols a name or category may hold that pdflatex's text fonts lack: typeset as math.
MATH_SYMBOLS = {
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "≠": r"$\neq$",
    "≈": r"$\approx$",
    "→": r"$\rightarrow$",
    "←": r"$\leftarrow$",
    "↔": r"$\leftrightarrow$",
    "⇒": r"$\Rightarrow$",
    "\u2212": r"$-$",  # the minus sign
    "∞": r"$\infty$",
}
# What pdflatex prints with ``paper.tex``'s set-up (T1 and TS1 through inputenc), measured on
# TeX Live 2022: ASCII, Latin-1 and Latin Extended-A less a few letters T1 lacks, and the
# typographic punctuation. Any other character is beyond it (the math symbols above excepted).
PDFLATEX_REACH = frozenset(
    [chr(code) for code in range(0x20, 0x7F)]
    + [
        chr(code)
        for code in range(0xA0, 0x17F)
        if code not in (0x126, 0x127, 0x138, 0x13F, 0x140, 0x149, 0x166, 0x167)
    ]
    + list("\t\u2013\u2014\u2018\u2019\u201a\u201c\u201d\u201e\u2020\u2021\u2022\u2026")
    + list("\u2030\u2039\u203a\u20ac\u2122")
)
# The Unicode engine and the fonts its set-up asks for (Debian: texlive-xetex,
# texlive-lang-cjk for xeCJK, fonts-noto-cjk).
UNICODE_ENGINE = "xelatex"
CJK_FONTS = ("Noto Serif CJK KR", "Noto Sans CJK KR")
LATEXMKRC = "latexmkrc"
# Unicode's categories of dashes, brackets, quotes, other punctuation, spaces and currency.
PUNCTUATION = frozenset({"Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Zs", "Sc"})
# A minus sign before a digit is typeset as one, not as a hyphen.
MINUS = re.compile(r"(?<![\w.])-(?=\d)")
# Line breaks and control characters: a blank line ends a paragraph (and a heading with it),
# so every run of them becomes one space.
BREAKS = re.compile(r"[\r\n\u2028\u2029\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+")


def escape(text: str) -> str:
    r"""Text as LaTeX typesets it literally; a leading minus as a minus sign.

    >>> print(escape("rm_a & 50% -0.25 <0.001"))
    rm\_a \& 50\% $-$0.25 $<$0.001

    Line breaks are folded into spaces; a few symbols pdflatex's fonts lack are typeset as
    math; any other character stays as it is (``paper.tex`` prints one beyond pdflatex's reach
    as its code point, and xelatex prints it).
    """
    folded = BREAKS.sub(" ", text)
    escaped = "".join(
        SPECIALS.get(character) or MATH_SYMBOLS.get(character) or character for character in folded
    )
    return MINUS.sub("$-$", escaped)


def table(found: Table, columns: str = layout.DEFAULT) -> str:
    """One table, laid out for ``columns`` (``layout.LAYOUTS``: one or two columns)."""
    return layout.table(found, layout.LAYOUTS[columns], escape)


def tables(found: Sequence[Table], columns: str = layout.DEFAULT) -> str:
    packages = ", ".join(layout.PACKAGES)
    body = "\n\n".join(table(one, columns) for one in found) + "\n"
    header = (
        f"% Tables from the audit, laid out for a {columns}-column paper: needs "
        f"\\usepackage{{{packages}}}.\n"
    )
    return header + "".join(f"% {line}\n" for line in engine_note(body)) + body


def beyond_pdflatex(*texts: str) -> list[str]:
    """The characters of ``texts`` (LaTeX as written) that pdflatex's set-up cannot print, in
    code-point order."""
    found = {c for text in texts for c in text if c >= " " and c not in PDFLATEX_REACH}
    return sorted(found, key=ord)


def is_cjk(character: str) -> bool:
    return character_script(character) in ("hangul", "kana", "han")


def needs_cjk(characters: Sequence[str]) -> bool:
    return any(is_cjk(c) for c in characters)


def latin_modern_prints(character: str) -> bool:
    """Whether a Unicode engine's default font, Latin Modern, has ``character``: Latin
    letters, accents, punctuation and currency (its other scripts are too partial to count on)."""
    name = unicodedata.name(character, "")
    return name.startswith(("LATIN", "COMBINING")) or unicodedata.category(character) in PUNCTUATION


def engine_note(text: str) -> list[str]:
    """What to compile ``text`` with, as comment lines: nothing where pdflatex prints it all."""
    beyond = beyond_pdflatex(text)
    if not beyond:
        return []
    shown = "".join(beyond[:12]) + (" ..." if len(beyond) > 12 else "")
    packages = r"\usepackage{fontspec}" + (r" and \usepackage{xeCJK}" if needs_cjk(beyond) else "")
    return [
        f"Holds characters pdflatex's fonts lack ({shown}): compile with {UNICODE_ENGINE},",
        f"with {packages} (paper.tex's preamble shows how).",
    ]


def methods(parts: Sequence[Part]) -> str:
    """The paragraph, citations as natbib's ``\\citep``."""
    text = "".join(
        rf"~\citep{{{','.join(part.keys)}}}" if isinstance(part, Cite) else escape(part)
        for part in parts
    )
    # "alpha ~\citep" after a space: the tie replaces the space.
    return text.replace(" ~\\citep", "~\\citep") + "\n"


def figure(name: str, caption: str) -> str:
    return "\n".join(
        [
            r"\begin{figure}[h]",
            r"\centering",
            rf"\includegraphics[width=\linewidth]{{figures/{name}.pdf}}",
            rf"\caption{{{escape(caption)}}}",
            rf"\label{{fig:{name}}}",
            r"\end{figure}",
        ]
    )


def document(
    title: str,
    figures: Sequence[tuple[str, str]],
    columns: str = layout.DEFAULT,
    inputs: Sequence[str] = (),
) -> str:
    """A document that compiles on its own: the methods, the tables, then the figures (on
    pages of their own) and the references; two columns for the ``two`` layout. ``inputs``
    are the texts of the files it ``\\input``s, read for the characters they hold."""
    options = layout.LAYOUTS[columns].document_options
    heading = escape(title)
    captions = [figure(name, caption) for name, caption in figures]
    beyond = beyond_pdflatex(heading, *captions, *inputs)
    return "\n".join(
        [
            *engine_comment(beyond),
            rf"\documentclass[{options}]{{article}}" if options else r"\documentclass{article}",
            r"\usepackage{iftex}",
            # A character no font of the engine has prints as its code point, visibly.
            r"\newcommand{\codepoint}[1]{\textsf{[U+#1]}}",
            r"\ifPDFTeX",
            *pdflatex_preamble(beyond),
            r"\else",
            *unicode_preamble(beyond),
            r"\fi",
            r"\usepackage[margin=2cm]{geometry}",
            rf"\usepackage{{{','.join(layout.PACKAGES)}}}",
            r"\usepackage{graphicx}",
            r"\usepackage[round]{natbib}",
            r"\pagestyle{empty}",
            r"\begin{document}",
            rf"\section*{{Human evaluation: {heading}}}",
            r"\input{methods}",
            r"\input{tables}",
            r"\clearpage",
            r"\section*{Figures}",
            *captions,
            r"\clearpage",
            r"\bibliographystyle{plainnat}",
            r"\bibliography{references}",
            r"\end{document}",
            "",
        ]
    )


def engine_comment(beyond: Sequence[str]) -> list[str]:
    """The document's first lines: which engine prints it whole."""
    if not beyond:
        return ["% Compiles with pdflatex, xelatex or lualatex."]
    fonts = " and ".join(CJK_FONTS)
    return [
        f"% Compile with {UNICODE_ENGINE} (latexmk and Overleaf read it from {LATEXMKRC}): "
        "names and",
        "% categories hold characters pdflatex's fonts lack"
        + (
            f"; xeCJK prints Korean, Chinese and Japanese in {fonts}." if needs_cjk(beyond) else "."
        ),
        "% With pdflatex each such character prints as its code point, [U+XXXX], instead.",
    ]


def pdflatex_preamble(beyond: Sequence[str]) -> list[str]:
    """pdflatex's set-up: each character beyond its reach printed as its code point, visibly."""
    return [
        r"\usepackage[T1]{fontenc}",
        # Outline fonts where installed: their text (ligatures too) copies out of the PDF.
        r"\IfFileExists{lmodern.sty}{\usepackage{lmodern}}{}",
        r"\usepackage[utf8]{inputenc}",
        *(
            rf"\DeclareUnicodeCharacter{{{ord(c):04X}}}{{\codepoint{{{ord(c):04X}}}}}"
            for c in beyond
        ),
        # A character the list above missed is printed as "?" rather than stopping the run.
        r"\makeatletter\def\UTFviii@undefined@err#1{?}\makeatother",
    ]


def unicode_preamble(beyond: Sequence[str]) -> list[str]:
    """xelatex's and lualatex's set-up: fontspec; Korean, Chinese and Japanese through xeCJK
    where it and the fonts exist, as code points otherwise (and under lualatex); any other
    character Latin Modern lacks as its code point."""
    cjk = [c for c in beyond if is_cjk(c)]
    others = [c for c in beyond if not is_cjk(c) and not latin_modern_prints(c)]
    lines = [r"\usepackage{fontspec}"]
    if not (cjk or others):
        return lines
    lines += [r"\usepackage{newunicodechar}", *(_as_code_point(c) for c in others)]
    if not cjk:
        return lines
    main, sans = CJK_FONTS
    return [
        *lines,
        r"\newcommand{\cjkcodepoints}{%",
        *(_as_code_point(c) + "%" for c in cjk),
        "}",
        # xeCJK loads ctexhook, which some TeX installations ship apart (Debian: -chinese).
        r"\ifXeTeX\IfFileExists{xeCJK.sty}{\IfFileExists{ctexhook.sty}{\IfFontExistsTF{"
        + main
        + "}{%",
        # Korean puts spaces between words: xeCJK keeps them.
        r"  \usepackage{xeCJK}\xeCJKsetup{CJKspace=true}%",
        rf"  \setCJKmainfont{{{main}}}\setCJKsansfont{{{sans}}}}}%",
        r"{\cjkcodepoints}}{\cjkcodepoints}}{\cjkcodepoints}\else\cjkcodepoints\fi",
    ]


def _as_code_point(character: str) -> str:
    return rf"\newunicodechar{{{character}}}{{\codepoint{{{ord(character):04X}}}}}"


def needs_unicode_engine(document_text: str) -> bool:
    """Whether a document :func:`document` wrote asks for :data:`UNICODE_ENGINE`."""
    return document_text.startswith(f"% Compile with {UNICODE_ENGINE}")


def latexmkrc() -> str:
    """latexmk's set-up (Overleaf reads it too): the Unicode engine."""
    return (
        f"# paper.tex holds characters pdflatex's fonts lack: {UNICODE_ENGINE}.\n$pdf_mode = 5;\n"
    )
