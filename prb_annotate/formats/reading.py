"""How long a text is to read, in any script: words where the script puts spaces between
words, characters where it does not or where a word is not what readers are measured in.

Invariants: pure functions of the text, no locale and no dictionary. A character of a script
in :data:`CHARACTER_SCRIPTS` counts as one character and never as part of a word (Hangul
syllables included: Korean puts spaces between eojeol, a word with its particles, and Korean
reading rates are measured in syllables); any other run of letters or digits between spaces
is one word (punctuation alone is none). The reading time adds each script's share at its
own rate, :data:`RATES`, whose figures and sources docs/annotating.md states.
"""

import re
import unicodedata
from dataclasses import dataclass

from django.utils.translation import gettext, ngettext

# Code-point ranges of the scripts counted by the character, by script name.
CHARACTER_SCRIPTS: dict[str, tuple[tuple[int, int], ...]] = {
    "hangul": ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7AF)),
    "kana": ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F)),
    "han": ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F)),
    "thai": ((0x0E00, 0x0E7F),),
    "lao": ((0x0E80, 0x0EFF),),
    "khmer": ((0x1780, 0x17FF),),
    "myanmar": ((0x1000, 0x109F),),
}


@dataclass(frozen=True)
class Rate:
    """A reading rate: ``per_minute`` units (words, or characters) a minute."""

    per_minute: float
    unit: str  # "word" or "character"
    source: str


# Silent reading where a source measured it, reading aloud (slower) otherwise; the sources in
# full are in docs/annotating.md.
RATES: dict[str, Rate] = {
    "words": Rate(238, "word", "Brysbaert (2019), silent reading of English non-fiction"),
    "hangul": Rate(
        588,
        "character",
        "Song, Kim and Hyung (2016), silent reading: 202.3 words a minute of sentences of "
        "18.9 syllables in 6.5 words",
    ),
    "japanese": Rate(357, "character", "Trauzettel-Klosinski and Dietz (2012), IReST, aloud"),
    "han": Rate(255, "character", "Trauzettel-Klosinski and Dietz (2012), IReST, aloud"),
    "other": Rate(
        863, "character", "Trauzettel-Klosinski and Dietz (2012), IReST's 17 languages, aloud"
    ),
}

SPACES = re.compile(r"\s+")
# A shorter text is read at a glance: its time is not worth a word.
MINUTE_SHOWN_FROM_S = 30


def character_script(character: str) -> str | None:
    """The name of the script ``character`` is counted in by the character, or None."""
    code = ord(character)
    for script, ranges in CHARACTER_SCRIPTS.items():
        if any(low <= code <= high for low, high in ranges):
            return script
    return None


@dataclass(frozen=True)
class TextLength:
    """A text's words (scripts with spaces) and its characters by script (scripts without)."""

    words: int
    characters: dict[str, int]

    @property
    def total_characters(self) -> int:
        return sum(self.characters.values())

    def reading_seconds(self) -> float:
        """The time to read it once at :data:`RATES`: Han as Japanese where the text holds
        kana (Japanese mixes both), as Chinese otherwise."""
        japanese = self.characters.get("kana", 0) > 0
        minutes = self.words / RATES["words"].per_minute
        for script, count in self.characters.items():
            if script in ("kana", "han") and japanese:
                rate = RATES["japanese"]
            else:
                rate = RATES.get(script, RATES["other"])
            minutes += count / rate.per_minute
        return minutes * 60

    def words_text(self) -> str:
        """The length in words as a reader counts it: "120 words", "1,310 characters", or
        both for a text that mixes them (in the active language)."""
        parts = []
        if self.words or not self.total_characters:
            words = ngettext("%(count)s word", "%(count)s words", self.words)
            parts.append(words % {"count": f"{self.words:,}"})
        if self.total_characters:
            count = self.total_characters
            characters = ngettext("%(count)s character", "%(count)s characters", count)
            parts.append(characters % {"count": f"{count:,}"})
        return gettext(" and ").join(parts)

    def reading_text(self) -> str:
        """The length and, from half a minute on, the time to read it in whole minutes:
        "1,310 characters · about 3 min to read"."""
        seconds = self.reading_seconds()
        if seconds < MINUTE_SHOWN_FROM_S:
            return self.words_text()
        return gettext("%(length)s · about %(minutes)s min to read") % {
            "length": self.words_text(),
            "minutes": max(1, round(seconds / 60)),
        }


def text_length(text: str) -> TextLength:
    """The words and characters of ``text`` (see the module's rule).

    >>> text_length("Two words")
    TextLength(words=2, characters={})
    >>> text_length("한국어 문장")
    TextLength(words=0, characters={'hangul': 5})
    """
    characters: dict[str, int] = {}
    spaced = []
    for character in unicodedata.normalize("NFC", text):
        script = character_script(character)
        if script is None:
            spaced.append(character)
            continue
        characters[script] = characters.get(script, 0) + 1
        spaced.append(" ")  # a counted character ends the word before it
    words = sum(1 for token in SPACES.split("".join(spaced)) if any(c.isalnum() for c in token))
    return TextLength(words, characters)
