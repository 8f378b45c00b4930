"""The annotation page's question layout: the choices with their shortcut keys, the rating
questions, and the one-line summary of a judgement. Shared by the annotation page and the
practice and qualification pages; no form classes here (those are in ``forms.py``)."""

from collections.abc import Mapping
from dataclasses import dataclass

from prb_annotate.models import Campaign

# (value, label, shortcut letter). Every letter is unique on the whole page and none is one of
# the page's own shortcuts (PAGE_KEYS), so a letter means one thing whatever question is
# highlighted: it answers its own question from anywhere on the page.
RUBRIC_FIT_CHOICES = [("A", "Response A", "a"), ("B", "Response B", "b"), ("tie", "Tie", "t")]
DIFFERENTIATOR_CHOICES = [
    ("preference", "Personal preference", "p"),
    ("quality", "General quality", "q"),
    ("both", "Both", "o"),
    ("none", "No real difference", "n"),
]
CONFIDENCE_CHOICES = [("low", "Low", "l"), ("medium", "Medium", "m"), ("high", "High", "h")]
# The page's own keys (annotate.js acts on them; the on-page list names them).
PAGE_KEYS = {
    "c": "write a comment",
    "f": "flag the item as unusable",
    "g": "open the guidelines",
    "j": "scroll the texts down a few lines",
    "k": "scroll the texts up a few lines",
    "r": "reopen the previous item to revise it",
    "s": "skip this item",
    "?": "show the shortcuts",
}
SUMMARY_WORDS = {
    "preference": "preference",
    "quality": "quality",
    "both": "both",
    "none": "no real difference",
}


@dataclass(frozen=True)
class Choice:
    value: str
    label: str
    key: str
    checked: bool


@dataclass(frozen=True)
class Question:
    name: str
    label: str
    choices: list[Choice]
    error: str = ""
    short_label: str = ""  # as the shortcut list names the question


def _question(
    name: str,
    label: str,
    options: list[tuple[str, str, str]],
    values: Mapping[str, str],
    errors: Mapping[str, str],
    short_label: str = "",
) -> Question:
    current = values.get(name, "")
    choices = [Choice(value, text, key, value == current) for value, text, key in options]
    return Question(name, label, choices, errors.get(name, ""), short_label)


def rating_questions(
    campaign: Campaign, side: str, values: Mapping[str, str], errors: Mapping[str, str]
) -> list[Question]:
    """One 1..scale question per quality criterion for response ``side`` (A or B)."""
    scale = [(str(v), str(v), str(v)) for v in range(1, campaign.rating_scale_max + 1)]
    return [
        _question(f"quality_{side}_{criterion}", str(criterion), scale, values, errors)
        for criterion in campaign.quality_criteria
    ]


def choice_questions(values: Mapping[str, str], errors: Mapping[str, str]) -> list[Question]:
    return [
        _question(
            "rubric_fit",
            "Which response better fits this user's rubric and profile?",
            RUBRIC_FIT_CHOICES,
            values,
            errors,
            "better fit",
        ),
        _question(
            "differentiator",
            "What mainly distinguishes the two responses?",
            DIFFERENTIATOR_CHOICES,
            values,
            errors,
            "main difference",
        ),
        _question(
            "confidence", "How confident are you?", CONFIDENCE_CHOICES, values, errors, "confidence"
        ),
    ]


def answer_keys() -> list[str]:
    """Every letter the page gives an answer or an action, in page order (one each)."""
    options = [*RUBRIC_FIT_CHOICES, *DIFFERENTIATOR_CHOICES, *CONFIDENCE_CHOICES]
    return [key for _, _, key in options] + list(PAGE_KEYS)


def answer_summary(campaign: Campaign, values: Mapping[str, str]) -> str:
    """Answers as the annotator gave them, in one line: "A 5·4·3, B 2·2·2; fits A; ..."."""
    criteria = campaign.quality_criteria
    ratings = [
        f"{side} " + "·".join(values.get(f"quality_{side}_{c}", "?") for c in criteria)
        for side in "AB"
    ]
    fit = values.get("rubric_fit", "")
    parts = [
        ", ".join(ratings),
        "tie" if fit == "tie" else f"fits {fit}",
        SUMMARY_WORDS.get(values.get("differentiator", ""), ""),
        f"{values.get('confidence', '')} confidence",
    ]
    if values.get("flagged"):
        parts.append("flagged")
    if values.get("comment"):
        parts.append("commented")
    return "; ".join(part for part in parts if part)


def question_names(campaign: Campaign) -> set[str]:
    """Every field name the page asks for, to tell field errors from page-wide ones."""
    names = {"rubric_fit", "differentiator", "confidence", "comment", "flagged"}
    for side in "AB":
        names.update(f"quality_{side}_{criterion}" for criterion in campaign.quality_criteria)
    return names


# --- Auditing pairs -------------------------------------------------------------------------
