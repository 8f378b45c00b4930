"""Background jobs run by a real worker process (``manage.py db_worker``) on the test's database:
started from the API (202 with the job's URL), progress and log written by the work, the result
file downloaded, a cancelled job never run, and a worker killed with SIGKILL mid-job: once the
lease has passed its job is queued again and finished by the next worker, or, with its attempts
spent, failed with the reason; never left "running"."""

import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from prb_annotate.jobs.running import recover_stale_jobs
from prb_annotate.models import Campaign, CampaignItem, Dataset, Job, Membership
from tests.conftest import make_pairs
from tests.faults.test_faults_commands import database_url
from tests.support.audit import make_campaign

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
WAIT_LIMIT_S = 180


def campaign_of(manager: User, pairs: int) -> Campaign:
    dataset = Dataset.objects.create(name=f"jobs{pairs}", source="tests")
    campaign = make_campaign(dataset)
    CampaignItem.objects.bulk_create(
        CampaignItem(campaign=campaign, pair=pair, order_key=index)
        for index, pair in enumerate(make_pairs(dataset, pairs))
    )
    Membership.objects.create(campaign=campaign, user=manager, role=Membership.Role.MANAGER)
    return campaign


def worker(data_dir: Path, *more: str, **environ: str) -> subprocess.Popen[str]:
    """``manage.py db_worker`` as a process of its own, on the test's database, taking every
    queue."""
    env = dict(os.environ, DATABASE_URL=database_url(), PRB_DATA_DIR=str(data_dir), **environ)
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "db_worker",
            "--no-startup-delay",
            "--interval",
            "0.1",
            "--queue-name",
            "*",
            *more,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start(client: Client, campaign: Campaign, kind: str, **options: object) -> dict:
    response = client.post(
        f"/api/campaigns/{campaign.pk}/jobs/",
        {"kind": kind, "options": options},
        content_type="application/json",
    )
    assert response.status_code == 202, response.content
    return response.json()


def test_it_runs_an_export_and_a_paper_zip_in_a_worker(
    manager: User, login, tmp_path: Path
) -> None:
    campaign = campaign_of(manager, 6)
    client = login(manager)
    export = start(client, campaign, "export", subset="all", fmt="csv")
    paper = start(client, campaign, "paper")
    assert export["status"] == "queued"
    assert export["url"].endswith(f"/api/jobs/{export['id']}/")

    process = worker(tmp_path, "--batch")
    _, stderr = process.communicate(timeout=WAIT_LIMIT_S)
    assert process.returncode == 0, stderr

    done = client.get(export["url"]).json()
    assert (done["status"], done["done"], done["total"]) == ("done", 3, 3), done
    assert "zipping the export" in done["log"]
    archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(done["file"]).streaming_content)))
    # The export's files lie under one folder named after the campaign and subset.
    (manifest_name,) = [name for name in archive.namelist() if name.endswith("/manifest.json")]
    assert manifest_name.count("/") == 1
    manifest = json.loads(archive.read(manifest_name))
    assert manifest["counts"]["exported_pairs"] == 6, manifest["counts"]
    assert any(name.endswith(".csv") for name in archive.namelist())

    written = client.get(paper["url"]).json()
    assert written["status"] == "done", written
    files = zipfile.ZipFile(io.BytesIO(b"".join(client.get(written["file"]).streaming_content)))
    assert any(name.endswith("numbers.json") for name in files.namelist())

    assert client.delete(export["url"]).status_code == 204
    assert not Job.objects.filter(pk=export["id"]).exists()
    assert not (tmp_path / "jobs" / str(export["id"])).exists()


def test_it_never_runs_a_job_cancelled_while_queued(manager: User, login, tmp_path: Path) -> None:
    campaign = campaign_of(manager, 3)
    client = login(manager)
    job = start(client, campaign, "export")
    cancelled = client.post(f"{job['url']}cancel/")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled"
    again = client.post(f"{job['url']}cancel/")
    assert again.status_code == 400
    assert "cancelled already" in json.dumps(again.json()["errors"])

    process = worker(tmp_path, "--batch")
    process.communicate(timeout=WAIT_LIMIT_S)

    after = Job.objects.get(pk=job["id"])
    assert (after.status, after.result_file, after.done) == ("cancelled", "", 0)


def kill_mid_job(job_id: int, data_dir: Path) -> None:
    """A worker takes the job and is killed with SIGKILL while the job runs."""
    attempts = Job.objects.get(pk=job_id).attempts
    process = worker(data_dir)
    deadline = time.monotonic() + WAIT_LIMIT_S
    while Job.objects.get(pk=job_id).attempts == attempts:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the worker never started the job"
        time.sleep(0.002)
    # At once: the export takes a few tenths of a second on an idle machine, which a pause here
    # used to outlast.
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=WAIT_LIMIT_S)
    assert Job.objects.get(pk=job_id).status == Job.Status.RUNNING, "finished too soon"
    # Within the lease the job may still be at work somewhere: left as it is.
    assert recover_stale_jobs() == 0
    assert Job.objects.get(pk=job_id).status == Job.Status.RUNNING


def after_the_lease() -> datetime:
    return timezone.now() + timedelta(seconds=settings.PRB_JOB_LEASE_S + 1)


def export_killed_mid_job(client: Client, manager: User, data_dir: Path) -> dict:
    """An export of 4,000 pairs whose worker is killed while it runs, then recovered once the
    lease has passed; the job as the API then gives it."""
    job = start(client, campaign_of(manager, 4000), "export", subset="all")
    kill_mid_job(job["id"], data_dir)
    assert recover_stale_jobs(now=after_the_lease()) == 1
    return dict(client.get(job["url"]).json())


def test_it_retries_a_job_whose_worker_was_killed(manager: User, login, tmp_path: Path) -> None:
    assert settings.PRB_JOB_ATTEMPTS == 2
    client = login(manager)
    job = retried = export_killed_mid_job(client, manager, tmp_path)
    assert (retried["status"], retried["done"], retried["error"]) == ("queued", 0, ""), retried
    assert "stopped" in retried["log"]
    assert "queued again (attempt 2 of 2)" in retried["log"]

    process = worker(tmp_path, "--batch")
    _, stderr = process.communicate(timeout=WAIT_LIMIT_S)
    assert process.returncode == 0, stderr
    done = client.get(job["url"]).json()
    assert (done["status"], done["done"], done["total"]) == ("done", 3, 3), done
    assert Job.objects.get(pk=job["id"]).attempts == 2
    archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(done["file"]).streaming_content)))
    (manifest_name,) = [name for name in archive.namelist() if name.endswith("/manifest.json")]
    assert json.loads(archive.read(manifest_name))["counts"]["exported_pairs"] == 4000


def test_it_marks_failed_a_job_whose_worker_was_killed_with_no_attempt_left(
    manager: User, login, tmp_path: Path, settings
) -> None:
    settings.PRB_JOB_ATTEMPTS = 1
    failed = export_killed_mid_job(login(manager), manager, tmp_path)
    assert failed["status"] == "failed", failed
    assert "worker running this job stopped" in failed["error"]
    assert "after 1 of 1 attempt(s)" in failed["error"]
    assert failed["file"] is None
