"""The tables (booktabs), the methods paragraph and a document that puts them together.

``tables.tex`` and ``methods.tex`` are meant to be ``\\input`` into a paper (the tables need
``\\usepackage{booktabs}``, the citations natbib's ``\\citep``); ``paper.tex`` is a document of
its own that compiles them with the figures and ``references.bib``.
"""

import re
from collections.abc import Sequence

from prb_annotate.paper.methods import Cite, Part
from prb_annotate.paper.tables import Table

SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"$<$",
    ">": r"$>$",
}
# A minus sign before a digit is typeset as one, not as a hyphen.
MINUS = re.compile(r"(?<![\w.])-(?=\d)")


def escape(text: str) -> str:
    r"""Text as LaTeX typesets it literally; a leading minus as a minus sign.

    >>> print(escape("rm_a & 50% -0.25 <0.001"))
    rm\_a \& 50\% $-$0.25 $<$0.001
    """
    escaped = "".join(SPECIALS.get(character, character) for character in text)
    return MINUS.sub("$-$", escaped)


def table(found: Table) -> str:
    spec = "".join("r" if column.numeric else "l" for column in found.columns)
    heading = " & ".join(escape(column.heading) for column in found.columns) + r" \\"
    rows = [" & ".join(escape(cell) for cell in row) + r" \\" for row in found.rows]
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"\centering",
            r"\small",
            rf"\caption{{{escape(found.caption)}}}",
            rf"\label{{tab:{found.key}}}",
            rf"\begin{{tabular}}{{{spec}}}",
            r"\toprule",
            heading,
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
        ]
    )


def tables(found: Sequence[Table]) -> str:
    header = "% Booktabs tables from the audit: needs \\usepackage{booktabs}.\n"
    return header + "\n\n".join(table(one) for one in found) + "\n"


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


def document(title: str, figures: Sequence[tuple[str, str]]) -> str:
    """A document that compiles on its own: the methods, the tables, then the figures (on
    pages of their own) and the references."""
    return "\n".join(
        [
            r"\documentclass{article}",
            r"\usepackage[T1]{fontenc}",
            # Outline fonts where installed: their text (ligatures too) copies out of the PDF.
            r"\IfFileExists{lmodern.sty}{\usepackage{lmodern}}{}",
            r"\usepackage[utf8]{inputenc}",
            r"\usepackage[margin=2cm]{geometry}",
            r"\usepackage{booktabs}",
            r"\usepackage{graphicx}",
            r"\usepackage[round]{natbib}",
            r"\pagestyle{empty}",
            r"\begin{document}",
            rf"\section*{{Human evaluation: {escape(title)}}}",
            r"\input{methods}",
            r"\input{tables}",
            r"\clearpage",
            r"\section*{Figures}",
            *(figure(name, caption) for name, caption in figures),
            r"\clearpage",
            r"\bibliographystyle{plainnat}",
            r"\bibliography{references}",
            r"\end{document}",
            "",
        ]
    )
