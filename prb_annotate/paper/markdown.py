"""The same tables and paragraph as ``latex``, in Markdown (pipe tables, author-year
citations), for a README, a wiki or a draft in a Markdown editor."""

import re
from collections.abc import Sequence

from prb_annotate.exports.markdown import LINE_BREAKS
from prb_annotate.paper.methods import Cite, Part
from prb_annotate.paper.references import author_year
from prb_annotate.paper.tables import Table

# The dataset card's characters (``exports/markdown.py``) but parentheses: they mean something
# only right after a "]", which is escaped, and the tables are full of "(n = 33)".
SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|~!&$])")


def escape(text: str) -> str:
    """Text as Markdown renders it literally, on one line: every character Markdown gives a
    meaning (links, images, headings, HTML, emphasis, table columns) escaped, and line breaks
    folded, as the dataset card writes names."""
    return SPECIAL.sub(r"\\\1", LINE_BREAKS.sub(" ", text))


def table(found: Table) -> str:
    heading = "| " + " | ".join(escape(c.heading) or " " for c in found.columns) + " |"
    rule = "|" + "|".join("---:" if c.numeric else ":---" for c in found.columns) + "|"
    rows = ["| " + " | ".join(escape(cell) for cell in row) + " |" for row in found.rows]
    return "\n".join([f"**Table: {escape(found.caption)}**", "", heading, rule, *rows])


def tables(found: Sequence[Table]) -> str:
    return "\n\n".join(table(one) for one in found) + "\n"


def methods(parts: Sequence[Part]) -> str:
    return (
        "".join(
            author_year(part.keys) if isinstance(part, Cite) else escape(part) for part in parts
        )
        + "\n"
    )


def document(
    title: str, body_tables: str, paragraph: str, figures: Sequence[tuple[str, str]]
) -> str:
    lines = [f"# Human evaluation: {escape(title)}", "", paragraph, body_tables, "## Figures", ""]
    for name, caption in figures:
        lines += [f"![{escape(caption)}](figures/{name}.svg)", ""]
    lines += ["References: `references.bib`.", ""]
    return "\n".join(lines)
