"""How jobs stop and what they leave: the worker command the pages give takes every queue (a
scoring job is run by it); removing a cancelled export that left its folder removes the folder;
a scoring job cancelled during its model pass stops at its next batch and stores no run, and no
other scoring job starts
until its worker has stopped; an import's kept upload is removed when the job is cancelled
while queued or failed once its attempts are spent.

Jobs run as the worker runs them (``run_job``, in this process) or by a real ``db_worker``
process; a cancel is a manager's, from a connection of its own, fired when the worker's
connection reaches a given statement (``tests/jobs/test_jobs_cancel_imports.py``)."""

import io
import os
import shlex
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from evaluation.interrupt import between_batches
from prb_annotate.jobs.progress import still_stopping
from prb_annotate.jobs.running import (
    JobRefused,
    cancel_job,
    job_folder,
    recover_stale_jobs,
    run_job,
    start_import,
    start_job,
    worker_arguments,
    worker_command,
)
from prb_annotate.models import Campaign, EvaluationRun, Job
from tests.conftest import make_user
from tests.faults.test_faults_commands import database_url
from tests.jobs.test_jobs_cancel_imports import kept_uploads, run_cancelled_at
from tests.jobs.test_jobs_worker import ROOT, WAIT_LIMIT_S, campaign_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def job_dir(settings: Any, tmp_path: Path) -> Path:
    settings.PRB_JOB_DIR = tmp_path / "jobs"
    return settings.PRB_JOB_DIR


def test_the_worker_command_names_every_configured_queue(settings: Any) -> None:
    assert set(settings.PRB_JOB_QUEUES.values()) <= set(settings.JOB_QUEUE_NAMES)
    command = shlex.split(worker_command())
    assert command[:3] == ["python", "manage.py", "db_worker"]
    assert command[command.index("--queue-name") + 1].split(",") == settings.JOB_QUEUE_NAMES
    settings.PRB_TASKS_BACKEND = "rq"
    command = shlex.split(worker_command())
    assert command[:3] == ["python", "manage.py", "rqworker"]
    assert set(settings.JOB_QUEUE_NAMES) <= set(command[3:])


@pytest.mark.slow
def test_the_page_worker_command_runs_a_queued_scoring_job(
    manager: User, login, tmp_path: Path
) -> None:
    campaign = campaign_of(manager, 3)
    client = login(manager)
    page = client.get(f"/campaigns/{campaign.pk}/jobs/").content.decode()
    assert worker_command() in page
    started = client.post(
        f"/api/campaigns/{campaign.pk}/jobs/",
        {"kind": "score", "options": {"model": "builtin:length"}},
        content_type="application/json",
    )
    assert started.status_code == 202, started.content
    env = dict(os.environ, DATABASE_URL=database_url(), PRB_DATA_DIR=str(tmp_path))
    arguments = [*worker_arguments(), "--batch", "--no-startup-delay", "--interval", "0.1"]
    process = subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_LIMIT_S,
    )
    assert process.returncode == 0, process.stderr
    job = client.get(started.json()["url"]).json()
    assert job["status"] == "done", job
    assert EvaluationRun.objects.filter(campaign=campaign, model_name="builtin:length").exists()


def once_the_export_is_written(job: Job) -> Any:
    """The moment the export's folder stands in the job's folder, before it is zipped: the
    worker's next read of the job's row (its step checking for a cancel)."""

    def moment(sql: str, ran: bool) -> bool:
        folder = job_folder(job)
        written = folder.is_dir() and any(path.is_dir() for path in folder.iterdir())
        return not ran and written and sql.startswith("SELECT") and "prb_annotate_job" in sql

    return moment


@pytest.mark.parametrize("removed_by", ["page", "api"])
def test_removing_a_cancelled_export_removes_the_folder_it_left(
    manager: User, login, removed_by: str
) -> None:
    campaign = campaign_of(manager, 4)
    job = start_job(campaign, manager, "export", {"subset": "all", "fmt": "csv"})
    returned, cancelled, _ = run_cancelled_at(job, once_the_export_is_written(job), WAIT_LIMIT_S)
    assert (returned, cancelled) == ("cancelled", True)
    left = [path for path in job_folder(job).iterdir() if path.is_dir()]
    assert left, "the cancel landed before the export was written"

    client = login(manager)
    if removed_by == "page":
        response = client.post(f"/campaigns/{campaign.pk}/jobs/{job.pk}/remove/")
        assert response.status_code == 302
    else:
        assert client.delete(f"/api/jobs/{job.pk}/").status_code == 204
    assert not job_folder(job).exists()
    assert not Job.objects.filter(pk=job.pk).exists()


def during_the_model_pass(sql: str, ran: bool) -> bool:
    """Once scoring has begun (its first read of the campaign's runs, for the run's name),
    before anything is stored."""
    return not ran and "prb_annotate_evaluationrun" in sql and not connection.in_atomic_block


class CancelThenStartAnother:
    """A manager cancelling the scoring job from a connection of its own, then a manager who is
    not staff starting another scoring job of the campaign, while the first's worker scores."""

    def __init__(self, job: Job, lead: User) -> None:
        self.job, self.lead = job, lead
        self.thread = threading.Thread(target=self.act)
        self.answers: list[Any] = []

    def __call__(self, execute: Any, sql: str, *args: Any) -> Any:
        if self.thread.ident is None and during_the_model_pass(sql, False):
            self.thread.start()
            self.thread.join(WAIT_LIMIT_S)
        return execute(sql, *args)

    def act(self) -> None:
        try:
            self.answers.append(cancel_job(Job.objects.get(pk=self.job.pk)))
            self.answers.append(still_stopping(self.job))
            try:
                campaign = Campaign.objects.get(jobs=self.job)
                start_job(campaign, self.lead, "score", {"model": "builtin:length"})
                self.answers.append("started")
            except JobRefused as refused:
                self.answers.append(str(refused))
        finally:
            connection.close()


@pytest.mark.slow
def test_a_scoring_job_cancelled_during_its_model_pass_stores_no_run(
    manager: User, tmp_path: Path, settings: Any
) -> None:
    from evaluation.tiny import write_tiny_reward_model

    roots = tmp_path / "models"
    (roots / "tiny").mkdir(parents=True)
    write_tiny_reward_model(roots / "tiny")
    settings.PRB_MODEL_ROOTS = [str(roots)]
    lead = make_user("lead")
    campaign = campaign_of(lead, 4)
    # A token per batch: the pass would take one batch per answer, eight in all.
    options = {"model": "tiny", "name": "tiny-rm", "max_batch_tokens": 1}
    job = start_job(campaign, lead, "score", options)

    actor = CancelThenStartAnother(job, lead)
    batches = []
    with connection.execute_wrapper(actor), between_batches(lambda: batches.append(1)):
        returned = run_job.call(job.pk)

    assert len(batches) == 1  # the pass stopped at its first batch, not when it ended
    cancelled, stopping, second = actor.answers
    assert (cancelled, stopping) == (True, True)
    assert "still finishing" in second  # refused while the first's worker scored
    job.refresh_from_db()
    assert (returned, job.status, job.result_file) == ("cancelled", "cancelled", ""), job.log
    assert not EvaluationRun.objects.filter(campaign=campaign).exists()
    assert not list(job_folder(job).glob("run-*.json"))
    assert " stored run " not in job.log, job.log
    # Its worker has stopped: the job may be removed, and another scoring job starts.
    assert not still_stopping(job)
    assert start_job(campaign, lead, "score", {"model": "builtin:length"}).status == "queued"


def kept_import(manager: User) -> Job:
    campaign = campaign_of(manager, 2)
    stream = io.BytesIO(b"pair_id,rater\n")
    return start_import(campaign, manager, "answers", stream, {"name": "a.csv", "mapping": ""})


def test_an_import_cancelled_while_queued_drops_its_upload(manager: User) -> None:
    job = kept_import(manager)
    assert kept_uploads()
    assert cancel_job(job)
    assert kept_uploads() == []
    assert run_job.call(job.pk) == "cancelled"  # the worker that takes it later: nothing to do


def test_an_import_failed_once_its_attempts_are_spent_drops_its_upload(
    manager: User, settings: Any
) -> None:
    job = kept_import(manager)
    long_ago = timezone.now() - timedelta(seconds=settings.PRB_JOB_LEASE_S * 2)
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.RUNNING, attempts=settings.PRB_JOB_ATTEMPTS, heartbeat_at=long_ago
    )
    assert recover_stale_jobs() == 1
    job.refresh_from_db()
    assert job.status == "failed"
    assert kept_uploads() == []
