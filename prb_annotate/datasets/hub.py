"""A dataset on the Hugging Face Hub, imported by its id through the ``datasets`` package.

``import_hub`` does what ``datasets.load_dataset(id, config, split=..., revision=...)`` does
(``load_dataset_builder``, ``download_and_prepare``, ``as_dataset``), keeping the builder:
for a Hub id its ``hash`` is the commit the Hub resolved the revision to. The Arrow files
``datasets`` prepared are then imported as ``import_path`` imports a ``save_to_disk`` folder
(streamed, all or nothing), each config's records taking the config's name as their category
when they have none. The dataset's source names the id at that commit, the configs and the
split (``provenance.hub_source``); its sha256 is that of the Arrow files read.

With ``HF_HUB_OFFLINE`` set, or no Hub in reach, ``datasets`` reads its own cache of an earlier
load, whose folder is named after the commit; with no such copy, ``HubUnreachable`` says so
in one line and points to the folder route (docs/datasets.md). ``datasets`` is imported only
here, when a Hub id is asked for.
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prb_annotate.datasets.importing import (
    ImportFailed,
    ImportReport,
    Problem,
    Source,
    import_sources,
    opener,
)
from prb_annotate.datasets.mapping import NO_MAPPING, ColumnMapping
from prb_annotate.datasets.provenance import hub_source, sources_sha256

# An id as the Hub spells one: NAME or OWNER/NAME.
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")
COMMIT = re.compile(r"[0-9a-f]{40}")
# Dataset.source's length.
MAX_SOURCE_CHARS = 1000


class HubUnreachable(Exception):
    """The Hub could not be reached and ``datasets`` holds no copy of the dataset."""


@dataclass(frozen=True)
class HubSplits:
    """What ``datasets`` prepared for one Hub id: the commit and the Arrow files per split."""

    repo_id: str
    commit: str
    configs: tuple[str, ...]
    split: str | None
    # (config, split, Arrow file), in the order they are read.
    files: tuple[tuple[str, str, Path], ...]


def load_hub(
    repo_id: str,
    *,
    configs: Sequence[str] = (),
    split: str | None = None,
    revision: str | None = None,
    cache_dir: str | None = None,
) -> HubSplits:
    """Load ``repo_id``'s configs (its default one when none is named) and split (every split
    when None) through ``datasets``. ImportFailed for an id, config or split that does not
    exist; HubUnreachable when the Hub cannot be reached and nothing is cached."""
    if not HUB_ID.fullmatch(repo_id):
        raise ImportFailed([Problem(repo_id, None, "hub", "not a Hub id (OWNER/NAME)")])
    if split is not None and "[" in split:
        message = "a split is imported whole; slices such as test[:100] are not read"
        raise ImportFailed([Problem(repo_id, None, "split", message)])
    commits: set[str] = set()
    files: list[tuple[str, str, Path]] = []
    named: Sequence[str | None] = configs or [None]
    for config in named:
        builder, loaded = prepare(repo_id, config, split, revision, cache_dir)
        commits.add(str(builder.hash))
        for split_name, data in ({split: loaded} if split else dict(loaded)).items():
            if not data.cache_files:
                message = f"datasets kept split {split_name} in memory, with no Arrow file"
                raise ImportFailed([Problem(repo_id, None, "split", message)])
            for cache_file in data.cache_files:
                name = config or builder.config.name
                files.append((name, split_name, Path(cache_file["filename"])))
    commit = commits.pop() if len(commits) == 1 else ""
    if not COMMIT.fullmatch(commit):
        message = "datasets did not give one Hub commit for what it loaded"
        raise ImportFailed([Problem(repo_id, None, "revision", message)])
    if revision is not None and COMMIT.fullmatch(revision) and revision != commit:
        message = f"datasets loaded commit {commit}, not the revision asked for"
        raise ImportFailed([Problem(repo_id, None, "revision", message)])
    return HubSplits(repo_id, commit, tuple(configs), split, tuple(files))


def prepare(
    repo_id: str, config: str | None, split: str | None, revision: str | None, cache_dir: str | None
) -> tuple[Any, Any]:
    """``load_dataset``'s steps for one config: the builder and the loaded split(s)."""
    import datasets

    try:
        builder = datasets.load_dataset_builder(
            repo_id, config, revision=revision, cache_dir=cache_dir
        )
        builder.download_and_prepare()
        return builder, builder.as_dataset(split=split)
    except ConnectionError as error:
        raise HubUnreachable(unreachable(repo_id, datasets.config.HF_HUB_OFFLINE)) from error
    except (FileNotFoundError, ValueError, KeyError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ImportFailed([Problem(repo_id, None, "hub", message)]) from error


def unreachable(repo_id: str, offline: bool) -> str:
    """The one line said when the Hub cannot be reached and nothing is cached."""
    why = "HF_HUB_OFFLINE is set" if offline else "no connection"
    return (
        f'cannot reach the Hugging Face Hub for "{repo_id}" ({why}) and datasets has no copy '
        f"of it in its cache; import a folder instead: where the Hub is reachable, run "
        f'load_dataset("{repo_id}", revision=...).save_to_disk(FOLDER), then '
        f"import_pairs FOLDER (docs/datasets.md)"
    )


def hub_sources(splits: HubSplits) -> list[Source]:
    """The prepared Arrow files as import sources, named config/split (and shard)."""
    shards: dict[tuple[str, str], int] = {}
    for config, split, _ in splits.files:
        shards[config, split] = shards.get((config, split), 0) + 1
    sources, seen = [], dict.fromkeys(shards, 0)
    for config, split, path in splits.files:
        name = f"{config}/{split}"
        if shards[config, split] > 1:
            name += f"-{seen[config, split]:05d}"
        seen[config, split] += 1
        # A config named is a category, as a snapshot's sub-folder is; a default one is not.
        category = config if config in splits.configs else ""
        sources.append(Source(name, ".arrow", opener(path), default_category=category))
    return sources


def import_hub(
    repo_id: str,
    dataset_name: str,
    *,
    configs: Sequence[str] = (),
    split: str | None = None,
    revision: str | None = None,
    update: bool = False,
    max_text_chars: int | None = None,
    mapping: ColumnMapping = NO_MAPPING,
    progress: Callable[[int], None] | None = None,
    cache_dir: str | None = None,
) -> ImportReport:
    """Import a Hub dataset's split(s) into ``dataset_name``, recording the commit read."""
    splits = load_hub(repo_id, configs=configs, split=split, revision=revision, cache_dir=cache_dir)
    sources = hub_sources(splits)
    source = hub_source(splits.repo_id, splits.commit, splits.configs, splits.split)
    if len(source) > MAX_SOURCE_CHARS:
        message = f"the id, configs and split name more than {MAX_SOURCE_CHARS} characters"
        raise ImportFailed([Problem(repo_id, None, "config", message)])
    return import_sources(
        sources,
        dataset_name,
        source=source,
        source_sha256=sources_sha256(sources, folder=True),
        update=update,
        max_text_chars=max_text_chars,
        mapping=mapping,
        progress=progress,
    )
