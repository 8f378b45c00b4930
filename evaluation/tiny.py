"""A tiny Llama reward model with random weights, for checking that scoring runs end to end
(``python -m evaluation make-tiny-model DIR``) and for the test suite, which builds its models
from the same pieces.

Its scores mean nothing: the weights are random and the tokenizer is word-level, trained with
``tokenizers`` on made-up words and the judge's prompts, so most real words read as ``<unk>``.
The saved config says so (``prb_note``), and so does the command.
"""

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
from transformers import LlamaConfig, LlamaForSequenceClassification, PreTrainedTokenizerFast
from transformers.utils import logging

from evaluation import judge
from evaluation.errors import EvaluationError

MEANINGLESS = (
    "Random weights and a toy tokenizer: this model's scores are meaningless. "
    "Use it only to check that scoring runs (python -m evaluation make-tiny-model)."
)
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
) -> PreTrainedTokenizerFast:
    """A word-level tokenizer with BOS, EOS, pad and a chat template. ``adds_bos``: BOS in front
    of plain text, as Llama tokenizers do. ``has_bos=False``: no BOS token at all (then the
    template must not write one)."""
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


def make_tiny_model_command(folder: Path, *, seed: int = 0) -> int:
    """``python -m evaluation make-tiny-model DIR``: refuses a folder holding anything but an
    earlier tiny model, so it never overwrites a real one."""
    if _holds_something_else(folder):
        raise EvaluationError(f"{folder} exists and is not a tiny model's folder; choose another")
    parameters = write_tiny_reward_model(folder, seed=seed)
    print(
        f"Wrote a tiny Llama reward model ({parameters:,} parameters) and its tokenizer to {folder}"
    )
    print(f"MEANINGLESS: {MEANINGLESS}")
    return 0


def _holds_something_else(folder: Path) -> bool:
    if not folder.exists():
        return False
    if not folder.is_dir():
        return True
    config = folder / "config.json"
    earlier = config.is_file() and "prb_note" in config.read_text(encoding="utf-8")
    return any(folder.iterdir()) and not earlier
