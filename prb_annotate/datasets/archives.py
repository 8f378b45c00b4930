"""A zipped folder uploaded on the datasets page: a Hugging Face snapshot folder or an export,
unpacked into a temporary folder and imported as ``import_path`` imports a folder.

The archive is checked before anything is written: no member may leave the folder (an absolute
path or ``..``), and its unpacked size is bounded (``MAX_UNPACKED_FACTOR`` times the largest
upload), so a crafted archive cannot fill the disk. The temporary folder is removed whatever
happens; the import itself stays all or nothing.
"""

import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import IO

from django.conf import settings

from prb_annotate.datasets.importing import (
    ImportFailed,
    ImportReport,
    Problem,
    import_path,
    import_upload,
)
from prb_annotate.datasets.readers import SUFFIXES

ARCHIVE_SUFFIXES = {".zip"}
# Parquet and JSON compress well, but not a hundredfold: beyond this an archive is refused.
MAX_UNPACKED_FACTOR = 20


def import_uploaded_file(
    stream: IO[bytes], filename: str, dataset_name: str, *, update: bool = False
) -> ImportReport:
    """An upload in any import format: a record file (``import_upload``) or a .zip of a
    folder (``import_archive``); the suffix of ``filename`` decides."""
    suffix = Path(filename).suffix.lower()
    if suffix in ARCHIVE_SUFFIXES:
        return import_archive(stream, filename, dataset_name, update=update)
    if suffix not in SUFFIXES:
        known = ", ".join(sorted(SUFFIXES | ARCHIVE_SUFFIXES))
        message = f"unsupported file type (expected one of {known})"
        raise ImportFailed([Problem(Path(filename).name, None, None, message)])
    return import_upload(stream, filename, dataset_name, update=update)


def import_archive(
    stream: IO[bytes], filename: str, dataset_name: str, *, update: bool = False
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
        _check_members(archive, name)
        try:
            archive.extractall(folder)
        except (zipfile.BadZipFile, OSError, EOFError) as error:
            raise ImportFailed([Problem(name, None, None, f"cannot unpack: {error}")]) from None
        return import_path(
            _data_root(Path(folder)), dataset_name, update=update, source=f"upload:{name}"
        )


def _check_members(archive: zipfile.ZipFile, name: str) -> None:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE * MAX_UNPACKED_FACTOR
    unpacked = 0
    for member in archive.infolist():
        path = PurePosixPath(member.filename)
        if path.is_absolute() or ".." in path.parts or "\\" in member.filename:
            message = f"member {member.filename!r} would be unpacked outside the folder"
            raise ImportFailed([Problem(name, None, None, message)])
        unpacked += member.file_size
        if unpacked > limit:
            message = f"unpacks to more than {limit // (1024 * 1024)} MiB"
            raise ImportFailed([Problem(name, None, None, message)])


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
