"""A causal language model asked the annotation questions, as a model annotator.

The questions come from a prompt template file, one section per question (``[rubric_fit]``,
``[differentiator]``), so that any paper's judge protocol can be reproduced exactly; the
project's plain default is ``templates/annotator.txt``. Every pair is asked every question in
both orders (chosen answer shown as A, then as B). A reply is parsed into the question's
choices; a reply that names none, or several, is kept as unparsed and counted, never guessed.
Answers are turned into dataset orientation (chosen / rejected) as the human ones are.

Where the reply *begins* with one of the question's choices (a template that asks for the
choice first), the model's probability for it is kept beside the answer: at the reply's first
token, the probability of the choice that counts towards validating the pair (the dataset's
chosen answer for the rubric fit, personal preference for the differentiator) among the
question's choices (``CHOICE_WORDS``, each by the first token of its spellings). A reply that
reasons first, or an endpoint that gives no token probabilities, keeps none.

Like the reward models, the model sees the question (and with ``mode="profile"`` the user's
past posts) and the two answers, never the rubric or the narrative: ``PairRecord`` holds
neither.
"""

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.config import ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.inputs import encode_chats, user_turn
from evaluation.judge import FirstToken, generate_with_first_token, parse_verdict
from evaluation.models import LoadedModel
from evaluation.records import PairRecord

DEFAULT_TEMPLATE = Path(__file__).with_name("templates") / "annotator.txt"
QUESTIONS = ("rubric_fit", "differentiator")
PLACEHOLDERS = frozenset({"user", "question", "answer_a", "answer_b"})
SECTION = re.compile(r"^\[([a-z_]+)\]\s*$", re.MULTILINE)
TIE = re.compile(r"^[\s*_\"'(\[]*tie\b|\[\[\s*tie\s*\]\]", re.IGNORECASE)
# Per question, each choice as seen on screen and how a reply may spell it first.
CHOICE_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "rubric_fit": {"A": ("A",), "B": ("B",), "tie": ("tie", "Tie")},
    "differentiator": {
        word: (word, word.capitalize()) for word in ("preference", "quality", "both", "none")
    },
}
# The choice whose probability is kept: the one that counts towards validating the pair.
VALIDATING = {"rubric_fit": "chosen", "differentiator": "preference"}
DIFFERENTIATOR = re.compile(
    r"^[\s*_\"'(\[]*(?:personal\s+|general\s+|no\s+real\s+)?"
    r"(preference|quality|both|none|difference)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class AnnotatorTemplate:
    """One prompt per question, with the placeholders of ``PLACEHOLDERS``."""

    prompts: dict[str, str]
    source: str

    def message(self, question: str, record: PairRecord, first: str, second: str, user: str) -> str:
        return self.prompts[question].format(
            user=user, question=record.question, answer_a=first, answer_b=second
        )


@dataclass(frozen=True)
class ModelAnswer:
    """The model's answer to one question about one pair in one order."""

    pair_id: str
    question: str
    chosen_position: str
    reply: str
    # In dataset orientation (rubric fit: chosen / rejected / tie); None when unparsed.
    answer: str | None
    # The model's probability of the validating choice (``VALIDATING``); None without one.
    probability: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "pair_id": self.pair_id,
            "question": self.question,
            "chosen_position": self.chosen_position,
            "reply": self.reply,
            "answer": self.answer,
            "probability": self.probability,
        }


def load_template(path: str | Path | None = None) -> AnnotatorTemplate:
    """Read a template file; raises EvaluationError naming the file and the section at fault."""
    location = Path(path) if path is not None else DEFAULT_TEMPLATE
    try:
        text = location.read_text(encoding="utf-8")
    except OSError as error:
        raise EvaluationError(f"template {location}: cannot be read ({error})") from error
    parts = SECTION.split(text)
    prompts = {name: body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}
    for name, prompt in prompts.items():
        if name not in QUESTIONS:
            raise EvaluationError(f"template {location}: unknown section [{name}]")
        _check_placeholders(location, name, prompt)
    missing = [name for name in QUESTIONS if not prompts.get(name)]
    if missing:
        raise EvaluationError(f"template {location}: no [{missing[0]}] section")
    return AnnotatorTemplate(prompts, str(location))


def _check_placeholders(location: Path, name: str, prompt: str) -> None:
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(prompt) if field is not None]
    except ValueError as error:
        raise EvaluationError(f"template {location} [{name}]: {error}") from error
    # Plain names only: "{answer_a.__class__}" or "{user[0]}" would reach into objects.
    unknown = sorted(set(fields) - PLACEHOLDERS)
    if unknown:
        allowed = ", ".join("{" + field + "}" for field in sorted(PLACEHOLDERS))
        raise EvaluationError(
            f"template {location} [{name}]: unknown placeholder {{{unknown[0]}}} (use {allowed})"
        )


def parse_answer(question: str, reply: str) -> str | None:
    """The choice a reply names, as seen on screen (A / B / tie, or a differentiator)."""
    if question == "rubric_fit":
        if TIE.search(reply):
            return None if parse_verdict(reply) else "tie"
        return parse_verdict(reply)
    match = DIFFERENTIATOR.match(reply)
    if match is None:
        return None
    word = match.group(1).lower()
    return "none" if word == "difference" else word


def oriented(question: str, seen: str | None, chosen_position: str) -> str | None:
    """A/B into chosen/rejected for the rubric fit; other answers are the same either way."""
    if question != "rubric_fit" or seen in (None, "tie"):
        return seen
    return "chosen" if seen == chosen_position else "rejected"


def annotate_records(
    loaded: LoadedModel | None,
    records: Sequence[PairRecord],
    template: AnnotatorTemplate,
    config: ScoreConfig,
) -> list[ModelAnswer]:
    """Every question about every pair in both orders, in record, question, order order.

    ``loaded`` is the model in process; with ``config.endpoint`` it is None and the same chats
    go to the endpoint (the server applies the chat template and its own length limit)."""
    jobs = [
        (record, question, position)
        for record in records
        for question in QUESTIONS
        for position in ("A", "B")
    ]
    firsts: list[FirstToken | None]
    if config.endpoint is not None:
        chats = [_chat(template, job, config, _posts(job[0], config)) for job in jobs]
        replies = config.endpoint.replies(chats, config.new_tokens)
        firsts = [None] * len(jobs)
        choices: dict[str, dict[str, set[int]]] = {}
    else:
        assert loaded is not None
        max_length = config.max_length or loaded.max_length
        limit = None if max_length is None else max_length - config.new_tokens
        prompts = [_prompt_ids(loaded.tokenizer, template, job, config, limit) for job in jobs]
        choices = choice_tokens(loaded.tokenizer)
        watched = sorted({t for by in choices.values() for ids in by.values() for t in ids})
        replies, found = generate_with_first_token(loaded, prompts, config, watched)
        firsts = list(found)
    return [
        ModelAnswer(
            pair_id=record.id,
            question=question,
            chosen_position=position,
            reply=reply,
            answer=oriented(question, parse_answer(question, reply), position),
            probability=None
            if first is None
            else validating_probability(question, position, first, choices[question]),
        )
        for (record, question, position), reply, first in zip(jobs, replies, firsts, strict=True)
    ]


def choice_tokens(tokenizer: Any) -> dict[str, dict[str, set[int]]]:
    """Per question and choice, the ids of the first token of each of its spellings, bare and
    after a space (a BPE tokenizer reads " A" as another token than "A"); unknown ones left out."""
    found: dict[str, dict[str, set[int]]] = {}
    for question, choices in CHOICE_WORDS.items():
        found[question] = {}
        for choice, spellings in choices.items():
            ids = set()
            for spelling in spellings:
                for text in (spelling, " " + spelling):
                    encoded = tokenizer.encode(text, add_special_tokens=False)
                    if encoded and encoded[0] != tokenizer.unk_token_id:
                        ids.add(int(encoded[0]))
            found[question][choice] = ids
    return found


def validating_probability(
    question: str, position: str, first: FirstToken, choices: dict[str, set[int]]
) -> float | None:
    """The probability of the validating choice among the question's choices at the reply's
    first token; None when the reply does not begin with one of them (it reasons first) or a
    token stands for two choices."""
    every = [token for ids in choices.values() for token in ids]
    if first.token not in every or len(every) != len(set(every)):
        return None
    mass = {choice: sum(first.chances[t] for t in ids) for choice, ids in choices.items()}
    total = sum(mass.values())
    if total <= 0:
        return None
    # The rubric fit's validating choice is the dataset's chosen answer: A or B as shown.
    shown = position if question == "rubric_fit" else VALIDATING[question]
    return mass[shown] / total


def _prompt_ids(
    tokenizer: Any,
    template: AnnotatorTemplate,
    job: tuple[PairRecord, str, str],
    config: ScoreConfig,
    limit: int | None,
) -> list[int]:
    record, question, _ = job
    posts = _posts(record, config)
    while True:
        [ids] = encode_chats(
            tokenizer, [_chat(template, job, config, posts)], add_generation_prompt=True
        )
        if limit is None or len(ids) <= limit:
            return ids
        if config.mode != "profile" or posts == 0:
            raise EvaluationError(
                f"record {record.id!r}: the {question} prompt has {len(ids)} tokens, more than "
                f"{limit} (set a larger max_length if the model allows it)"
            )
        posts -= 1  # drop the oldest shown post and try again


def _posts(record: PairRecord, config: ScoreConfig) -> int:
    return min(config.top_k, len(record.profile)) if config.mode == "profile" else 0


def _chat(
    template: AnnotatorTemplate,
    job: tuple[PairRecord, str, str],
    config: ScoreConfig,
    posts: int,
) -> list[dict[str, str]]:
    """The one user turn asking ``job``'s question, with ``posts`` of the user's posts."""
    record, question, position = job
    first, second = (
        (record.chosen, record.rejected) if position == "A" else (record.rejected, record.chosen)
    )
    user = user_turn(record, config.mode, posts, config.profile_format)
    return [{"role": "user", "content": template.message(question, record, first, second, user)}]


def answer_summary(answers: Sequence[ModelAnswer]) -> dict[str, Any]:
    """Per question: replies asked, parsed and unparsed, answers given, and the pairs whose
    two orders agree (a model that follows the position gives different answers)."""
    summary = {}
    for question in QUESTIONS:
        rows = [a for a in answers if a.question == question]
        by_pair: dict[str, list[str | None]] = {}
        for row in rows:
            by_pair.setdefault(row.pair_id, []).append(row.answer)
        both = [got for got in by_pair.values() if len(got) == 2 and None not in got]
        summary[question] = {
            "replies": len(rows),
            "parsed": sum(row.answer is not None for row in rows),
            "unparsed": sum(row.answer is None for row in rows),
            "answers": dict(Counter(row.answer for row in rows if row.answer is not None)),
            "pairs_parsed_in_both_orders": len(both),
            "pairs_consistent": sum(got[0] == got[1] for got in both),
        }
    return summary
