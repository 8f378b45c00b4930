"""Load a reward model or a judge with its tokenizer, on the right device and dtype.

Defaults: bf16 with SDPA attention on CUDA, float32 on CPU (bf16 matmuls on a CPU are slow and
lose precision for nothing); ``dtype`` and ``device`` override both.
"""

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack

import torch
from torch import nn

from evaluation.errors import EvaluationError
from evaluation.locations import check_model_location

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


@contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load reports, warnings and progress bars while a model loads: the
    checks after loading say in one line what matters (a missing head, say)."""
    from transformers.utils import logging

    verbosity = logging.get_verbosity()
    bars = logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()


def load_tokenizer(
    name: str,
    *,
    chat_template: str | None = None,
    trust_remote_code: bool = False,
    local_files_only: bool = False,
) -> Any:
    from transformers import AutoTokenizer

    try:
        with quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(
                name, trust_remote_code=trust_remote_code, local_files_only=local_files_only
            )
    except (OSError, ValueError) as error:
        # Without tokenizer files transformers suggests installing sentencepiece or tiktoken.
        reason = "no tokenizer files in the folder" if lacks_tokenizer(name) else first_line(error)
        raise EvaluationError(f"cannot load the tokenizer of {name}: {reason}") from None
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


def lacks_tokenizer(name: str) -> bool:
    """Whether ``name`` is a local folder with no file a tokenizer is read from."""
    path = Path(name).expanduser()
    if not path.is_dir():
        return False
    patterns = ("tokenizer*", "vocab*", "*.model", "merges.txt", "*.tiktoken")
    return not any(any(path.glob(pattern)) for pattern in patterns)


def first_line(error: Exception) -> str:
    """An error's first line: transformers' messages run to many lines of advice."""
    return str(error).strip().split("\n", 1)[0].strip()


def _from_pretrained(
    auto_class: Any, name: str, dtype: torch.dtype, trust_remote_code: bool, local: bool
) -> tuple[Any, dict[str, Any]]:
    options: dict[str, Any] = {
        "dtype": dtype,
        "trust_remote_code": trust_remote_code,
        "output_loading_info": True,
        "local_files_only": local,
    }
    try:
        with quiet_transformers():
            try:
                return auto_class.from_pretrained(name, attn_implementation="sdpa", **options)
            except ValueError as error:
                if "sdpa" not in str(error).lower():
                    raise
                # Architectures without SDPA support run with their default attention.
                return auto_class.from_pretrained(name, **options)
    except (OSError, ValueError, KeyError) as error:
        raise EvaluationError(f"cannot load the model {name}: {first_line(error)}") from None


class LoadOptions(TypedDict, total=False):
    """How either kind of model is loaded; one left out takes its default (the device and the
    dtype as ``resolve_device`` and ``resolve_dtype`` pick them, the model's own chat template,
    no remote code)."""

    device: str | None
    dtype: str | None
    chat_template: str | None
    trust_remote_code: bool


@dataclass(frozen=True)
class Setup:
    """What loading either kind of model starts with."""

    device: torch.device
    dtype: torch.dtype
    tokenizer: Any
    local_files_only: bool
    architectures: tuple[str, ...]
    trust_remote_code: bool


def _prepare(name: str, options: LoadOptions) -> Setup:
    """The place, the dtype, the tokenizer and the architectures the model's config names."""
    trust_remote_code = options.get("trust_remote_code", False)
    local = check_model_location(name)
    torch_device = resolve_device(options.get("device"))
    torch_dtype = resolve_dtype(options.get("dtype"), torch_device)
    tokenizer = load_tokenizer(
        name,
        chat_template=options.get("chat_template"),
        trust_remote_code=trust_remote_code,
        local_files_only=local,
    )
    architectures = _architectures(name, local)
    return Setup(torch_device, torch_dtype, tokenizer, local, architectures, trust_remote_code)


def _architectures(name: str, local: bool) -> tuple[str, ...]:
    from transformers import AutoConfig

    try:
        with quiet_transformers():
            config = AutoConfig.from_pretrained(name, local_files_only=local)
    except (OSError, ValueError, KeyError):
        return ()  # custom configs (trust_remote_code) are read by the model loader itself
    return tuple(getattr(config, "architectures", None) or ())


def untrained_parts(model: Any, info: dict[str, Any]) -> list[str]:
    """Weights the checkpoint lacks outside the shared body: a head made up at random."""
    prefix = model.base_model_prefix
    return sorted(key for key in info.get("missing_keys", ()) if not key.startswith(prefix))


def load_reward_model(name: str, **options: Unpack[LoadOptions]) -> LoadedModel:
    """A sequence-classification reward model from a local folder or a Hub id."""
    from transformers import AutoModelForSequenceClassification

    setup = _prepare(name, options)
    model, info = _from_pretrained(
        AutoModelForSequenceClassification,
        name,
        setup.dtype,
        setup.trust_remote_code,
        setup.local_files_only,
    )
    untrained_head = untrained_parts(model, info)
    if untrained_head:
        raise EvaluationError(
            f"{name} has no trained reward head (missing {', '.join(untrained_head)}); "
            "is it a causal LM? Score it as a judge with --judge"
        )
    model.config.pad_token_id = setup.tokenizer.pad_token_id
    model.to(setup.device).eval()
    loaded = LoadedModel(model, setup.tokenizer, name, setup.device, setup.dtype)
    loaded.backbone, loaded.head = last_token_parts(model)
    return loaded


def last_token_parts(model: Any) -> tuple[nn.Module | None, nn.Linear | None]:
    """The decoder body and linear head of a last-token classifier, or ``(None, None)``."""
    head = getattr(model, "score", None)
    backbone = getattr(model, getattr(model, "base_model_prefix", ""), None)
    if isinstance(head, nn.Linear) and isinstance(backbone, nn.Module):
        return backbone, head
    return None, None


def load_judge(name: str, **options: Unpack[LoadOptions]) -> LoadedModel:
    """A causal language model used as a pairwise judge.

    A reward model (a sequence classifier) is refused: loaded as a causal LM it would get a
    language-model head made up at random, and every reply would be noise.
    """
    from transformers import AutoModelForCausalLM

    setup = _prepare(name, options)
    classifiers = [arch for arch in setup.architectures if arch.endswith("Classification")]
    if classifiers:
        raise EvaluationError(
            f"{name} is a reward model ({classifiers[0]}), not a causal LM; "
            "score it without --judge"
        )
    model, info = _from_pretrained(
        AutoModelForCausalLM, name, setup.dtype, setup.trust_remote_code, setup.local_files_only
    )
    untrained_head = untrained_parts(model, info)
    if untrained_head:
        raise EvaluationError(
            f"{name} has no trained language-model head (missing {', '.join(untrained_head)}); "
            "is it a reward model? Score it without --judge"
        )
    model.to(setup.device).eval()
    return LoadedModel(model, setup.tokenizer, name, setup.device, setup.dtype)
