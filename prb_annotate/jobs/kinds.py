"""The work of each kind of job, in steps that report progress: the same functions the pages and
the commands call (``export_zip``'s pieces, ``paper_zip``), writing the result into the job's
folder."""

from pathlib import Path
from typing import Any

from prb_annotate.audit.cache import campaign_audit_cached
from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.exports.archive import export_basename, write_zip
from prb_annotate.exports.export import ExportError, export_split
from prb_annotate.exports.export import check_options as check_export
from prb_annotate.jobs.audits import check_audit_options
from prb_annotate.jobs.progress import campaign_of, step
from prb_annotate.jobs.scoring import check_score_options
from prb_annotate.models import Job
from prb_annotate.paper.inputs import paper_zip

EXPORT_DEFAULTS = {"subset": "validated", "fmt": "jsonl", "with_validation": False}


def check_options(kind: str, options: dict[str, Any]) -> None:
    """Refuse bad options before the job is queued (ValueError naming the option)."""
    if kind == "export":
        unknown = set(options) - set(EXPORT_DEFAULTS)
        if unknown:
            raise ValueError(f"Unknown export option(s): {', '.join(sorted(unknown))}.")
        merged = {**EXPORT_DEFAULTS, **options}
        if not isinstance(merged["with_validation"], bool):
            raise ValueError("with_validation: expected true or false.")
        try:
            check_export(str(merged["subset"]), str(merged["fmt"]))
        except ExportError as error:
            raise ValueError(str(error)) from error
    elif kind == "score":
        check_score_options(options)
    elif kind == "audit":
        check_audit_options(options)
    elif options:
        raise ValueError(f"A {kind} job takes no options.")


def export_job(job: Job, folder: Path) -> Path:
    """The export's zip, as the export page's download gives it: audit, files, zip."""
    options = {**EXPORT_DEFAULTS, **job.options}
    campaign = campaign_of(job)
    name = export_basename(campaign, options["subset"], options["fmt"])
    step(job, 0, 3, "reading the campaign's answers and auditing them")
    audit = CampaignAudit(campaign, lengths=False)
    audit.verdicts  # noqa: B018 - computed here, so the step's time is the audit's
    step(job, 1, 3, "writing the export's files")
    export_split(
        campaign,
        folder / name,
        subset=options["subset"],
        fmt=options["fmt"],
        with_validation=bool(options["with_validation"]),
        audit=audit,
    )
    step(job, 2, 3, "zipping the export")
    target = folder / f"{name}.zip"
    with target.open("wb") as file:
        write_zip(folder / name, file)
    for path in sorted((folder / name).rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (folder / name).rmdir()
    step(job, 3, 3, f"wrote {target.name}")
    return target


def paper_job(job: Job, folder: Path) -> Path:
    campaign = campaign_of(job)
    step(job, 0, 2, "auditing the campaign")
    audit = campaign_audit_cached(campaign)
    step(job, 1, 2, "writing the paper's files")
    content, filename = paper_zip(campaign, audit)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / filename
    target.write_bytes(content)
    step(job, 2, 2, f"wrote {filename}")
    return target
