"""The run card: what a run's scores depend on, written into ``summary.json`` as ``card``.

Two runs with the same card read the same model files with the same tokenizer, template,
special tokens, padding, dtype, attention, length limit, input mode and libraries; a figure
that differs between two cards is the first place to look when two runs' scores differ.

The model's files are hashed (sha256 of each file, then of the listing ``<sha256>  <path>``,
one line per file sorted by path, which ``sha256sum -c`` reads). Files in the local Hub cache are
links to blobs named by their sha256, and those names are used instead of reading the file
again. Nothing here imports torch at module level: the built-in baselines use it too.
"""

import hashlib
import importlib.metadata
import inspect
import json
import platform
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluation.config import ScoreConfig
from evaluation.judge_order import judge_order

if TYPE_CHECKING:
    from evaluation.models import LoadedModel

MODEL_LIBRARIES = ("torch", "transformers", "tokenizers", "safetensors", "numpy", "scipy")
BASELINE_LIBRARIES = ("numpy", "scipy")
SHA256_NAME = re.compile(r"[0-9a-f]{64}")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def libraries(names: tuple[str, ...]) -> dict[str, str | None]:
    found: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = None
    return found


def file_sha256(path: Path) -> str:
    """The file's sha256; a Hub cache link to a blob named by its sha256 is not read again."""
    if path.is_symlink():
        target = path.resolve()
        if SHA256_NAME.fullmatch(target.name):
            return target.name
    with path.open("rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def folder_digest(folder: Path) -> dict[str, Any]:
    """sha256 of every file under ``folder`` (hidden ones left out), and of their listing."""
    files = sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )
    listing: list[dict[str, Any]] = [
        {
            "path": path.relative_to(folder).as_posix(),
            "sha256": file_sha256(path),
            "bytes": path.stat().st_size,
        }
        for path in files
    ]
    lines = "".join(f"{item['sha256']}  {item['path']}\n" for item in listing)
    return {
        "sha256": sha256_text(lines),
        "files": len(listing),
        "bytes": sum(item["bytes"] for item in listing),
        "listing": listing,
    }


def model_folder(name: str) -> tuple[Path | None, str | None]:
    """Where the model's files are: the folder given, or its snapshot in the local Hub cache."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path, None
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True)), None
    except (OSError, ValueError):
        return None, "not a local folder, and no snapshot of it in the local Hub cache"


def tokenizer_sha256(tokenizer: Any) -> str:
    """sha256 of what the tokenizer does: a fast tokenizer's definition (its padding and
    truncation settings left out, the scorer sets those), else its vocabulary."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        data = json.loads(backend.to_str())
        data.pop("padding", None)
        data.pop("truncation", None)
        return sha256_text(json.dumps(data, sort_keys=True, ensure_ascii=False, allow_nan=False))
    vocabulary = sorted(tokenizer.get_vocab().items())
    return sha256_text(json.dumps(vocabulary, ensure_ascii=False, allow_nan=False))


def chat_template_sha256(template: Any) -> str | None:
    if not template:
        return None
    if isinstance(template, str):
        return sha256_text(template)
    return sha256_text(json.dumps(template, sort_keys=True, ensure_ascii=False, allow_nan=False))


def input_settings(config: ScoreConfig, limit: int | None, source: str) -> dict[str, Any]:
    return {
        "mode": config.mode,
        "top_k": config.top_k,
        "profile_format": config.profile_format,
        "rank_profile": retriever_card(config.rank_profile),
        "max_length": limit,
        "max_length_source": source,
        "tie_tolerance": config.tie_tolerance,
    }


def retriever_card(folder: str | None) -> dict[str, Any] | None:
    """The dense retriever that ranked the posts: its folder and the sha256 of its files."""
    if folder is None:
        return None
    from evaluation.retrieval import POOLING

    path = Path(folder)
    digest = folder_digest(path) if path.is_dir() else None
    return {
        "model": folder,
        "model_files_sha256": digest["sha256"] if digest else None,
        "pooling": POOLING,
    }


def judge_settings(loaded: "LoadedModel", config: ScoreConfig) -> dict[str, Any]:
    """What a judge is asked and how its reply is read; or how a reward model's is read."""
    if not config.judge:
        from evaluation.forward import readout_rule

        labels = int(getattr(loaded.model.config, "num_labels", 1))
        return {"reward": readout_rule(labels, config.readout)}
    template = config.judge_template
    return {
        "judge_template": None if template is None else template.describe(),
        "max_new_tokens": config.new_tokens,
        "judge_order": judge_order(config).words,
        "seed": config.seed,
    }


def padding(loaded: "LoadedModel", config: ScoreConfig) -> tuple[str, str]:
    """The side sequences are padded on, and why."""
    if config.judge:
        return "left", "a judge's prompts are padded on the left to generate"
    if loaded.backbone is None:
        return "right", "the model is run whole, padded on the right"
    if config.padding_side:
        return config.padding_side, "--padding-side"
    return str(getattr(loaded.tokenizer, "padding_side", "right")), "the tokenizer's"


def model_card(
    loaded: "LoadedModel", config: ScoreConfig, *, world_size: int = 1
) -> dict[str, Any]:
    """The card of a run with a loaded reward model or judge."""
    import torch

    folder, reason = model_folder(config.model)
    tokenizer = loaded.tokenizer
    limit, source = config.length_limit(loaded.max_length)
    side, side_source = padding(loaded, config)
    device = loaded.device
    return {
        "model": config.model,
        "kind": "judge" if config.judge else "reward model",
        "architectures": list(getattr(loaded.model.config, "architectures", None) or []),
        "model_files": folder_digest(folder) if folder is not None else None,
        "model_files_reason": reason,
        "tokenizer_sha256": tokenizer_sha256(tokenizer),
        "chat_template_sha256": chat_template_sha256(tokenizer.chat_template),
        "chat_template_source": "--chat-template" if config.chat_template else "the tokenizer's",
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "padding_side": side,
        "padding_side_source": side_source,
        "dtype": str(loaded.dtype).removeprefix("torch."),
        "attention": getattr(loaded.model.config, "_attn_implementation", None),
        **input_settings(config, limit, source),
        **judge_settings(loaded, config),
        "libraries": libraries(MODEL_LIBRARIES),
        "devices": {
            "device": str(device),
            "name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "processes": world_size,
        },
    }


def baseline_card(config: ScoreConfig, reward: Callable[..., float]) -> dict[str, Any]:
    """The card of a built-in baseline: no files, no tokenizer; the hash of its code instead."""
    return {
        "model": config.model,
        "kind": "built-in baseline",
        "model_files": None,
        "model_files_reason": "a built-in baseline has no files: the hash of its code names it",
        "code_sha256": sha256_text(inspect.getsource(reward)),
        "seed": config.seed,
        **input_settings(config, None, "none: a baseline reads text, not tokens"),
        "libraries": libraries(BASELINE_LIBRARIES),
        "devices": {"device": "none", "name": "none", "processes": 1},
    }


def card_line(card: dict[str, Any]) -> str:
    """The card in one line, for the printed table."""
    files = card.get("model_files")
    where = (
        f"model files {files['sha256'][:12]} ({files['files']} files)"
        if files
        else str(card.get("model_files_reason"))
    )
    if card.get("kind") == "built-in baseline":
        return f"run card: {card['model']}, code {card['code_sha256'][:12]}; {where}"
    if card.get("kind") == "judge behind an endpoint":
        endpoint = card["endpoint"]
        return (
            f"run card: judge {endpoint['served_model'] or endpoint['model']} at "
            f"{endpoint['url']}, {endpoint['concurrency']} requests at once"
        )
    template = card.get("chat_template_sha256")
    return (
        f"run card: {where}, tokenizer {card['tokenizer_sha256'][:12]}, chat template "
        f"{template[:12] if template else 'none'}; BOS {card['bos_token_id']} EOS "
        f"{card['eos_token_id']} pad {card['pad_token_id']} on the {card['padding_side']}; "
        f"{card['dtype']}, attention {card['attention']}; {card['devices']['device']}"
    )
