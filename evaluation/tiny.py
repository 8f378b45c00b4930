"""A tiny Llama reward model with random weights, for checking that scoring runs end to end
(``python -m evaluation make-tiny-model DIR``), a tiny causal LM that always gives the same
reply, in the benchmark's reasoning-first format (``make-tiny-model --causal DIR``: a judge, a
model annotator, an endpoint to serve), and the pieces the test suite builds its models from.

Their outputs mean nothing: the weights are random or set by hand and the tokenizer is
word-level, trained with ``tokenizers`` on made-up words and the judge's prompts, so most real
words read as ``<unk>``. The saved config says so (``prb_note``), and so does the command.
"""

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
from transformers import (
    LlamaConfig,
    LlamaForCausalLM,
    LlamaForSequenceClassification,
    PreTrainedTokenizerFast,
)
from transformers.utils import logging

from evaluation import judge
from evaluation.errors import EvaluationError

MEANINGLESS = (
    "Random weights and a toy tokenizer: this model's scores are meaningless. "
    "Use it only to check that scoring runs (python -m evaluation make-tiny-model)."
)
SCRIPTED = (
    "A causal LM whose weights are set so that it always replies the same, whatever it is asked "
    "(python -m evaluation make-tiny-model --causal): its verdicts are meaningless."
)
# Pieces the scripted reply is made of that the word-level tokenizer would split: one token each.
REPLY_PIECES = ["<think>", "</think>", "**Reasoning:**", "**Result:**"]
# The benchmark's reply format: reasons first, then the verdict.
SCRIPTED_REPLY = [
    "<think>",
    "kelo",
    "</think>",
    "**Reasoning:**",
    "mira",
    "sotu",
    "**Result:**",
    "B",
]
SYLLABLES = ["ba", "ke", "lo", "mi", "nu", "ra", "so", "ti", "vu", "ze", "da", "fo", "gi", "pe"]
SYLLABLES.append("hu")
WORDS = [a + b for a, b in itertools.product(SYLLABLES, repeat=2)]
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>", "<|user|>", "<|assistant|>", "<|end|>"]

TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> "
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
TEMPLATE_WITHOUT_BOS = TEMPLATE.removeprefix("{{ bos_token }}")
# Each turn ends with EOS, as in Llama-2 style templates: with pad == EOS, every sequence ends
# with a token equal to the pad id.
EOS_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} {{ eos_token }} "
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def corpus(extra_text: Sequence[str] = ()) -> list[str]:
    """What the tokenizer is trained on: made-up words, the prompts' own words, digits."""
    prose = [
        "Here are some of my past posts : Post My question",
        judge.INSTRUCTIONS,
        judge.VERDICT_REQUEST,
        "[User's message] [Answer A] [End of Answer A] [Answer B] [End of Answer B]",
        " ".join(str(n) for n in range(30)),
        ". , ? !",
    ]
    return [" ".join(WORDS), *prose, *extra_text]


def make_tokenizer(
    *,
    pad_is_eos: bool = False,
    template: str | None = TEMPLATE,
    padding_side: str = "right",
    extra_text: Sequence[str] = (),
    adds_bos: bool = True,
    has_bos: bool = True,
    pieces: Sequence[str] = (),
) -> PreTrainedTokenizerFast:
    """A word-level tokenizer with BOS, EOS, pad and a chat template. ``adds_bos``: BOS in front
    of plain text, as Llama tokenizers do. ``has_bos=False``: no BOS token at all (then the
    template must not write one). ``pieces``: strings read as one token each."""
    model = Tokenizer(models.WordLevel(unk_token="<unk>"))
    model.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(vocab_size=1000, min_frequency=1, special_tokens=SPECIALS)
    model.train_from_iterator(corpus(extra_text), trainer)
    bos = model.token_to_id("<s>")
    if has_bos and adds_bos:
        model.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A $B", special_tokens=[("<s>", bos)]
        )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=model,
        bos_token="<s>" if has_bos else None,
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="</s>" if pad_is_eos else "<pad>",
        padding_side=padding_side,
    )
    tokenizer.chat_template = template
    if pieces:
        tokenizer.add_tokens(list(pieces))
    return tokenizer


def llama_config(tokenizer: PreTrainedTokenizerFast, **overrides: Any) -> LlamaConfig:
    settings: dict[str, Any] = {
        "vocab_size": len(tokenizer),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 1024,
        "rms_norm_eps": 1e-6,
        "initializer_range": 0.2,
        "num_labels": 1,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "tie_word_embeddings": False,
    }
    settings.update(overrides)
    return LlamaConfig(**settings)


def random_reward_model(
    tokenizer: PreTrainedTokenizerFast, seed: int = 0, **overrides: Any
) -> LlamaForSequenceClassification:
    torch.manual_seed(seed)
    return LlamaForSequenceClassification(llama_config(tokenizer, **overrides)).eval()


def scripted_causal_model(
    tokenizer: PreTrainedTokenizerFast,
    reply: Sequence[str] = tuple(SCRIPTED_REPLY),
    *,
    seed: int = 0,
    **overrides: Any,
) -> LlamaForCausalLM:
    """A causal LM that replies ``reply`` (tokens; greedy), then EOS, whatever the prompt.

    Attention and MLP write nothing (their output layers are zero), so the last position's
    hidden state is its token's embedding, and the output layer maps each token of the reply
    to the next: the row of token ``n`` points along the embedding of the token before it. The
    reply starts after the generation prompt's last token, ``<|assistant|>``; its tokens must be
    distinct, as each one alone decides what follows.
    """
    chain = [tokenizer.convert_tokens_to_ids(token) for token in ["<|assistant|>", *reply]]
    chain.append(tokenizer.eos_token_id)
    if len(set(chain[:-1])) != len(chain) - 1 or tokenizer.unk_token_id in chain:
        raise ValueError("a scripted reply needs distinct tokens the tokenizer knows")
    torch.manual_seed(seed)
    model = LlamaForCausalLM(llama_config(tokenizer, **overrides)).eval()
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
        model.model.norm.weight.fill_(1.0)
        model.lm_head.weight.zero_()
        embeddings = model.model.embed_tokens.weight
        for before, after in itertools.pairwise(chain):
            model.lm_head.weight[after] = 10.0 * embeddings[before] / embeddings[before].norm()
    return model


def save(model: Any, tokenizer: PreTrainedTokenizerFast, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def write_tiny_reward_model(folder: Path, *, seed: int = 0) -> int:
    """Save a random-weight reward model and its tokenizer to ``folder``; returns its size in
    parameters. Its config carries ``prb_note`` saying that its scores are meaningless."""
    logging.disable_progress_bar()  # one shard of 400 kB: a bar would only be noise
    tokenizer = make_tokenizer()
    model = random_reward_model(tokenizer, seed, prb_note=MEANINGLESS)
    save(model, tokenizer, folder)
    return sum(parameter.numel() for parameter in model.parameters())


def write_tiny_causal_model(folder: Path, *, seed: int = 0) -> int:
    """Save the scripted causal LM, its tokenizer and its chat template to ``folder``; returns
    its size in parameters. Its config carries ``prb_note`` saying what it is."""
    logging.disable_progress_bar()
    tokenizer = make_tokenizer(extra_text=[" ".join(SCRIPTED_REPLY)], pieces=REPLY_PIECES)
    model = scripted_causal_model(tokenizer, seed=seed, prb_note=SCRIPTED)
    save(model, tokenizer, folder)
    return sum(parameter.numel() for parameter in model.parameters())


def make_tiny_model_command(folder: Path, *, seed: int = 0, causal: bool = False) -> int:
    """``python -m evaluation make-tiny-model [--causal] DIR``: refuses a folder holding
    anything but an earlier tiny model, so it never overwrites a real one."""
    if _holds_something_else(folder):
        raise EvaluationError(f"{folder} exists and is not a tiny model's folder; choose another")
    if causal:
        parameters = write_tiny_causal_model(folder, seed=seed)
        kind, note = "causal LM with a chat template", SCRIPTED
    else:
        parameters = write_tiny_reward_model(folder, seed=seed)
        kind, note = "reward model", MEANINGLESS
    print(f"Wrote a tiny Llama {kind} ({parameters:,} parameters) and its tokenizer to {folder}")
    print(f"MEANINGLESS: {note}")
    return 0


def _holds_something_else(folder: Path) -> bool:
    if not folder.exists():
        return False
    if not folder.is_dir():
        return True
    config = folder / "config.json"
    earlier = config.is_file() and "prb_note" in config.read_text(encoding="utf-8")
    return any(folder.iterdir()) and not earlier
