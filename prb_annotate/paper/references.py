"""The works the methods paragraph cites.

``references.bib`` beside this module holds their BibTeX entries; a paper bundle writes only
those cited. The Markdown paragraph names each work from the same entry, as natbib's ``\\citep``
with ``plainnat`` does in the PDF: one surname, two joined by "and", or the first and "et al.".
"""

import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

BIBLIOGRAPHY = Path(__file__).with_name("references.bib")
# BibTeX's accent commands, as the combining marks they put on the next letter.
ACCENTS = {"`": "\u0300", "'": "\u0301", "^": "\u0302", "~": "\u0303", '"': "\u0308"}


def entries(text: str) -> dict[str, str]:
    """Each entry of a BibTeX file by its key, as written there."""
    blocks = [block.strip() for block in re.split(r"\n(?=@)", text.strip())]
    by_key = {}
    for block in blocks:
        key = re.match(r"@\w+\{([^,\s]+),", block)
        if key is None:
            raise ValueError(f"{BIBLIOGRAPHY.name}: an entry without a key: {block[:40]!r}")
        by_key[key.group(1)] = block
    return by_key


def field(entry: str, name: str) -> str:
    """A field's value, its braces balanced, with its lines joined."""
    start = re.search(rf"^\s*{name}\s*=\s*\{{", entry, re.MULTILINE)
    if start is None:
        raise ValueError(f"{BIBLIOGRAPHY.name}: {entry[:40]!r} has no {name}")
    depth, end = 1, start.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(entry[end], 0)
        end += 1
    return " ".join(entry[start.end() : end - 1].split())


def plain(latex: str) -> str:
    """BibTeX text as Unicode: ``Cand{\\`e}s`` -> ``Candès``."""
    accented = re.sub(
        r"\{?\\([`'^~\"])\{?(\w)\}?\}?", lambda m: m.group(2) + ACCENTS[m.group(1)], latex
    )
    return unicodedata.normalize("NFC", accented.replace("{", "").replace("}", ""))


def cited_names(entry: str) -> str:
    """The authors as plainnat's ``\\citep`` names them."""
    surnames = [plain(author.split(",")[0]) for author in field(entry, "author").split(" and ")]
    if len(surnames) == 1:
        return surnames[0]
    if len(surnames) == 2:
        return f"{surnames[0]} and {surnames[1]}"
    return f"{surnames[0]} et al."


ENTRIES = entries(BIBLIOGRAPHY.read_text(encoding="utf-8"))
# How the Markdown paragraph names each work.
AUTHOR_YEAR = {
    key: (cited_names(entry), int(field(entry, "year"))) for key, entry in ENTRIES.items()
}


def bibtex(keys: Iterable[str]) -> str:
    """The entries of ``keys``, in the order first cited, without repeats."""
    return "\n\n".join(ENTRIES[key] for key in dict.fromkeys(keys)) + "\n"


def author_year(keys: Iterable[str]) -> str:
    """ "(Gwet, 2008; Gwet, 2014)": an in-text citation for Markdown."""
    return (
        "("
        + "; ".join(f"{name}, {year}" for name, year in map(AUTHOR_YEAR.__getitem__, keys))
        + ")"
    )
