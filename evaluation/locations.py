"""Where a model is: a local folder, or a Hub id loaded from the Hub or from its local cache.
Plain Python (no torch), so the web process can refuse a model that is nowhere before a scoring
job is queued, with the message the command gives."""

import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from evaluation.errors import EvaluationError

# What a model folder holds at least: its config.
CONFIG_FILE = "config.json"
HUB_PROBE_SECONDS = 3.0
TRUE_WORDS = {"1", "true", "yes", "on"}


def check_model_location(name: str) -> bool:
    """Fail at once, in one line, when there is no model at ``name``; say whether to load it
    from local files only.

    A local folder must hold a ``config.json``. Any other name is a Hub id: when the Hub cannot
    be reached (``HF_HUB_OFFLINE`` set, or no connection), a model in the local Hub cache is
    loaded from there (``True``), and a model that is not there is an error now rather than
    after half a minute of retries.
    """
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / CONFIG_FILE).is_file():
            contents = "the folder is empty" if not any(path.iterdir()) else f"no {CONFIG_FILE}"
            raise EvaluationError(f"no model at {name}: {contents}")
        return False
    if path.exists():
        raise EvaluationError(f"no model at {name}: a model is a folder, this is a file")
    if name.startswith(("/", ".", "~")) or name.count("/") > 1 or not is_hub_id(name):
        raise EvaluationError(f"no model at {name}: not a folder")
    if hub_reachable():
        return False
    if in_hub_cache(name):
        return True
    raise EvaluationError(
        f"no model at {name}: not a local folder, not in the Hub cache, and the Hub is "
        "unreachable (offline)"
    )


def is_hub_id(name: str) -> bool:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True


def hub_reachable() -> bool:
    """Whether the Hub answers a connection within a few seconds (never when offline is set)."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").lower() in TRUE_WORDS:
        return False
    endpoint = urlsplit(os.environ.get("HF_ENDPOINT") or constants.ENDPOINT)
    port = endpoint.port or (443 if endpoint.scheme == "https" else 80)
    try:
        with socket.create_connection((endpoint.hostname or "", port), HUB_PROBE_SECONDS):
            return True
    except OSError:
        return False


def in_hub_cache(name: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(name, CONFIG_FILE), str)
