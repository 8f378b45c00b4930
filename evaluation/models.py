"""Load a reward model or a judge with its tokenizer, on the right device and dtype.

Defaults: bf16 with SDPA attention on CUDA, float32 on CPU (bf16 matmuls on a CPU are slow and
lose precision for nothing); ``dtype`` and ``device`` override both.
"""

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from evaluation.errors import EvaluationError

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
DTYPE_ALIASES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16"}


@dataclass
class LoadedModel:
    """A model ready to score: weights on ``device`` in eval mode, tokenizer with a pad token.

    ``backbone`` and ``head`` are set for decoder reward models whose head is a linear layer
    over the last token's hidden state (Llama, Mistral, Qwen, Gemma, GPT-2, ... classifiers):
    the scorer then runs the backbone itself, reads the hidden state at the last real token and
    applies the head in float32. Other classifiers (encoders pooling a first token, custom
    heads) are run whole, padded on the right.
    """

    model: Any
    tokenizer: Any
    name: str
    device: torch.device
    dtype: torch.dtype
    backbone: nn.Module | None = None
    head: nn.Linear | None = None

    @property
    def pad_id(self) -> int:
        return int(self.tokenizer.pad_token_id)

    @property
    def max_length(self) -> int | None:
        """Longest input the model was built for, when its config says so."""
        limit = getattr(self.model.config, "max_position_embeddings", None)
        return int(limit) if isinstance(limit, int) and limit > 0 else None


def resolve_device(name: str | None = None) -> torch.device:
    """``name`` as a device; by default CUDA when present (one GPU per local rank), else CPU."""
    if name is None or name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(name)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise EvaluationError("--device cuda asked for, but no CUDA device is available")
        if device.index is None:
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return device


def resolve_dtype(name: str | None, device: torch.device) -> torch.dtype:
    if name is None or name == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    key = DTYPE_ALIASES.get(name, name)
    if key not in DTYPES:
        raise EvaluationError(f"unknown dtype {name!r} (use {', '.join(DTYPES)})")
    return DTYPES[key]


def check_model_location(name: str) -> None:
    """Fail early and clearly on a local path that does not exist.

    A name that is not a local folder is taken for a Hub id, which ``from_pretrained`` resolves
    (from the local cache when offline).
    """
    path = Path(name).expanduser()
    looks_local = name.startswith(("/", ".", "~")) or name.count("/") > 1
    if looks_local and not path.is_dir():
        raise EvaluationError(f"no model at {name}: not a folder")
    if path.exists() and not path.is_dir():
        raise EvaluationError(f"no model at {name}: a model is a folder, this is a file")


def load_tokenizer(
    name: str, *, chat_template: str | None = None, trust_remote_code: bool = False
) -> Any:
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(name, trust_remote_code=trust_remote_code)
    except (OSError, ValueError) as error:
        raise EvaluationError(f"cannot load the tokenizer of {name}: {error}") from None
    if chat_template is not None:
        tokenizer.chat_template = chat_template
    if tokenizer.pad_token is None:
        # Any id will do for padding since the scorer masks it and reads scores from the mask;
        # EOS is the usual choice, UNK the fallback.
        tokenizer.pad_token = tokenizer.eos_token or tokenizer.unk_token
        if tokenizer.pad_token is None:
            raise EvaluationError(
                f"the tokenizer of {name} has no pad, EOS or UNK token to pad with"
            )
    return tokenizer


def _from_pretrained(
    auto_class: Any, name: str, dtype: torch.dtype, trust_remote_code: bool
) -> tuple[Any, dict[str, Any]]:
    options: dict[str, Any] = {
        "dtype": dtype,
        "trust_remote_code": trust_remote_code,
        "output_loading_info": True,
    }
    try:
        try:
            return auto_class.from_pretrained(name, attn_implementation="sdpa", **options)
        except ValueError as error:
            if "sdpa" not in str(error).lower():
                raise
            # Architectures without SDPA support run with their default attention.
            return auto_class.from_pretrained(name, **options)
    except (OSError, ValueError, KeyError) as error:
        raise EvaluationError(f"cannot load the model {name}: {error}") from None


def _prepare(
    name: str,
    device: str | None,
    dtype: str | None,
    chat_template: str | None,
    trust_remote_code: bool,
) -> tuple[torch.device, torch.dtype, Any]:
    """What loading either kind of model starts with: the place, the dtype and the tokenizer."""
    check_model_location(name)
    torch_device = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, torch_device)
    tokenizer = load_tokenizer(
        name, chat_template=chat_template, trust_remote_code=trust_remote_code
    )
    return torch_device, torch_dtype, tokenizer


def load_reward_model(
    name: str,
    *,
    device: str | None = None,
    dtype: str | None = None,
    chat_template: str | None = None,
    trust_remote_code: bool = False,
) -> LoadedModel:
    """A sequence-classification reward model from a local folder or a Hub id."""
    from transformers import AutoModelForSequenceClassification

    torch_device, torch_dtype, tokenizer = _prepare(
        name, device, dtype, chat_template, trust_remote_code
    )
    model, info = _from_pretrained(
        AutoModelForSequenceClassification, name, torch_dtype, trust_remote_code
    )
    untrained_head = [
        key for key in info.get("missing_keys", ()) if not key.startswith(model.base_model_prefix)
    ]
    if untrained_head:
        raise EvaluationError(
            f"{name} has no trained reward head (missing {', '.join(sorted(untrained_head))}); "
            "is it a causal LM? Score it as a judge with --judge"
        )
    model.config.pad_token_id = tokenizer.pad_token_id
    model.to(torch_device).eval()
    loaded = LoadedModel(model, tokenizer, name, torch_device, torch_dtype)
    loaded.backbone, loaded.head = last_token_parts(model)
    return loaded


def last_token_parts(model: Any) -> tuple[nn.Module | None, nn.Linear | None]:
    """The decoder body and linear head of a last-token classifier, or ``(None, None)``."""
    head = getattr(model, "score", None)
    backbone = getattr(model, getattr(model, "base_model_prefix", ""), None)
    if isinstance(head, nn.Linear) and isinstance(backbone, nn.Module):
        return backbone, head
    return None, None


def load_judge(
    name: str,
    *,
    device: str | None = None,
    dtype: str | None = None,
    chat_template: str | None = None,
    trust_remote_code: bool = False,
) -> LoadedModel:
    """A causal language model used as a pairwise judge."""
    from transformers import AutoModelForCausalLM

    torch_device, torch_dtype, tokenizer = _prepare(
        name, device, dtype, chat_template, trust_remote_code
    )
    model, _ = _from_pretrained(AutoModelForCausalLM, name, torch_dtype, trust_remote_code)
    model.to(torch_device).eval()
    return LoadedModel(model, tokenizer, name, torch_device, torch_dtype)
