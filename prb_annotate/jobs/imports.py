"""Imports of large files as jobs: an answer file into an external campaign, a dataset file.

A file above ``PRB_BACKGROUND_IMPORT_BYTES`` uploaded on the pages or to the API is kept in the
job folder's ``uploads/`` under a random name and imported by a worker, with the same functions
as the request (``import_answers``, ``import_uploaded_file``) and the same all-or-nothing rule;
a smaller one is imported in the request, as before. The kept file is removed once the import
is over (a retried job reads it again) or with its job. These kinds start only from an upload,
never from a path given in a request: the worker reads only a file under ``uploads/``.

An import job ends inside the import's transaction, as its last act (``sealing``): done, with its
result file, in the same commit as the data. A manager's cancel that comes before it rolls the
import back and the job says cancelled; one that comes after finds the job done and is refused.
The job's end and its data never disagree."""

import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder

from prb_annotate.campaigns.external.importing import import_answers, questions_of
from prb_annotate.campaigns.external.mapping import MappingError, parse_mapping
from prb_annotate.datasets.archives import import_uploaded_file
from prb_annotate.datasets.budget import upload_budget
from prb_annotate.datasets.mapping import parse_mapping as parse_columns
from prb_annotate.formats.strictjson import dumps
from prb_annotate.jobs.progress import campaign_of, finish_inside, step
from prb_annotate.models import Job

# The kinds a request starts by uploading the file, never through the generic jobs endpoint.
UPLOADED_KINDS = ("answers", "dataset")


class Report(Protocol):
    """What an import reports (``AnswerImportReport``, a dataset's ``ImportReport``)."""

    @property
    def summary(self) -> str: ...

    def as_dict(self) -> dict[str, Any]: ...


def in_background(size: int | None) -> bool:
    """Whether an upload of ``size`` bytes is imported by a worker rather than in the request."""
    return size is not None and size > settings.PRB_BACKGROUND_IMPORT_BYTES


def uploads_folder() -> Path:
    return Path(settings.PRB_JOB_DIR) / "uploads"


def keep_upload(stream: IO[bytes], name: str) -> str:
    """Copy an uploaded file under ``uploads/`` (in chunks); returns where, relative to it."""
    folder = uploads_folder() / secrets.token_hex(16)
    folder.mkdir(parents=True)
    safe = Path(name.replace("\x00", "")).name or "upload"
    if hasattr(stream, "seek"):
        stream.seek(0)
    with (folder / safe).open("wb") as kept:
        shutil.copyfileobj(stream, kept, 1 << 20)
    return f"{folder.name}/{safe}"


def kept_upload(relative: str) -> Path:
    """The kept file ``relative`` names, which must lie under ``uploads/``."""
    root = uploads_folder().resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        raise ValueError(f"The uploaded file {relative!r} is not kept on this server.")
    return path


def drop_upload(options: dict[str, Any]) -> None:
    """Remove the kept upload of a job's options, if still there."""
    relative = str(options.get("upload") or "")
    if relative:
        folder = (uploads_folder() / relative).parent
        if folder.resolve().is_relative_to(uploads_folder().resolve()) and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def write_result(folder: Path, name: str, body: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    target.write_text(dumps(body, indent=2, cls=DjangoJSONEncoder) + "\n", encoding="utf-8")
    return target


def sealing(job: Job, target: Path, steps: int) -> Callable[[Report], None]:
    """The hook an import job gives its import, which calls it as the last thing inside its
    transaction: the job ends done there, then its result file ``target`` is written, so the
    data, the job's end and its file commit together. A cancel that came first raises
    JobCancelled there (nothing of the import is kept, no file written); an error writing the
    file rolls the import back and the job fails."""

    def seal(report: Report) -> None:
        finish_inside(job, [report.summary, f"wrote {target.name}"], steps, result_file=str(target))
        write_result(target.parent, target.name, report.as_dict())

    return seal


def answers_job(job: Job, folder: Path) -> Path:
    """An answer file written into the job's external campaign, all or nothing; the job ends
    done in the write's own transaction (``sealing``)."""
    options = job.options
    path = kept_upload(str(options["upload"]))
    campaign = campaign_of(job)
    step(job, 0, 3, f"reading {options['name']} ({path.stat().st_size} bytes)")
    mapping = None
    if options.get("mapping"):
        try:
            mapping = parse_mapping(str(options["mapping"]), questions_of(campaign))
        except MappingError as error:
            raise ValueError(f"mapping: {error}") from error
    target = folder / "answers-import.json"
    with path.open("rb") as stream:
        import_answers(
            campaign,
            str(options["name"]),
            stream,
            mapping,
            imported_by=job.started_by,
            budget=upload_budget(),
            on_write=lambda count: step(job, 1, 3, f"read {count} answers; writing them"),
            before_commit=sealing(job, target, 3),
        )
    drop_upload(options)
    return target


def dataset_job(job: Job, folder: Path) -> Path:
    """A dataset file imported into the named dataset, all or nothing; progress is the count
    of records read, as ``import_path`` reports it, and the job ends done in the import's own
    transaction (``sealing``)."""
    options = job.options
    path = kept_upload(str(options["upload"]))
    step(job, 0, 2, f"reading {options['name']} ({path.stat().st_size} bytes)")
    target = folder / "dataset-import.json"
    with path.open("rb") as stream:
        import_uploaded_file(
            stream,
            str(options["name"]),
            str(options["dataset"]),
            update=bool(options.get("update")),
            mapping=parse_columns(options.get("mapping") or ""),
            progress=lambda count: step(job, 1, 2, f"read {count} records"),
            before_commit=sealing(job, target, 2),
        )
    drop_upload(options)
    return target
