"""Text as LaTeX typesets it literally: the characters LaTeX reads as markup, and their escapes.

One table for the project: ``compare --format latex`` escapes with it, and so does the web app's
paper bundle (``prb_annotate/paper/latex.py``), which adds what its own fonts need.
"""

LATEX_SPECIALS = {
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
}


def latex_escape(text: str) -> str:
    r"""Text as LaTeX typesets it literally.

    >>> print(latex_escape("rm_a & 50% {x}"))
    rm\_a \& 50\% \{x\}
    """
    return "".join(LATEX_SPECIALS.get(character, character) for character in text)
