"""Progress written from inside the work's own transaction (an import writes all its rows in one)
reaches the job's row at once, through the heartbeat thread's connection, not at the commit
(PostgreSQL; SQLite lets one writer at a time, so there it waits for the commit); and a cancel
seen there stops the work, with the transaction rolled back."""

import threading
import time

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from prb_annotate.jobs.progress import Heartbeat, JobCancelled, step
from prb_annotate.models import Dataset, Job
from tests.jobs.test_jobs_worker import WAIT_LIMIT_S, campaign_of

pytestmark = pytest.mark.django_db(transaction=True)


def seen_elsewhere(job_id: int, done: int) -> int:
    """The job's ``done`` as another connection reads it, once it is ``done`` or time is up."""
    found: list[int] = []

    def read() -> None:
        try:
            deadline = time.monotonic() + WAIT_LIMIT_S
            while True:
                value = Job.objects.values_list("done", flat=True).get(pk=job_id)
                if value == done or time.monotonic() > deadline:
                    found.append(value)
                    return
                time.sleep(0.05)
        finally:
            connection.close()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join()
    return found[0]


def test_progress_inside_the_works_transaction_is_seen_before_the_commit(manager: User) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("SQLite lets one writer at a time: progress waits for the work's commit")
    job = Job.objects.create(
        campaign=campaign_of(manager, 1), kind="export", status=Job.Status.RUNNING
    )
    with Heartbeat(job.pk), transaction.atomic():
        step(job, 1, 2, "read 10000 records")
        assert seen_elsewhere(job.pk, 1) == 1
    job.refresh_from_db()
    assert (job.done, job.total) == (1, 2)
    assert job.log.endswith("read 10000 records\n")


def test_a_cancel_seen_inside_the_transaction_rolls_it_back(manager: User) -> None:
    job = Job.objects.create(
        campaign=campaign_of(manager, 1), kind="export", status=Job.Status.RUNNING
    )
    Job.objects.filter(pk=job.pk).update(status=Job.Status.CANCELLED)

    def work() -> None:
        with Heartbeat(job.pk), transaction.atomic():
            Dataset.objects.create(name="half-written", source="tests")
            step(job, 1, 2, "read 10000 records")

    with pytest.raises(JobCancelled):
        work()
    assert not Dataset.objects.filter(name="half-written").exists()
