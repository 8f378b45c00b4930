"""An export as one zip, for downloads from the pages and the API: the folder ``export_split``
writes, zipped in name order with fixed dates, so the same export gives the same zip. Every
member is under one top-level folder named after the campaign and subset (the zip's own name
without ``.zip``), so unzipping it never spills files into the current folder."""

import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from django.utils.text import slugify

from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.exports.export import ExportWriteError, check_options, export_split
from prb_annotate.exports.slices import ExportError
from prb_annotate.models import Campaign

# Every member's date: the earliest a zip can hold, so that no date depends on the export's.
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def export_basename(campaign: Campaign, subset: str, fmt: str) -> str:
    return f"{slugify(campaign.name) or 'campaign'}-{campaign.pk}-{subset}-{fmt}"


def write_zip(folder: Path, file: IO[bytes]) -> None:
    """Zip what ``folder`` holds, in name order with fixed dates: same files, same zip.

    Paths start with the folder's own name: ``extractall("out")`` gives ``out/<name>/`` with
    the layout ``export_split --out out/<name>/`` writes."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            member = f"{folder.name}/{path.relative_to(folder).as_posix()}"
            info = zipfile.ZipInfo(member, ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with path.open("rb") as source, archive.open(info, "w") as target:
                shutil.copyfileobj(source, target, 1 << 20)


def chosen_export_zip(campaign: Campaign, choices: Mapping[str, Any]) -> tuple[IO[bytes], str]:
    """:func:`export_zip` of what a manager chose on the export page or in the API's query
    (``subset``, ``format``, ``with_validation``)."""
    return export_zip(
        campaign,
        subset=choices["subset"],
        fmt=choices["format"],
        with_validation=choices["with_validation"],
    )


def refusal_status(error: ExportError) -> int:
    """The HTTP status of an export that failed, never a 500: 503 when the server could not
    write it (a full disk), 409 for data the export refuses (a record that already has a
    validation field)."""
    return 503 if isinstance(error, ExportWriteError) else 409


def export_zip(
    campaign: Campaign,
    *,
    subset: str,
    fmt: str,
    with_validation: bool = False,
    audit: CampaignAudit | None = None,
) -> tuple[IO[bytes], str]:
    """The export as a zip in an anonymous temporary file (rewound), and its file name.

    The export is made in the request's process from the campaign's audit (``audit``, when the
    request holds one already), its answers read once. The caller streams the file and closes
    it; it disappears when closed.
    """
    check_options(subset, fmt)
    name = export_basename(campaign, subset, fmt)
    # Handed to the caller, who closes it (a FileResponse does once it is sent).
    archive = tempfile.TemporaryFile()  # noqa: SIM115
    try:
        with tempfile.TemporaryDirectory() as work:
            folder = Path(work) / name
            export_split(
                campaign,
                folder,
                subset=subset,
                fmt=fmt,
                with_validation=with_validation,
                audit=audit if audit is not None else CampaignAudit(campaign, lengths=False),
            )
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
