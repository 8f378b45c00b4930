"""The audit's words, kept in English in the report and shown in the reader's language.

The report is data that scripts and files read (the JSON, the API, the text report, an export's
card and manifest): its words stay English, beside stable codes. A page shows the same words
translated at display time, by their English text:

- a fixed word (a reason's label, a coefficient's name) is marked with ``gettext_noop`` where it
  is defined, so that the catalogue holds it, and :func:`shown` translates it;
- a sentence with figures is a :class:`Phrase`: its English template, marked the same way,
  writes the report's text, and :func:`shown` finds the template again in that text (every
  phrase is registered when it is defined), translates it and puts the same figures back,
  each figure itself shown (a phrase inside a phrase is translated too).

Pure apart from Django's translation functions: nothing here reads the database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.utils.translation import gettext

# Every phrase defined, in the order the modules defined them: the first whose template
# matches a whole text is the one that wrote it.
_PHRASES: list[Phrase] = []
_FIELD = re.compile(r"%\((\w+)\)s|%%")


@dataclass(frozen=True)
class Phrase:
    """An English sentence with named figures (``%(name)s``), marked for translation."""

    template: str
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    literal: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", _pattern(self.template))
        object.__setattr__(self, "literal", len(_FIELD.sub("", self.template)))
        _PHRASES.append(self)

    def __call__(self, **figures: object) -> str:
        """The sentence in English, as the report keeps it."""
        return self.template % figures

    def shown(self, **figures: object) -> str:
        """The sentence in the active language, its figures shown as :func:`shown` shows them."""
        return gettext(self.template) % {name: shown(str(v)) for name, v in figures.items()}


def _pattern(template: str) -> re.Pattern[str]:
    """A regular expression that matches the template's English with any figures."""
    parts: list[str] = []
    named: set[str] = set()
    position = 0
    for match in _FIELD.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        name = match.group(1)
        if name is None:
            parts.append("%")
        elif name in named:  # the same figure again: the same text
            parts.append(f"(?P={name})")
        else:
            named.add(name)
            parts.append(f"(?P<{name}>.+?)")
        position = match.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts), re.DOTALL)


def shown(text: str) -> str:
    """``text``, a word or sentence of the report, in the active language; a text the
    catalogue does not know (a name, a number) as it is."""
    if not text:
        return text
    # The phrase with the most words of its own first: a sentence that holds another one's
    # figures is found as itself, not as the shorter one with the rest taken for a figure.
    for phrase in sorted(_PHRASES, key=lambda phrase: -phrase.literal):
        match = phrase.pattern.fullmatch(text)
        if match:
            return phrase.shown(**match.groupdict())
    return gettext(text)


def shown_parts(text: str, separator: str = "; ") -> str:
    """A text joined from several words or sentences, each shown in the active language."""
    return separator.join(shown(part) for part in text.split(separator))
