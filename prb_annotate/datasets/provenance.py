"""Where a dataset came from, said without a path on the server: the imported file's name (or
folder's) and a sha256 that identifies its content.

A dataset loaded by its Hub id (``hub.py``) is named by the id at the commit read, in the form
``huggingface_hub`` opens (``hf://datasets/OWNER/NAME@COMMIT``), with its configs and split.

A file's digest is the sha256 of its bytes, the value ``sha256sum FILE`` prints. A folder's
is the sha256 of the ``sha256sum`` lines of the files read from it (``<sha256>  <path>``, one
per line, paths relative to the folder, in the order they are read: ``sorted(Path.rglob)``,
which compares paths one folder level at a time, so ``Art/`` comes before ``Art-Design/``), so
that anyone holding the same folder computes the same value: docs/export.md ("Folder hashes")
gives the shell recipe. An uploaded ``.zip`` is hashed as the folder it unpacks to.
"""

import hashlib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, Protocol

BLOCK_BYTES = 1 << 20


class Readable(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def open(self) -> Callable[[], AbstractContextManager[IO[bytes]]]: ...


def stream_sha256(stream: IO[bytes]) -> str:
    """The sha256 of what is left to read in ``stream``; a seekable stream is rewound after."""
    start = stream.tell() if stream.seekable() else None
    digest = hashlib.sha256()
    while block := stream.read(BLOCK_BYTES):
        digest.update(block)
    if start is not None:
        stream.seek(start)
    return digest.hexdigest()


def sources_sha256(sources: Sequence[Readable], *, folder: bool) -> str:
    """The digest of one file, or of a folder's files (as the module says)."""
    digests = []
    for source in sources:
        with source.open() as stream:
            digests.append((stream_sha256(stream), source.name))
    if not folder and len(digests) == 1:
        return digests[0][0]
    listing = "".join(f"{digest}  {name}\n" for digest, name in digests)
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def display_name(path: Path) -> str:
    """The name a dataset keeps of the file or folder it was imported from."""
    return path.resolve().name or str(path)


def hub_source(repo_id: str, commit: str, configs: Sequence[str], split: str | None) -> str:
    """The source of a dataset loaded by Hub id: ``hf://datasets/ID@COMMIT``, the configs
    named (none: the default one) and the split (none: every split)."""
    parts = [f"hf://datasets/{repo_id}@{commit}"]
    if configs:
        parts.append(f"configs {', '.join(configs)}")
    parts.append(f"split {split}" if split else "every split")
    return ", ".join(parts)
