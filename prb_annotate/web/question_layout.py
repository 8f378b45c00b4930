"""The annotation page's question layout: the choices with their shortcut keys, the rating
questions, and the one-line summary of a judgement. Shared by the annotation page and the
practice and qualification pages; no form classes here (those are in ``forms.py``)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils.html import format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from prb_annotate.models import Campaign

# (value, label, shortcut letter). Every letter is unique on the whole page and none is one of
# the page's own shortcuts (PAGE_KEYS), so a letter means one thing whatever question is
# highlighted: it answers its own question from anywhere on the page.
RUBRIC_FIT_CHOICES = [
    ("A", _("Response A"), "a"),
    ("B", _("Response B"), "b"),
    ("tie", _("Tie"), "t"),
]
DIFFERENTIATOR_CHOICES = [
    ("preference", _("Personal preference"), "p"),
    ("quality", _("General quality"), "q"),
    ("both", _("Both"), "o"),
    ("none", _("No real difference"), "n"),
]
CONFIDENCE_CHOICES = [
    ("low", _("Low"), "l"),
    ("medium", _("Medium"), "m"),
    ("high", _("High"), "h"),
]
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
    "preference": _("preference"),
    "quality": _("quality"),
    "both": _("both"),
    "none": _("no real difference"),
}
# The default quality criteria, named in the catalogue so that a campaign that keeps them shows
# them in the reader's language (a criterion a manager names is shown as written).
DEFAULT_CRITERIA_WORDS = (
    gettext_noop("correctness"),
    gettext_noop("relevance"),
    gettext_noop("helpfulness"),
)


@dataclass(frozen=True)
class Choice:
    value: str
    label: Any  # text, or lazy text translated when the page is drawn
    key: str
    checked: bool


@dataclass(frozen=True)
class Question:
    name: str
    label: Any
    choices: list[Choice]
    error: str = ""
    short_label: Any = ""  # as the shortcut list names the question


def _question(
    name: str,
    label: Any,
    options: list[tuple[str, Any, str]],
    values: Mapping[str, str],
    errors: Mapping[str, str],
    short_label: Any = "",
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
        _question(f"quality_{side}_{criterion}", gettext(str(criterion)), scale, values, errors)
        for criterion in campaign.quality_criteria
    ]


def choice_questions(values: Mapping[str, str], errors: Mapping[str, str]) -> list[Question]:
    return [
        _question(
            "rubric_fit",
            _("Which response better fits this user's rubric and profile?"),
            RUBRIC_FIT_CHOICES,
            values,
            errors,
            _("better fit"),
        ),
        _question(
            "differentiator",
            _("What mainly distinguishes the two responses?"),
            DIFFERENTIATOR_CHOICES,
            values,
            errors,
            _("main difference"),
        ),
        _question(
            "confidence",
            _("How confident are you?"),
            CONFIDENCE_CHOICES,
            values,
            errors,
            _("confidence"),
        ),
    ]


def answer_keys() -> list[str]:
    """Every letter the page gives an answer or an action, in page order (one each)."""
    options = [*RUBRIC_FIT_CHOICES, *DIFFERENTIATOR_CHOICES, *CONFIDENCE_CHOICES]
    return [key for _, _, key in options] + list(PAGE_KEYS)


def choice_keys() -> dict[str, SafeString]:
    """Each choice question's keys as the guidelines print them (``<kbd>A</kbd>/<kbd>B</kbd>``),
    read from the tables above so that the page names the keys the form answers to."""
    tables = {
        "rubric_fit": RUBRIC_FIT_CHOICES,
        "differentiator": DIFFERENTIATOR_CHOICES,
        "confidence": CONFIDENCE_CHOICES,
    }
    return {
        name: format_html_join("/", "<kbd>{}</kbd>", ((key.upper(),) for _v, _l, key in table))
        for name, table in tables.items()
    }


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
        gettext("tie") if fit == "tie" else gettext("fits %(side)s") % {"side": fit},
        str(SUMMARY_WORDS.get(values.get("differentiator", ""), "")),
        gettext("%(level)s confidence") % {"level": confidence_word(values.get("confidence", ""))},
    ]
    if values.get("flagged"):
        parts.append(gettext("flagged"))
    if values.get("comment"):
        parts.append(gettext("commented"))
    return "; ".join(part for part in parts if part)


def confidence_word(level: str) -> str:
    """A confidence level as the summary names it, in the reader's language ("low")."""
    labels = {value: label for value, label, _key in CONFIDENCE_CHOICES}
    return str(labels.get(level, level)).lower()


def question_names(campaign: Campaign) -> set[str]:
    """Every field name the page asks for, to tell field errors from page-wide ones."""
    names = {"rubric_fit", "differentiator", "confidence", "comment", "flagged"}
    for side in "AB":
        names.update(f"quality_{side}_{criterion}" for criterion in campaign.quality_criteria)
    return names


def question_context(
    campaign: Campaign,
    responses: tuple[str, str],
    values: Mapping[str, str],
    errors: Mapping[str, str],
) -> dict[str, Any]:
    """What the annotation page's template shows of an item's questions, for a queue item and
    for a practice or qualification item alike: the two responses, the questions with what
    was entered, and the errors (those of no question listed apart)."""
    known = question_names(campaign)
    text_a, text_b = responses
    return {
        "responses": [("A", text_a), ("B", text_b)],
        "ratings": [
            ("A", rating_questions(campaign, "A", values, errors)),
            ("B", rating_questions(campaign, "B", values, errors)),
        ],
        "choices": choice_questions(values, errors),
        "comment": values.get("comment", ""),
        "comment_error": errors.get("comment", ""),
        "flagged": values.get("flagged", "") not in ("", "off", "false", "0"),
        "error_count": len(errors),
        "general_errors": [message for field, message in errors.items() if field not in known],
    }


# --- Auditing pairs -------------------------------------------------------------------------
