"""An export as one zip, for downloads from the pages and the API: the folder ``export_split``
writes, zipped in name order with fixed dates, so the same export gives the same zip."""

import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import IO

from django.utils.text import slugify

from prb_annotate.exports.export import ExportWriteError, check_options, export_split
from prb_annotate.models import Campaign

# Every member's date: the earliest a zip can hold, so that no date depends on the export's.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def export_basename(campaign: Campaign, subset: str, fmt: str) -> str:
    return f"{slugify(campaign.name) or 'campaign'}-{campaign.pk}-{subset}-{fmt}"


def write_zip(folder: Path, file: IO[bytes]) -> None:
    """Zip what ``folder`` holds, in name order with fixed dates: same files, same zip.

    Paths are relative to the folder, with no top-level folder of their own, so that
    ``extractall("export")`` gives the layout ``export_split --out export/`` writes."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with path.open("rb") as source, archive.open(info, "w") as target:
                shutil.copyfileobj(source, target, 1 << 20)


def export_zip(
    campaign: Campaign, *, subset: str, fmt: str, with_validation: bool = False
) -> tuple[IO[bytes], str]:
    """The export as a zip in an anonymous temporary file (rewound), and its file name.

    The caller streams the file and closes it; it disappears when closed.
    """
    check_options(subset, fmt)
    name = export_basename(campaign, subset, fmt)
    # Handed to the caller, who closes it (a FileResponse does once it is sent).
    archive = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        with tempfile.TemporaryDirectory() as work:
            folder = Path(work) / name
            export_split(campaign, folder, subset=subset, fmt=fmt, with_validation=with_validation)
            write_zip(folder, archive)
    except (OSError, ExportWriteError) as error:
        # The server's temporary space is full (or refuses): said in one line, not a 500, and
        # without the temporary folder's name, which means nothing to the person asking.
        archive.close()
        cause = error if isinstance(error, OSError) else error.__cause__
        reason = getattr(cause, "strerror", None) or cause or error
        raise ExportWriteError(f"Cannot write the export's zip on the server: {reason}.") from error
    except BaseException:
        archive.close()
        raise
    archive.seek(0)
    return archive, f"{name}.zip"
