"""A zipped folder uploaded on the datasets page: a Hugging Face snapshot folder or an export,
unpacked into a temporary folder and imported as ``import_path`` imports a folder.

The archive is checked before anything is written: no member may leave the folder (an absolute
path or ``..``), it holds at most ``MAX_MEMBERS`` members, and what it unpacks to is bounded by
the upload's decode budget (``budget.py``, ``PRB_UPLOAD_MAX_EXPANDED_BYTES``), so a crafted
archive cannot fill the disk. Its files are then read against a budget of the same size, as a
bare upload is (a Parquet file inside expands no further than a bare one, a line of JSON Lines
is held only when it fits). The temporary folder is removed whatever happens; the import itself
stays all or nothing.
"""

import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import IO, TypedDict, Unpack

from prb_annotate.datasets.budget import DecodeBudget, OverBudget, upload_budget
from prb_annotate.datasets.importing import (
    ImportFailed,
    ImportReport,
    Problem,
    import_path,
    import_upload,
)
from prb_annotate.datasets.mapping import ColumnMapping
from prb_annotate.datasets.readers import SUFFIXES

ARCHIVE_SUFFIXES = {".zip"}
# A snapshot folder holds a few files per config; thousands of members are no dataset.
MAX_MEMBERS = 10_000


class UploadOptions(TypedDict, total=False):
    """What an upload's import may be told besides its file; each as ``import_path`` takes
    it, and its default there when left out."""

    update: bool
    mapping: ColumnMapping
    progress: Callable[[int], None] | None
    before_commit: Callable[[ImportReport], None] | None


def import_uploaded_file(
    stream: IO[bytes], filename: str, dataset_name: str, **options: Unpack[UploadOptions]
) -> ImportReport:
    """An upload in any import format: a record file (``import_upload``) or a .zip of a
    folder (``import_archive``); the suffix of ``filename`` decides. ``progress`` is told the
    records read, as ``import_path`` tells it."""
    filename = filename.replace("\x00", "")  # kept as the dataset's source: no NUL stored
    suffix = Path(filename).suffix.lower()
    importer: Callable[..., ImportReport]
    if suffix in ARCHIVE_SUFFIXES:
        importer = import_archive
    elif suffix in SUFFIXES:
        importer = import_upload
    else:
        known = ", ".join(sorted(SUFFIXES | ARCHIVE_SUFFIXES))
        message = f"unsupported file type (expected one of {known})"
        raise ImportFailed([Problem(Path(filename).name, None, None, message)])
    return importer(stream, filename, dataset_name, **options)


def import_archive(
    stream: IO[bytes], filename: str, dataset_name: str, **options: Unpack[UploadOptions]
) -> ImportReport:
    """Import the folder a .zip upload holds; ImportFailed (nothing written) for an archive
    that cannot be read or unpacked safely, or for any bad record inside it."""
    name = Path(filename).name
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError) as error:
        message = f"not a readable .zip file ({error})"
        raise ImportFailed([Problem(name, None, None, message)]) from None
    with archive, tempfile.TemporaryDirectory(prefix="prb-upload-") as folder:
        _check_members(archive, name, upload_budget())
        try:
            archive.extractall(folder)
        except (zipfile.BadZipFile, OSError, EOFError) as error:
            raise ImportFailed([Problem(name, None, None, f"cannot unpack: {error}")]) from None
        return import_path(
            _data_root(Path(folder)),
            dataset_name,
            source=f"upload:{name}",
            budget=upload_budget(),
            **options,
        )


def _check_members(archive: zipfile.ZipFile, name: str, budget: DecodeBudget) -> None:
    """Refuse an archive whose members leave the folder, are too many, or declare more than
    the budget (zipfile unpacks a member no further than its declared size)."""
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        message = f"holds {len(members):,} members; an upload may hold at most {MAX_MEMBERS:,}"
        raise ImportFailed([Problem(name, None, None, message)])
    for member in members:
        path = PurePosixPath(member.filename)
        if path.is_absolute() or ".." in path.parts or "\\" in member.filename:
            message = f"member {member.filename!r} would be unpacked outside the folder"
            raise ImportFailed([Problem(name, None, None, message)])
        try:
            budget.spend(member.file_size, "the archive")
        except OverBudget as exc:
            raise ImportFailed([Problem(name, None, None, str(exc))]) from None


def _data_root(folder: Path) -> Path:
    """The folder itself, or its one sub-folder when the archive wraps everything in one
    (``zip -r snapshot.zip snapshot/``): a wrapper holds folders or an export's manifest,
    where a snapshot's only config holds record files (its name is their category). macOS's
    ``__MACOSX`` side folder is ignored."""
    entries = [entry for entry in folder.iterdir() if entry.name != "__MACOSX"]
    if len(entries) != 1 or not entries[0].is_dir():
        return folder
    inner = list(entries[0].iterdir())
    if any(entry.is_dir() or entry.name == "manifest.json" for entry in inner):
        return entries[0]
    return folder
