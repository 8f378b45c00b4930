"""A manager's cancel that arrives while an import job writes: the job's end and the data agree.
A cancel that lands before the import commits rolls the import back and the job says cancelled;
one that comes once the job has ended inside the import's transaction waits for the commit, is
refused, and the job is done with its data and its report file. Never cancelled with its data
written, whatever the moment.

The job runs as the worker runs it (``run_job``, in this process); the cancel is a manager's,
from a connection of its own (a thread), fired when the import's connection reaches a given
statement: Django's ``execute_wrapper`` watches the real queries and lets each run as it is."""

import io
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from django.contrib.auth.models import User
from django.db import connection

from fixtures.make_synthetic import write_synthetic
from prb_annotate.jobs.imports import keep_upload, uploads_folder
from prb_annotate.jobs.running import cancel_job, job_folder, run_job
from prb_annotate.models import Annotation, AnswerImport, Dataset, Job
from tests.external.test_files import external_campaign, good_row
from tests.jobs.test_jobs_worker import WAIT_LIMIT_S

pytestmark = pytest.mark.django_db(transaction=True)

# A moment in the import: told each statement of the import's connection, before it runs
# (``ran`` false) and after; true when the cancel is to fire there.
Moment = Callable[[str, bool], bool]
# How long the import's connection lets a cancel that cannot land yet try before it goes on.
SETTLE_S = 0.5


def while_the_import_writes(sql: str, ran: bool) -> bool:
    """The latest a cancel from another connection can land before the import commits: once
    the import has written its first row (PostgreSQL). SQLite lets one writer at a time, so a
    cancel after the import's transaction began would wait for its commit: there, as it begins."""
    if connection.vendor == "sqlite":
        return not ran and sql.startswith("BEGIN")
    return ran and connection.in_atomic_block and sql.startswith("INSERT")


def once_the_job_has_ended(sql: str, ran: bool) -> bool:
    """Just after the import's transaction wrote the job's end (``finish_inside``), before it
    commits: the only update of the job row on the import's own connection inside it."""
    return ran and connection.in_atomic_block and sql.startswith('UPDATE "prb_annotate_job"')


class Canceller:
    """A manager cancelling the job from a connection of its own, once, at ``moment``; the
    import goes on once the cancel is answered or ``wait_s`` has passed."""

    def __init__(self, job: Job, moment: Moment, wait_s: float) -> None:
        self.job_id = job.pk
        self.moment = moment
        self.wait_s = wait_s
        self.thread = threading.Thread(target=self.cancel)
        self.answers: list[bool] = []
        self.waited_for_the_commit = False

    def __call__(self, execute: Callable[..., Any], sql: str, *args: Any) -> Any:
        if self.moment(sql, False):
            self.fire()
        result = execute(sql, *args)
        if self.moment(sql, True):
            self.fire()
        return result

    def fire(self) -> None:
        if self.thread.ident is not None:  # once
            return
        self.thread.start()
        self.thread.join(self.wait_s)
        self.waited_for_the_commit = self.thread.is_alive()

    def cancel(self) -> None:
        try:
            self.answers.append(cancel_job(Job.objects.get(pk=self.job_id)))
        finally:
            connection.close()

    def answer(self) -> bool:
        """What ``cancel_job`` answered the manager, once it has."""
        self.thread.join(WAIT_LIMIT_S)
        assert self.answers, "the cancel never fired, or failed"
        return self.answers[0]


def kept_uploads() -> list[Path]:
    folder = uploads_folder()
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


def run_cancelled_at(job: Job, moment: Moment, wait_s: float) -> tuple[str, bool, bool]:
    """Run the job as a worker does, cancelled at ``moment``: what the worker returned, what
    the cancel answered, and whether it was still waiting (for the import's commit) when the
    import went on after ``wait_s``."""
    canceller = Canceller(job, moment, wait_s)
    with connection.execute_wrapper(canceller):
        returned = run_job.call(job.pk)
    return returned, canceller.answer(), canceller.waited_for_the_commit


def answers_import(manager: User, dataset: Dataset) -> tuple[Job, Callable[[], bool]]:
    """A queued job importing 24 answers into an external campaign, and whether they are in."""
    campaign = external_campaign(dataset, manager)
    pairs = sorted(campaign.items.values_list("pair__external_id", flat=True))
    rows = [good_row(pair, rater) for pair in pairs for rater in ("r1", "r2")]
    csv = pd.DataFrame(rows).to_csv(index=False).encode()
    kept = keep_upload(io.BytesIO(csv), "answers.csv")
    job = Job.objects.create(
        campaign=campaign,
        started_by=manager,
        kind="answers",
        options={"name": "answers.csv", "mapping": "", "upload": kept},
    )

    def written() -> bool:
        imported = Annotation.objects.filter(assignment__campaign=campaign).count()
        assert imported in (0, len(rows))  # all or nothing
        return AnswerImport.objects.filter(campaign=campaign).exists() and imported > 0

    return job, written


def dataset_import(manager: User, folder: Path) -> tuple[Job, Callable[[], bool]]:
    """A queued job importing 30 records into a new dataset, and whether they are in."""
    data = folder / "big.jsonl"
    write_synthetic(30, data)
    with data.open("rb") as stream:
        kept = keep_upload(stream, "big.jsonl")
    job = Job.objects.create(
        started_by=manager,
        kind="dataset",
        options={
            "name": "big.jsonl",
            "dataset": "big",
            "update": False,
            "mapping": "",
            "upload": kept,
        },
    )

    def written() -> bool:
        made = Dataset.objects.filter(name="big").first()
        assert made is None or made.pairs.count() == 30  # all or nothing
        return made is not None

    return job, written


@pytest.fixture
def import_job(
    request: pytest.FixtureRequest, settings: Any, tmp_path: Path, manager: User, dataset: Dataset
) -> tuple[Job, Callable[[], bool]]:
    """The job of the kind the test names, with its kept upload under this test's job folder."""
    settings.PRB_JOB_DIR = tmp_path / "jobs"
    if request.param == "answers":
        return answers_import(manager, dataset)
    return dataset_import(manager, tmp_path)


@pytest.mark.parametrize("import_job", ["answers", "dataset"], indirect=True)
def test_a_cancel_while_the_import_writes_rolls_it_back(
    import_job: tuple[Job, Callable[[], bool]],
) -> None:
    job, written = import_job
    returned, cancelled, waited = run_cancelled_at(job, while_the_import_writes, WAIT_LIMIT_S)

    assert (cancelled, waited) == (True, False)  # it landed before the import's commit
    job.refresh_from_db()
    assert (returned, job.status, job.result_file) == ("cancelled", "cancelled", ""), job.log
    assert not written()
    assert job.log.endswith(" cancelled\n"), job.log
    assert " wrote " not in job.log, job.log
    assert not list(job_folder(job).glob("*-import.json"))
    assert kept_uploads() == []


@pytest.mark.parametrize("import_job", ["answers", "dataset"], indirect=True)
def test_a_cancel_once_the_job_has_ended_is_refused_and_the_import_kept(
    import_job: tuple[Job, Callable[[], bool]],
) -> None:
    job, written = import_job
    returned, cancelled, waited = run_cancelled_at(job, once_the_job_has_ended, SETTLE_S)

    # The cancel came while the import's transaction held the job's end: it waited for the
    # commit, then found the job done and said so.
    assert (waited, cancelled) == (True, False)
    job.refresh_from_db()
    assert (returned, job.status, job.done == job.total) == ("done", "done", True), job.log
    assert written()
    report = Path(job.result_file)
    assert report.parent == job_folder(job)
    assert '"summary"' in report.read_text()
    assert f"wrote {report.name}" in job.log, job.log
    assert "cancelled" not in job.log, job.log
    assert kept_uploads() == []
    # A manager cancelling now is refused, and told what the job is.
    assert not cancel_job(job)
    assert job.status == "done"
