"""Text from the database (campaign, dataset, category and file names) written into the
dataset card's Markdown as plain text.

A manager names a campaign, a dataset file names its categories: neither may add a heading,
a link, an image, raw HTML or a table column to the card. Every character that Markdown (and
the Hub's renderer: tables, strikethrough, math) gives a meaning is escaped with a backslash,
which CommonMark allows before any ASCII punctuation, and line breaks become spaces, so the
text stays on its own line and renders as itself.
"""

import re

SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#|~!&$])")
LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029\x00-\x08\x0b\x0c\x0e-\x1f\x7f]+")


def plain_text(value: object) -> str:
    """``value`` as Markdown that renders as exactly this text, on one line."""
    return SPECIAL.sub(r"\\\1", LINE_BREAKS.sub(" ", str(value)))


def source_words(dataset: dict[str, str]) -> str:
    """The manifest's dataset source as the card says it: the file's name and its sha256."""
    words = plain_text(dataset["source"])
    digest = dataset.get("source_sha256")
    return f"{words}, sha256 `{digest}`" if digest else words
