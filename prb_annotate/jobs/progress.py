"""A running job's side of its row: progress, log lines, heartbeat and cancellation (what a
stopped heartbeat leads to is in ``running.recover_stale_jobs``).

Every write is an ``UPDATE`` of named columns, so the worker and a manager cancelling from a page
never overwrite each other's fields. Work that writes in one transaction (an import) ends its job
inside it (``finish_inside``), so that its data and the job's end commit together."""

import threading
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy

from prb_annotate.models import Campaign, Job

ACTIVE = (Job.Status.QUEUED, Job.Status.RUNNING)
# The states whose worker writes the heartbeat while it works.
BEATING = (Job.Status.RUNNING, Job.Status.CANCELLED)


class JobCancelled(Exception):
    """A manager cancelled the job; the work stops at its next step (raised inside an import's
    or a scoring run's transaction, it rolls the import or the run back)."""


def at_work() -> Q:
    """Jobs a worker has yet to end: queued or running, or cancelled while their worker still
    ends the step it is in (a scoring job's model batch): its heartbeat is fresh until it
    stops (``run_job`` clears it then; a killed worker's goes stale after the lease)."""
    fresh = timezone.now() - lease()
    return Q(status__in=ACTIVE) | Q(status=Job.Status.CANCELLED, heartbeat_at__gte=fresh)


# Why a cancelled job whose worker has not stopped yet cannot be removed.
STOPPING_WORDS = gettext_lazy(
    "The job is cancelled, but its worker is still finishing the step it is in (a scoring "
    "job's batch of the model); remove it once the worker has stopped."
)


def still_stopping(job: Job) -> bool:
    """Whether the worker of a cancelled job is still ending the step it is in."""
    return Job.objects.filter(at_work(), pk=job.pk, status=Job.Status.CANCELLED).exists()


def campaign_of(job: Job) -> Campaign:
    """The campaign of a job whose kind works on one (all but a dataset import)."""
    if job.campaign is None:
        raise ValueError(f"A {job.kind} job needs a campaign.")
    return job.campaign


def log(job: Job, line: str) -> None:
    """Append one line to the job's log (kept in the row, shown on its page)."""
    job.log += f"{timezone.now():%H:%M:%S} {line}\n"
    write(job, log=job.log)


def step(job: Job, done: int, total: int, line: str) -> None:
    """Record progress (``done`` of ``total`` steps) and a log line; stop if cancelled."""
    if Job.objects.filter(pk=job.pk, status=Job.Status.CANCELLED).exists():
        raise JobCancelled()
    job.done, job.total = done, total
    job.log += f"{timezone.now():%H:%M:%S} {line}\n"
    write(job, done=done, total=total, log=job.log, heartbeat_at=timezone.now())


def finish_inside(job: Job, lines: list[str], steps: int, **fields: object) -> None:
    """End the job as done (all ``steps`` passed, ``lines`` logged, ``fields`` written) from
    inside the work's own transaction, as its last act: the job's end then commits with the
    work's data, or neither does, so a job never says cancelled with its data written.

    The update names the running status: a manager's cancel that came first makes it match
    nothing, and JobCancelled rolls the work back. One that comes later waits for the commit
    (the row is this transaction's until then: PostgreSQL locks it, SQLite holds the write lock)
    and finds the job done, so ``cancel_job`` says it is over. That is why this is written on
    the work's own connection, not handed to the heartbeat as ``write`` hands progress."""
    if not connection.in_atomic_block:
        raise RuntimeError("finish_inside ends a job inside its work's transaction")
    now = timezone.now()
    text = job.log + "".join(f"{now:%H:%M:%S} {line}\n" for line in lines)
    ended = Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
        status=Job.Status.DONE,
        finished_at=now,
        heartbeat_at=now,
        done=steps,
        total=steps,
        log=text,
        **fields,
    )
    if not ended:  # cancelled (or taken back as stale): the work must not commit
        raise JobCancelled()
    # The object follows the row only once it is written: a cancelled job's log keeps no line
    # of an end that was rolled back.
    job.status, job.done, job.total, job.log = Job.Status.DONE, steps, steps, text


def write(job: Job, **fields: object) -> None:
    """Write the job's fields, or, inside the work's own transaction (an import's), hand them to
    the heartbeat thread: written here they would wait for the work's commit, and lock the row
    the heartbeat writes."""
    beating = Heartbeat.running.get(job.pk)
    if connection.in_atomic_block and beating is not None:
        beating.hand_over(fields)
        return
    Job.objects.filter(pk=job.pk).update(**fields)


def lease() -> timedelta:
    return timedelta(seconds=settings.PRB_JOB_LEASE_S)


class Heartbeat:
    """Writes the job's heartbeat every third of the lease while the work runs, and the progress
    the work hands over from inside a transaction, from a thread with its own database
    connection; a killed worker stops writing it. A write that fails (SQLite is locked while an
    import writes) is tried again at the next beat."""

    running: dict[int, "Heartbeat"] = {}

    def __init__(self, job_id: int) -> None:
        self.job_id = job_id
        self.stopped = threading.Event()
        self.woken = threading.Event()
        self.lock = threading.Lock()
        self.handed: dict[str, object] = {}
        self.thread = threading.Thread(target=self.beat, daemon=True)

    def hand_over(self, fields: dict[str, object]) -> None:
        with self.lock:
            self.handed.update(fields)
        self.woken.set()

    def beat(self) -> None:
        try:
            while not self.stopped.is_set():
                self.woken.wait(lease().total_seconds() / 3)
                self.woken.clear()
                self.write_beat()
        finally:
            connection.close()

    def write_beat(self) -> None:
        with self.lock:
            fields, self.handed = self.handed, {}
        try:  # a cancelled job's too, while its worker ends the step it is in (``at_work``)
            Job.objects.filter(pk=self.job_id, status__in=BEATING).update(
                **{**fields, "heartbeat_at": timezone.now()}
            )
        except DatabaseError:
            with self.lock:
                self.handed = {**fields, **self.handed}

    def __enter__(self) -> "Heartbeat":
        Heartbeat.running[self.job_id] = self
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.woken.set()
        self.thread.join()
        Heartbeat.running.pop(self.job_id, None)
        close_old_connections()
        if self.handed:  # what the work handed over last, now that its transaction is over
            Job.objects.filter(pk=self.job_id).update(**self.handed)
