"""The qualification's rules as pure functions: which questions an item may expect an answer
to, how an answer is marked, and the pass rule of an attempt.

An item is *right* when every answer it expects is given. The pass rule asks for at least
``min_correct`` right items (every item when it is None) and, for each question named in
``required_questions``, the expected answer on every item that expects one: "at least 2 of 3
right" is ``PassRule(min_correct=2)``, "every better-fit answer right" is
``PassRule(min_correct=0, required_questions=("rubric_fit",))``.
"""

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext, gettext_lazy, gettext_noop, ngettext

# The questions an item can expect an answer to, and their answers (dataset orientation).
EXPECTABLE: dict[str, tuple[str, ...]] = {
    "rubric_fit": ("chosen", "rejected", "tie"),
    "differentiator": ("preference", "quality", "both", "none"),
}
# In English; a page shows them through gettext (marked for the catalogue here).
QUESTION_LABELS = {
    "rubric_fit": gettext_noop("Which response better fits this user"),
    "differentiator": gettext_noop("What mainly distinguishes the two responses"),
}
# A pass rule's "every ... answer right" for each question it may require, in the rule's words
# (``PassRule.describe``) and as the settings' choices.
REQUIRED_WORDS = {
    "rubric_fit": gettext_lazy("every better-fit answer right"),
    "differentiator": gettext_lazy("every main-difference answer right"),
}
MAX_EXPLANATION = 2000
# The attempts a qualification allows (Prolific: comprehension checks get two).
ATTEMPTS = 2


class RuleError(ValueError):
    """A pass rule or an item's expected answers that cannot be used; ``field`` names what."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class PassRule:
    min_correct: int | None = None  # None: every item right
    required_questions: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "min_correct": self.min_correct,
            "required_questions": list(self.required_questions),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> "PassRule":
        data = data or {}
        minimum = data.get("min_correct")
        return cls(
            min_correct=None if minimum is None else int(minimum),
            required_questions=tuple(data.get("required_questions") or ()),
        )

    def needed(self, total: int) -> int:
        """Right items an attempt needs out of ``total``."""
        return total if self.min_correct is None else self.min_correct

    def describe(self, total: int) -> str:
        """The rule in the reader's words, e.g. "at least 2 of 3 items right, every better-fit
        answer right"."""
        needed = self.needed(total)
        parts = []
        if needed == total:
            parts.append(
                ngettext("all %(total)d item right", "all %(total)d items right", total)
                % {"total": total}
            )
        elif needed > 0:
            parts.append(
                ngettext(
                    "at least %(needed)d of %(total)d item right",
                    "at least %(needed)d of %(total)d items right",
                    total,
                )
                % {"needed": needed, "total": total}
            )
        parts += [str(REQUIRED_WORDS[q]) for q in self.required_questions]
        return gettext(", ").join(parts) or gettext("any answers")


def checked_rule(min_correct: int | None, required: Sequence[str]) -> PassRule:
    """A pass rule from a form or a request; RuleError names the bad field."""
    if min_correct is not None and (
        isinstance(min_correct, bool) or not isinstance(min_correct, int) or min_correct < 0
    ):
        raise RuleError("min_correct", "A number of items from 0 up.")
    if isinstance(required, str) or not all(isinstance(q, str) for q in required):
        raise RuleError("required_questions", "A list of question names.")
    unknown = sorted(set(required) - set(EXPECTABLE))
    if unknown:
        raise RuleError("required_questions", f"Unknown question: {', '.join(unknown)}.")
    ordered = tuple(q for q in EXPECTABLE if q in set(required))
    return PassRule(min_correct=min_correct, required_questions=ordered)


def rule_errors(rule: PassRule, expected: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """Why ``rule`` cannot judge attempts at items expecting ``expected`` (one per item)."""
    errors: dict[str, str] = {}
    total = len(expected)
    if not total:
        return errors  # no qualification: the rule is checked when items are chosen
    if rule.min_correct is not None and rule.min_correct > total:
        errors["min_correct"] = (
            f"The qualification has {total} item{'s' if total != 1 else ''}: "
            f"{rule.min_correct} cannot be right."
        )
    for question in rule.required_questions:
        if not any(question in answers for answers in expected):
            errors["required_questions"] = f"No qualification item expects an answer to {question}."
    return errors


def checked_expected(expected: Mapping[str, Any]) -> dict[str, str]:
    """Expected answers of an item, checked (RuleError names the question)."""
    if not isinstance(expected, Mapping):
        raise RuleError("expected_answers", "An object of question: answer.")
    result: dict[str, str] = {}
    for question, answer in expected.items():
        if question not in EXPECTABLE:
            raise RuleError("expected_answers", f"Unknown question {question!r}.")
        if answer in ("", None):
            continue
        if answer not in EXPECTABLE[question]:
            allowed = ", ".join(EXPECTABLE[question])
            raise RuleError(question, f"{question} is one of {allowed}, not {answer!r}.")
        result[question] = str(answer)
    if not result:
        raise RuleError("expected_answers", "Expect an answer to at least one question.")
    return result


def checked_explanations(explanations: Mapping[str, Any]) -> dict[str, str]:
    if not isinstance(explanations, Mapping):
        raise RuleError("explanations", "An object of question: text.")
    result: dict[str, str] = {}
    for question, text in explanations.items():
        if question not in EXPECTABLE:
            raise RuleError("explanations", f"Unknown question {question!r}.")
        if not isinstance(text, str):
            raise RuleError("explanations", f"The explanation of {question} is text.")
        text = text.strip()
        if len(text) > MAX_EXPLANATION:
            raise RuleError("explanations", f"Keep each explanation under {MAX_EXPLANATION}.")
        if "\x00" in text:
            raise RuleError("explanations", "Remove the NUL character (code 0).")
        if text:
            result[question] = text
    return result


def marks(expected: Mapping[str, str], given: Mapping[str, Any]) -> dict[str, bool]:
    """{question: given as expected} over the questions the item expects."""
    return {question: given.get(question) == answer for question, answer in expected.items()}


def attempt_passes(rule: PassRule, item_marks: Sequence[Mapping[str, bool]]) -> bool:
    """Whether an attempt (the marks of each item, once answered) meets the rule."""
    right = sum(all(m.values()) for m in item_marks)
    if right < rule.needed(len(item_marks)):
        return False
    return all(m[q] for m in item_marks for q in rule.required_questions if q in m)


def position_for(seed: int, annotator_id: int, item_id: int, *, flipped: bool = False) -> str:
    """Where the chosen answer is shown (A or B), seeded per member and item. The second
    qualification attempt shows it on the other side (``flipped``), so that an answer
    remembered as "A" from the feedback is no help; a practice retry keeps its side."""
    rng = random.Random(f"qualify:{seed}:{annotator_id}:{item_id}")
    first = "A" if rng.random() < 0.5 else "B"
    if flipped:
        return "B" if first == "A" else "A"
    return first
