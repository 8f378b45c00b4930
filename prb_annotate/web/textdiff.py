"""What differs between two answers, word by word, for the adjudicator reading a pair.

``word_diff`` is pure (difflib over word and space tokens); ``diff_html`` escapes every piece of
text and marks what only one side has with ``<del>`` (only in the first text) and ``<ins>``
(only in the second), so the page may mark its result safe.
"""

import difflib
import re
from dataclasses import dataclass
from html import escape

# Words, runs of spaces and single punctuation marks: joined again they give the text back.
TOKENS = re.compile(r"\w+|\s+|[^\w\s]")
# Beyond this many tokens a side, difflib's quadratic worst case would hold the page up.
MAX_TOKENS = 20_000

EQUAL = "equal"
ONLY_FIRST = "delete"
ONLY_SECOND = "insert"


@dataclass(frozen=True)
class Segment:
    """A run of text: in both texts (``equal``), only in the first, or only in the second."""

    kind: str
    text: str


def tokens(text: str) -> list[str]:
    return TOKENS.findall(text)


def word_diff(first: str, second: str) -> list[Segment] | None:
    """The two texts as runs of shared and one-sided words, in reading order; None when
    either is too long to compare (more than ``MAX_TOKENS`` tokens)."""
    left, right = tokens(first), tokens(second)
    if len(left) > MAX_TOKENS or len(right) > MAX_TOKENS:
        return None
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    segments: list[Segment] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            segments.append(Segment(EQUAL, "".join(left[i1:i2])))
            continue
        if i2 > i1:
            segments.append(Segment(ONLY_FIRST, "".join(left[i1:i2])))
        if j2 > j1:
            segments.append(Segment(ONLY_SECOND, "".join(right[j1:j2])))
    return segments


def shared_share(segments: list[Segment]) -> float:
    """The share of characters (of both texts together) that the two texts share."""
    shared = sum(len(s.text) for s in segments if s.kind == EQUAL)
    total = 2 * shared + sum(len(s.text) for s in segments if s.kind != EQUAL)
    return 2 * shared / total if total else 1.0


def diff_html(segments: list[Segment]) -> str:
    """The segments as escaped HTML: ``<del>`` only in the first text, ``<ins>`` only in the
    second, shared text plain."""
    tags = {ONLY_FIRST: "del", ONLY_SECOND: "ins"}
    parts = []
    for segment in segments:
        text = escape(segment.text)
        tag = tags.get(segment.kind)
        parts.append(f"<{tag}>{text}</{tag}>" if tag else text)
    return "".join(parts)
