"""Record shapes other than ours, turned into our fields on the way in and back on the way out.

Two shapes common among preference sets are read besides the official and the plain one:

- **chat messages**: ``chosen`` and ``rejected`` are lists of ``{"role", "content"}`` turns. The
  turns before each list's last one are the prompt and must be the same in both; the last
  turn is the answer. Without a ``question`` (or ``prompt``) field the last user turn of the
  prompt becomes the question, and the turns before it are kept as the conversation's context
  (``context_turns``), which the annotation page shows above the question.
- **two responses and a winner**: ``response_a`` and ``response_b`` with a ``winner`` (or
  ``label``) naming one of them ("a", "b", "model_a", "response_b", 0, 1 ...).

``normalize`` gives the record in our fields and the ``origin`` that ``restore`` needs to give
the original fields back; ``records`` keeps the origin beside the record's other shape notes.
"""

from collections.abc import Mapping
from typing import Any

CHAT_FIELDS = ("chosen", "rejected")
RESPONSE_FIELDS = ("response_a", "response_b")
WINNER_FIELDS = ("winner", "label")
# How a winner label may name each response; compared after strip() and lower().
WINNER_SPELLINGS: dict[str, tuple[Any, ...]] = {
    "a": ("a", "response_a", "model_a", "answer_a", "1", "left", 0),
    "b": ("b", "response_b", "model_b", "answer_b", "2", "right", 1),
}
QUESTION_FIELDS = ("question", "prompt")


class ShapeProblem(Exception):
    """A record in one of these shapes that cannot be read; names the field."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems))
        self.problems = problems


def is_chat(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(t, dict) for t in value)


def normalize(
    raw: Mapping[str, Any], spellings: Mapping[str, tuple[Any, ...]] | None = None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The record in our fields, and how it was shaped (None: it already was ours)."""
    if all(name in raw for name in RESPONSE_FIELDS) and "chosen" not in raw:
        return from_responses(raw, spellings or WINNER_SPELLINGS)
    if any(is_chat(raw.get(name)) for name in CHAT_FIELDS):
        return from_chat(raw)
    return dict(raw), None


def from_responses(
    raw: Mapping[str, Any], spellings: Mapping[str, tuple[Any, ...]]
) -> tuple[dict[str, Any], dict[str, Any]]:
    label_key = next((name for name in WINNER_FIELDS if name in raw), None)
    if label_key is None:
        raise ShapeProblem([("winner", 'missing field "winner" (or "label")')])
    label = raw[label_key]
    side = winner_side(label, spellings)
    if side is None:
        known = ", ".join(sorted({repr(v) for values in spellings.values() for v in values}))
        raise ShapeProblem([(label_key, f"{label!r} names neither response (expected {known})")])
    loser = "b" if side == "a" else "a"
    record = {key: value for key, value in raw.items() if key not in (*RESPONSE_FIELDS, label_key)}
    record["chosen"] = raw[f"response_{side}"]
    record["rejected"] = raw[f"response_{loser}"]
    return record, {"kind": "responses", "label_key": label_key, "label": label, "side": side}


def winner_side(label: Any, spellings: Mapping[str, tuple[Any, ...]]) -> str | None:
    for side, values in spellings.items():
        for value in values:
            if isinstance(value, str) and isinstance(label, str):
                if label.strip().lower() == value.lower():
                    return side
            elif type(label) is type(value) and label == value:
                return side
    return None


def from_chat(raw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    problems: list[tuple[str, str]] = []
    for name in CHAT_FIELDS:
        value = raw.get(name)
        if not isinstance(value, list) or not is_chat(value):
            problems.append((name, "expected a list of {role, content} turns like the other"))
        elif not all(isinstance(t.get("content"), str) for t in value):
            problems.append((name, 'every turn needs a text "content"'))
    if problems:
        raise ShapeProblem(problems)
    chosen: list[dict[str, Any]] = raw["chosen"]
    rejected: list[dict[str, Any]] = raw["rejected"]
    prompt = chosen[:-1]
    if rejected[:-1] != prompt:
        turn = first_difference(prompt, rejected[:-1])
        raise ShapeProblem([("rejected", f"its prompt turns differ from chosen's (turn {turn})")])
    record = {key: value for key, value in raw.items() if key not in CHAT_FIELDS}
    record["chosen"] = chosen[-1]["content"]
    record["rejected"] = rejected[-1]["content"]
    origin: dict[str, Any] = {
        "kind": "chat",
        "prompt_turns": prompt,
        "answer_turns": [answer_keys(chosen[-1]), answer_keys(rejected[-1])],
    }
    if not any(name in raw for name in QUESTION_FIELDS):
        user = [i for i, t in enumerate(prompt) if t.get("role") == "user"]
        if not user:
            raise ShapeProblem([("chosen", "no user turn before the answer to take as question")])
        record["question"] = prompt[user[-1]]["content"]
        record["context_turns"] = prompt[: user[-1]]
        origin["question_from_turns"] = True
    return record, origin


def answer_keys(turn: dict[str, Any]) -> dict[str, Any]:
    """The answer turn's keys but its content (its role and anything else it carried)."""
    return {key: value for key, value in turn.items() if key != "content"}


def first_difference(left: list[Any], right: list[Any]) -> int:
    for index, (one, other) in enumerate(zip(left, right, strict=False), start=1):
        if one != other:
            return index
    return min(len(left), len(right)) + 1


def restore(record: dict[str, Any], origin: Mapping[str, Any]) -> dict[str, Any]:
    """The record as the file held it, from ``normalize``'s output given back by ``records``."""
    if origin.get("kind") == "responses":
        return to_responses(record, origin)
    if origin.get("kind") == "chat":
        return to_chat(record, origin)
    return record


def to_responses(record: dict[str, Any], origin: Mapping[str, Any]) -> dict[str, Any]:
    restored = {key: value for key, value in record.items() if key not in CHAT_FIELDS}
    winner, loser = record["chosen"], record["rejected"]
    a, b = (winner, loser) if origin["side"] == "a" else (loser, winner)
    restored.update({"response_a": a, "response_b": b, origin["label_key"]: origin["label"]})
    return restored


def to_chat(record: dict[str, Any], origin: Mapping[str, Any]) -> dict[str, Any]:
    restored = {key: value for key, value in record.items() if key not in CHAT_FIELDS}
    if origin.get("question_from_turns"):
        restored.pop("question", None)
        restored.pop("context_turns", None)
    prompt = list(origin["prompt_turns"])
    chosen_turn, rejected_turn = origin["answer_turns"]
    restored["chosen"] = [*prompt, {**chosen_turn, "content": record["chosen"]}]
    restored["rejected"] = [*prompt, {**rejected_turn, "content": record["rejected"]}]
    return restored
