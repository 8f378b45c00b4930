"""Tiny tokenizers, models and records built in the tests, saved and loaded the real way.

Everything is made from fixture text: the word-level tokenizer of ``evaluation.tiny`` (also
behind ``python -m evaluation make-tiny-model``), with the canary words below in its
vocabulary; small Llama classifiers and causal LMs, randomly initialised or with weights set by
hand so that their output is known.
"""

import random

import torch
from transformers import LlamaForCausalLM, LlamaForSequenceClassification

from evaluation import tiny
from evaluation.tiny import (
    EOS_TEMPLATE,
    SPECIALS,
    SYLLABLES,
    TEMPLATE,
    TEMPLATE_WITHOUT_BOS,
    WORDS,
    llama_config,
    random_reward_model,
    save,
)

__all__ = [
    "EOS_TEMPLATE",
    "SPECIALS",
    "SYLLABLES",
    "TEMPLATE",
    "TEMPLATE_WITHOUT_BOS",
    "WORDS",
    "llama_config",
    "random_reward_model",
    "save",
]

# Words whose share in a sequence the feature reward model scores (see feature_reward_model).
MARKERS = [word for word in WORDS if word.startswith("ze")]
PLAIN = [word for word in WORDS if not word.startswith("ze")]
# Words that only ever appear in fields a model must never see.
RUBRIC_CANARY = "rubriccanary"
NARRATIVE_CANARY = "narrativecanary"
QUESTION_CANARY = "questioncanary"
CANARIES = f"{RUBRIC_CANARY} {NARRATIVE_CANARY} {QUESTION_CANARY}"


def corpus() -> list[str]:
    return tiny.corpus([CANARIES])


def make_tokenizer(
    *,
    pad_is_eos: bool = False,
    template: str | None = TEMPLATE,
    padding_side: str = "right",
    adds_bos: bool = True,
    has_bos: bool = True,
):
    """The package's tokenizer, with the canary words in its vocabulary."""
    return tiny.make_tokenizer(
        pad_is_eos=pad_is_eos,
        template=template,
        padding_side=padding_side,
        extra_text=[CANARIES],
        adds_bos=adds_bos,
        has_bos=has_bos,
    )


# Constants of the feature reward model.
FEATURE_BASE = 4.0  # a constant dimension in every embedding, so no normalisation divides by 0
FEATURE_GAIN = 4.0


def feature_reward_model(tokenizer) -> LlamaForSequenceClassification:
    """A classifier whose reward is known: it grows with the share of marker words in the
    whole sequence, with a small part from the last token (see :func:`feature_reward`).

    Queries and keys are zero, so attention is uniform over the visible tokens and the last
    token reads the mean of a value that is 1 for markers; MLPs and the second layer add
    nothing.
    """
    config = llama_config(tokenizer, hidden_size=32, intermediate_size=32, num_attention_heads=2)
    model = LlamaForSequenceClassification(config).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        for norm in [model.model.norm] + [
            n
            for layer in model.model.layers
            for n in (layer.input_layernorm, layer.post_attention_layernorm)
        ]:
            norm.weight.fill_(1.0)
        embeddings = model.model.embed_tokens.weight
        embeddings[:, 2] = FEATURE_BASE
        for word in MARKERS:
            embeddings[tokenizer.convert_tokens_to_ids(word), 0] = 1.0
        attention = model.model.layers[0].self_attn
        attention.v_proj.weight[0, 0] = 1.0  # value: the marker dimension
        attention.o_proj.weight[1, 0] = FEATURE_GAIN  # written to dimension 1
        model.score.weight[0, 1] = 1.0
    return model


def feature_reward(ids: list[int], tokenizer, eps: float = 1e-6) -> float:
    """The feature model's reward for ``ids``, computed by hand (float64)."""
    marker_ids = {tokenizer.convert_tokens_to_ids(word) for word in MARKERS}

    def embedding(token: int) -> torch.Tensor:
        vector = torch.zeros(32, dtype=torch.float64)
        vector[2] = FEATURE_BASE
        vector[0] = 1.0 if token in marker_ids else 0.0
        return vector

    def rms_norm(vector: torch.Tensor) -> torch.Tensor:
        return vector / torch.sqrt(vector.pow(2).mean() + eps)

    values = [rms_norm(embedding(token))[0] for token in ids]
    hidden = embedding(ids[-1])
    hidden[1] += FEATURE_GAIN * torch.stack(values).mean()
    return float(rms_norm(hidden)[1])


def scripted_judge(tokenizer, word: str) -> LlamaForCausalLM:
    """A causal LM that always replies ``word`` (greedy): the residual stream keeps a constant
    dimension, and only ``word``'s row of the output layer reads it."""
    config = llama_config(tokenizer, hidden_size=32, intermediate_size=32, num_attention_heads=2)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        model.model.norm.weight.fill_(1.0)
        for layer in model.model.layers:
            layer.input_layernorm.weight.fill_(1.0)
            layer.post_attention_layernorm.weight.fill_(1.0)
        model.model.embed_tokens.weight[:, 0] = 1.0
        model.lm_head.weight[tokenizer.convert_tokens_to_ids(word), 0] = 10.0
    return model


def records(count: int, *, seed: int = 0, posts: int = 4) -> list[dict]:
    """Official-schema records; chosen answers tend to hold more markers, and the private
    fields hold canary words that appear nowhere else."""
    rng = random.Random(seed)

    def text(words: int, marker_share: float) -> str:
        return " ".join(
            rng.choice(MARKERS) if rng.random() < marker_share else rng.choice(PLAIN)
            for _ in range(words)
        )

    rows = []
    for index in range(count):
        rows.append(
            {
                "id": f"r{index:03d}",
                "question": f"{QUESTION_CANARY} {text(rng.randint(3, 10), 0.1)} ?",
                "profile": [
                    {
                        "id": f"r{index}-p{n}",
                        "category": "Hobbies",
                        "text": text(rng.randint(4, 30), 0.2),
                    }
                    for n in range(rng.randint(1, posts))
                ],
                "rubric_aspects": [
                    {
                        "aspect": f"{RUBRIC_CANARY} {text(2, 0)}",
                        "evidence": RUBRIC_CANARY,
                        "reason": RUBRIC_CANARY,
                    }
                ],
                "narrative": f"{NARRATIVE_CANARY} {text(5, 0.3)}",
                "category": ["Art", "Lifestyle", "Society"][index % 3],
                "chosen": text(rng.randint(5, 40), 0.45),
                "rejected": text(rng.randint(5, 40), 0.25),
            }
        )
    return rows


def write_causal(folder, *, think: bool = True):
    """A scripted causal LM (``evaluation.tiny``) saved to ``folder``: it replies in the
    benchmark's reasoning-first format, naming B, with or without a ``</think>`` block."""
    reply = tiny.SCRIPTED_REPLY if think else tiny.SCRIPTED_REPLY[3:]
    tokenizer = tiny.make_tokenizer(
        extra_text=[" ".join(tiny.SCRIPTED_REPLY), CANARIES], pieces=tiny.REPLY_PIECES
    )
    return save(tiny.scripted_causal_model(tokenizer, reply), tokenizer, folder)
