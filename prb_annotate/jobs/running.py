"""Starting a job, and the one task a worker runs for every kind of job.

``start_job`` writes the ``Job`` row and, once it is committed, enqueues ``run_job`` on Django's
Tasks API (the backend ``settings.TASKS`` names, on the queue ``settings.PRB_JOB_QUEUES`` gives
the job's kind); a worker (``manage.py db_worker``, or ``rqworker`` for the RQ backend) runs it.
The work itself is in ``kinds.py``, the same functions the shell commands and the pages call.

A job whose worker stopped writing its heartbeat is queued again while it has attempts left
(``PRB_JOB_ATTEMPTS``), then marked failed with the reason: never left "running"."""

import json
import shlex
import shutil
import traceback
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django_tasks import task

from prb_annotate.campaigns.external.importing import questions_of
from prb_annotate.campaigns.external.mapping import parse_mapping
from prb_annotate.jobs import audits, imports, kinds, scoring
from prb_annotate.jobs.progress import ACTIVE, Heartbeat, JobCancelled, at_work, lease, log
from prb_annotate.models import Campaign, Job
from prb_annotate.security.access import is_staff

WORK: dict[str, Callable[[Job, Path], Path]] = {
    "answers": imports.answers_job,
    "audit": audits.audit_job,
    "dataset": imports.dataset_job,
    "export": kinds.export_job,
    "paper": kinds.paper_job,
    "score": scoring.score_job,
}
# The kinds a job may be and its states, as the API's choices (settings.SPECTACULAR_SETTINGS
# names them, apart from other fields called "kind" and "status").
JOB_KINDS = sorted(WORK)
# The kinds the jobs endpoint and the pages' forms start (imports start from their upload).
STARTABLE_KINDS = sorted(set(WORK) - set(imports.UPLOADED_KINDS))
JOB_STATUSES = Job.Status.choices


def worker_arguments() -> list[str]:
    """``manage.py``'s arguments that run a worker taking every queue of ``JOB_QUEUE_NAMES``
    with this site's task backend (the database backend's worker reads only "default" unless
    told the queues)."""
    queues = list(settings.JOB_QUEUE_NAMES)
    if settings.PRB_TASKS_BACKEND == "rq":
        return ["rqworker", *queues, "--job-class", "django_tasks_rq.Job"]
    return ["db_worker", "--queue-name", ",".join(queues)]


def worker_command() -> str:
    """The command that runs the jobs' worker, as the pages and docs give it."""
    return shlex.join(["python", "manage.py", *worker_arguments()])


# Kinds of which a campaign runs one job at a time, unless staff start another.
ONE_AT_A_TIME = ("score",)


class JobRefused(Exception):
    """A job that may not start (an unknown kind, bad options); the message says why."""


def job_folder(job: Job) -> Path:
    return Path(settings.PRB_JOB_DIR) / str(job.pk)


def start_job(campaign: Campaign, user: Any, kind: str, options: dict[str, Any]) -> Job:
    """Write the job's row and enqueue it; the caller has checked the user manages the campaign.
    Imports start from their upload instead (``start_import``)."""
    if kind not in STARTABLE_KINDS:
        upload = " (an import starts by uploading its file)" if kind in WORK else ""
        raise JobRefused(
            f"Unknown job kind {kind!r}{upload}; choose one of {', '.join(STARTABLE_KINDS)}."
        )
    kinds.check_options(kind, options)
    return create_job(campaign, user, kind, options)


def start_import(
    campaign: Campaign | None, user: Any, kind: str, stream: IO[bytes], options: dict[str, Any]
) -> Job:
    """An import of an uploaded file as a job (a dataset's has no campaign): the file kept under
    ``uploads/`` for the worker; the caller has checked the user may import it."""
    kept = imports.keep_upload(stream, str(options["name"]))
    try:
        return create_job(campaign, user, kind, {**options, "upload": kept})
    except Exception:
        imports.drop_upload({"upload": kept})
        raise


def start_answers_import(
    campaign: Campaign, user: Any, upload: Any, mapping_file: Any | None
) -> Job:
    """A large answer file as a job: its mapping checked here (MappingError, as in the
    request), the file kept for the worker."""
    raw = mapping_file.read() if mapping_file else b""
    if raw:
        parse_mapping(raw, questions_of(campaign))
    options = {
        "name": upload.name or "",
        "mapping": json.dumps(json.loads(raw), allow_nan=False) if raw else "",
    }
    return start_import(campaign, user, "answers", upload.file, options)


def start_dataset_import(
    user: Any, upload: Any, dataset: str, *, update: bool, mapping: str
) -> Job:
    """A large dataset file as a job (staff's; the mapping's text already checked)."""
    options = {"name": upload.name or "", "dataset": dataset, "update": update, "mapping": mapping}
    return start_import(None, user, "dataset", upload.file, options)


def create_job(campaign: Campaign | None, user: Any, kind: str, options: dict[str, Any]) -> Job:
    with transaction.atomic():
        if campaign is not None:
            Campaign.objects.select_for_update().filter(pk=campaign.pk).first()
            busy = campaign.jobs.filter(at_work(), kind=kind).first()
            if kind in ONE_AT_A_TIME and busy is not None and not is_staff(user):
                raise JobRefused(busy_words(busy))
        job = Job.objects.create(
            campaign=campaign,
            started_by=user if getattr(user, "pk", None) else None,
            kind=kind,
            options=options,
        )
    enqueue(job)  # after the commit: a worker on another machine must find the row
    job.refresh_from_db()
    return job


def busy_words(busy: Job) -> str:
    """Why another job of ``busy``'s kind may not start yet."""
    words = {"pk": busy.pk, "kind": busy.kind, "job_status": busy.status}
    if busy.status == Job.Status.CANCELLED:  # its worker is still ending the step it is in
        return (
            _(
                "Job %(pk)s (%(kind)s) of this campaign is cancelled, but its worker is still "
                "finishing the step it is in; one %(kind)s job runs at a time. Wait for the "
                "worker to stop."
            )
            % words
        )
    return (
        _(
            "Job %(pk)s (%(kind)s) of this campaign is %(job_status)s; one %(kind)s job runs at "
            "a time. Cancel it or wait for it to finish."
        )
        % words
    )


def queue_of(kind: str) -> str:
    """The task queue a kind of job goes to (scoring on its own, for a GPU machine's worker)."""
    return str(settings.PRB_JOB_QUEUES.get(kind, "default"))


def enqueue(job: Job) -> None:
    result = run_job.using(queue_name=queue_of(job.kind)).enqueue(job.pk)
    Job.objects.filter(pk=job.pk).update(task_id=str(result.id))


def cancel_job(job: Job) -> bool:
    """Cancel a queued or running job; False if it is over, with ``job.status`` read again so
    the caller names what it is now. A queued job never runs (its kept upload is removed now).
    A running job stops at its next step; a scoring job's model pass at its next batch (a
    judge behind an endpoint when its requests are answered), storing nothing. A running
    import rolls its write back, unless the write has committed: the job is done from that
    commit on (``progress.finish_inside``), so a cancel after it is refused here."""
    ended = {"status": Job.Status.CANCELLED, "finished_at": timezone.now()}
    if Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED).update(**ended):
        imports.drop_upload(job.options)  # no worker will read it
        return True
    cancelled = bool(Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(**ended))
    if not cancelled:  # the caller may have read it running: say it is done (or failed) instead
        current = Job.objects.filter(pk=job.pk).values_list("status", flat=True).first()
        job.status = current or job.status
    return cancelled


@task()
def run_job(job_id: int) -> str:
    """Run one job in the worker: its work, its progress and log in its row, the result file."""
    recover_stale_jobs()
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING, heartbeat_at=timezone.now(), attempts=F("attempts") + 1
    )
    job = Job.objects.get(pk=job_id)
    if not claimed:
        if job.status not in ACTIVE:  # cancelled while queued, or failed by recover()
            imports.drop_upload(job.options)
        return job.status
    shutil.rmtree(job_folder(job), ignore_errors=True)  # what an attempt killed midway left
    log(job, f"started {job.kind} with {job.options} (attempt {job.attempts})")
    try:
        return work_on(job)
    finally:  # a cancelled job's worker has stopped: another job of its kind may start
        Job.objects.filter(pk=job.pk, status=Job.Status.CANCELLED).update(heartbeat_at=None)


def work_on(job: Job) -> str:
    """The claimed job's work, its end written; returns the status it ended in."""
    try:
        with Heartbeat(job.pk):
            result = WORK[job.kind](job, job_folder(job))
    except JobCancelled:
        log(job, "cancelled")
        imports.drop_upload(job.options)
        return Job.Status.CANCELLED
    except Exception as error:  # recorded on the job, shown on its page
        finish(job, Job.Status.FAILED, error=str(error) or type(error).__name__)
        log(job, traceback.format_exc(limit=5))
        imports.drop_upload(job.options)  # a bad file stays bad: no retry reads it again
        return Job.Status.FAILED
    finish(job, Job.Status.DONE, result_file=str(result))
    log(job, f"finished: {result.name}")
    return Job.Status.DONE


def finish(job: Job, status: str, **fields: str) -> None:
    """Write the job's end unless a manager cancelled it meanwhile, or the work ended it itself
    (an import's job is done, with its file, from its import's commit on)."""
    Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
        status=status, finished_at=timezone.now(), **fields
    )


def remove_job(job: Job) -> None:
    """Delete a finished job's row and its folder with all it holds: the result file, and what
    a cancelled or killed job left (an export's folder, ``export_split``'s work folder)."""
    for folder in own_folders(job):
        shutil.rmtree(folder, ignore_errors=True)
    result = Path(job.result_file) if job.result_file else None
    if result is not None and result.is_file():  # one outside the job's folders (older rows)
        result.unlink()
    imports.drop_upload(job.options)
    job.delete()


def own_folders(job: Job) -> list[Path]:
    """The job's folder here and, where the worker that wrote the result file has its own data
    folder, the job's folder there: a real folder named by the job's id, never a link."""
    found = [job_folder(job)]
    if job.result_file:
        found.append(Path(job.result_file).parent)
    return [
        folder
        for folder in dict.fromkeys(found)
        if folder.name == str(job.pk) and folder.is_dir() and not folder.is_symlink()
    ]


def recover_stale_jobs(now: datetime | None = None) -> int:
    """Queue again, or once its attempts are spent mark failed with the reason, every running
    job whose worker stopped writing its heartbeat (killed, or its machine gone); returns how
    many. Run by each worker before a job and by the job pages and API."""
    now = now or timezone.now()
    cutoff = now - lease()
    stale = Job.objects.filter(status=Job.Status.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, created_at__lt=cutoff)
    )
    return sum(recover(job, now) for job in stale)


def recover(job: Job, now: datetime) -> int:
    """One stale job retried or failed; the update names the heartbeat it read, so two
    recoveries at once act once."""
    since = job.heartbeat_at or job.created_at
    stopped = (
        f"The worker running this job stopped (no heartbeat since {since:%Y-%m-%d %H:%M:%S} UTC)"
    )
    mine = Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING, heartbeat_at=job.heartbeat_at)
    fail_task_result(job.task_id, now)
    attempts = settings.PRB_JOB_ATTEMPTS
    if job.attempts < attempts:
        if not mine.update(status=Job.Status.QUEUED, heartbeat_at=None, done=0, total=0):
            return 0
        log(job, f"{stopped}; queued again (attempt {job.attempts + 1} of {attempts})")
        enqueue(job)
        return 1
    reason = f"{stopped}, after {job.attempts} of {attempts} attempt(s); start it again."
    failed = mine.update(status=Job.Status.FAILED, error=reason, finished_at=now)
    if failed:  # no attempt is left to read the kept upload
        imports.drop_upload(job.options)
    return failed


def fail_task_result(task_id: str, now: datetime) -> None:
    """The database backend's own row of a dead worker's task says failed too (the RQ
    backend's registries clear a dead worker's task themselves)."""
    if not task_id or "django_tasks_db" not in settings.INSTALLED_APPS:
        return
    from django_tasks_db.models import DBTaskResult  # the database backend's table

    DBTaskResult.objects.filter(id=task_id, status="RUNNING").update(
        status="FAILED", finished_at=now
    )
