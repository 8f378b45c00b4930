"""A causal LM asked the annotation questions: the template file, reply parsing, both orders,
and the accounting of replies that name no choice. Tiny scripted models built in the test."""

import math
from pathlib import Path

import pytest
import torch

from evaluation.annotator import (
    DEFAULT_TEMPLATE,
    annotate_records,
    answer_summary,
    choice_tokens,
    load_template,
    parse_answer,
)
from evaluation.config import ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.models import load_judge
from evaluation.records import to_pair_record
from tests.support import tiny

RECORDS = [to_pair_record(raw, index=i) for i, raw in enumerate(tiny.records(4))]


def scripted_dir(models_dir: Path, word: str) -> Path:
    """A causal LM that always replies ``word``, added to the tiny vocabulary when missing."""
    folder = models_dir / f"annotator-{word}"
    if not folder.exists():
        tokenizer = tiny.make_tokenizer()
        tokenizer.add_tokens([word])
        tiny.save(tiny.scripted_judge(tokenizer, word), tokenizer, folder)
    return folder


@pytest.mark.parametrize(
    ("question", "reply", "answer"),
    [
        ("rubric_fit", "A", "A"),
        ("rubric_fit", "**B**", "B"),
        ("rubric_fit", "Tie.", "tie"),
        ("rubric_fit", "[[tie]]", "tie"),
        ("rubric_fit", "tie, or rather [[A]]", None),
        ("rubric_fit", "both fit", None),
        ("differentiator", "preference", "preference"),
        ("differentiator", "Personal preference.", "preference"),
        ("differentiator", "general quality", "quality"),
        ("differentiator", "No real difference", "none"),
        ("differentiator", "BOTH", "both"),
        ("differentiator", "It is about taste", None),
        ("differentiator", "", None),
    ],
)
def test_it_parses_each_question_or_leaves_it_unparsed(question, reply, answer):
    assert parse_answer(question, reply) == answer


def test_it_ships_a_default_template_with_both_questions():
    template = load_template()
    assert template.source == str(DEFAULT_TEMPLATE)
    assert set(template.prompts) == {"rubric_fit", "differentiator"}
    record = RECORDS[0]
    message = template.message("rubric_fit", record, "first", "second", record.question)
    assert "[Response A]\nfirst" in message
    assert "{" not in message


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[rubric_fit]\n{user} {answer_a} {answer_b}\n", "no [differentiator] section"),
        ("[rubric_fit]\nx\n[differentiator]\ny\n[quality]\nz\n", "unknown section [quality]"),
        ("[rubric_fit]\n{rubric}\n[differentiator]\ny\n", "unknown placeholder {rubric}"),
        (
            "[rubric_fit]\n{answer_a.__class__}\n[differentiator]\ny\n",
            "unknown placeholder {answer_a.__class__}",
        ),
        ("[rubric_fit]\n{user\n[differentiator]\ny\n", "[rubric_fit]"),
    ],
)
def test_it_refuses_a_bad_template_naming_file_and_section(tmp_path, text, error):
    path = tmp_path / "protocol.txt"
    path.write_text(text)
    with pytest.raises(EvaluationError) as caught:
        load_template(path)
    assert str(path) in str(caught.value)
    assert error in str(caught.value)


def test_it_asks_every_question_in_both_orders_and_orients_the_answers(models_dir):
    """A model that always says "A" picks the chosen answer when it is shown first and the
    rejected one otherwise; it never names a differentiator, so those replies are unparsed."""
    loaded = load_judge(str(scripted_dir(models_dir, "A")))
    config = ScoreConfig(model="a", judge=True, max_new_tokens=2)
    answers = annotate_records(loaded, RECORDS, load_template(), config)
    assert len(answers) == len(RECORDS) * 2 * 2
    fit = [(a.chosen_position, a.answer) for a in answers if a.question == "rubric_fit"]
    assert set(fit) == {("A", "chosen"), ("B", "rejected")}
    assert {a.answer for a in answers if a.question == "differentiator"} == {None}
    summary = answer_summary(answers)
    assert summary["rubric_fit"]["unparsed"] == 0
    assert summary["rubric_fit"]["pairs_parsed_in_both_orders"] == 4
    assert summary["rubric_fit"]["pairs_consistent"] == 0
    assert summary["differentiator"]["unparsed"] == 8
    assert answers[1].reply == "A A"


def test_it_reads_a_differentiator_and_a_user_template(models_dir, tmp_path):
    template = tmp_path / "paper.txt"
    template.write_text(
        "[rubric_fit]\nQ: {question}\n1: {answer_a}\n2: {answer_b}\nA or B?\n"
        "[differentiator]\n{user}\n{answer_a}\n{answer_b}\nWhy do they differ?\n"
    )
    loaded = load_judge(str(scripted_dir(models_dir, "preference")))
    answers = annotate_records(
        loaded, RECORDS, load_template(template), ScoreConfig(model="p", max_new_tokens=1)
    )
    summary = answer_summary(answers)
    assert summary["differentiator"]["answers"] == {"preference": 8}
    assert summary["differentiator"]["pairs_consistent"] == 4
    assert summary["rubric_fit"]["unparsed"] == 8


def test_it_never_shows_the_model_the_rubric_or_the_narrative(models_dir):
    loaded = load_judge(str(scripted_dir(models_dir, "A")))
    tokenizer = loaded.tokenizer
    canaries = {
        tokenizer.convert_tokens_to_ids(word)
        for word in (tiny.RUBRIC_CANARY, tiny.NARRATIVE_CANARY)
    }
    seen = []
    hook = loaded.model.get_input_embeddings().register_forward_hook(
        lambda module, args, output: seen.append(args[0].detach().clone())
    )
    try:
        config = ScoreConfig(model="a", judge=True, mode="profile", max_new_tokens=1)
        annotate_records(loaded, RECORDS[:2], load_template(), config)
    finally:
        hook.remove()
    read = {token for ids in seen for token in ids.flatten().tolist()}
    assert not read & canaries
    assert tokenizer.convert_tokens_to_ids(tiny.QUESTION_CANARY) in read


def _leaning_judge_dir(models_dir: Path, lean_a: float, lean_b: float) -> Path:
    """A causal LM whose first token is "A" or "B" with logits in the ratio given: the scripted
    judge's one residual dimension, read by the output rows of both letters."""
    folder = models_dir / f"annotator-lean-{lean_a}-{lean_b}"
    if not folder.exists():
        tokenizer = tiny.make_tokenizer()
        tokenizer.add_tokens(["A", "B", "preference", "quality"])
        model = tiny.scripted_judge(tokenizer, "A")
        with torch.no_grad():
            model.lm_head.weight[tokenizer.convert_tokens_to_ids("A"), 0] = lean_a
            model.lm_head.weight[tokenizer.convert_tokens_to_ids("B"), 0] = lean_b
        tiny.save(model, tokenizer, folder)
    return folder


def test_it_keeps_the_probability_of_the_chosen_answer_among_the_choices(models_dir):
    """The residual stream's one dimension is 1 / sqrt(1/32 + eps) after the final norm, so the
    first token's logits are 0.3 and 0.2 times that for A and B and 0 for every other token:
    P(A) among the question's choice tokens is e^a / (e^a + e^b + the other choices' ones).
    The chosen answer is A in one order and B in the other; the differentiator's replies
    begin with no differentiator, so they keep no probability."""
    loaded = load_judge(str(_leaning_judge_dir(models_dir, 0.3, 0.2)))
    config = ScoreConfig(model="lean", judge=True, max_new_tokens=1)
    answers = annotate_records(loaded, RECORDS, load_template(), config)
    scale = 1 / math.sqrt(1 / 32 + loaded.model.config.rms_norm_eps)
    others = sum(len(ids) for ids in choice_tokens(loaded.tokenizer)["rubric_fit"].values()) - 2
    total = math.exp(0.3 * scale) + math.exp(0.2 * scale) + others
    fit = {
        (a.chosen_position, a.answer, a.probability) for a in answers if a.question == "rubric_fit"
    }
    assert {(position, answer) for position, answer, _ in fit} == {
        ("A", "chosen"),
        ("B", "rejected"),
    }
    chances = {position: probability for position, _, probability in fit}
    assert chances["A"] == pytest.approx(math.exp(0.3 * scale) / total, rel=1e-4)
    assert chances["B"] == pytest.approx(math.exp(0.2 * scale) / total, rel=1e-4)
    assert {a.probability for a in answers if a.question == "differentiator"} == {None}
    assert answers[0].as_dict()["probability"] == answers[0].probability
