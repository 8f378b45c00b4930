"""The RQ task backend (``PRB_TASKS_BACKEND=rq``) for real: a ``redis-server`` the test starts on a
free port in a temporary folder, jobs started from the API as always, and RQ workers
(``manage.py rqworker``) run as processes of their own with the project's settings. A worker
given only the scoring queue, as a GPU machine's would be, takes the scoring job and leaves the
export; one on the default queue then takes the export. Progress, log, result file and the task
backend's own result reach the pages as with the database backend. Skips where there is no
``redis-server``."""

import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from prb_annotate.jobs.running import run_job
from prb_annotate.models import Job
from tests.faults.test_faults_commands import database_url
from tests.jobs.test_jobs_worker import ROOT, WAIT_LIMIT_S, campaign_of, start

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

QUEUES = ["default", "scoring"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server of the test's own, in a temporary folder, stopped after the test."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    folder = tmp_path / "redis"
    folder.mkdir()
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port)
    deadline = time.monotonic() + WAIT_LIMIT_S
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            assert server.poll() is None, "redis-server stopped"
            assert time.monotonic() < deadline, "redis-server never answered"
            time.sleep(0.05)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=WAIT_LIMIT_S)


@pytest.fixture
def rq_backend(redis_url: str, settings) -> str:
    """This process enqueues on the RQ backend, as the site does under PRB_TASKS_BACKEND=rq."""
    settings.RQ_QUEUES = {name: {"URL": redis_url} for name in QUEUES}
    settings.TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": QUEUES}}
    return redis_url


def rq_worker(redis_url: str, data_dir: Path, *queues: str) -> None:
    """``manage.py rqworker`` on ``queues`` until they are empty (burst), with our settings."""
    env = dict(
        os.environ,
        DATABASE_URL=database_url(),
        PRB_DATA_DIR=str(data_dir),
        PRB_TASKS_BACKEND="rq",
        REDIS_URL=redis_url,
    )
    command = [sys.executable, "manage.py", "rqworker", *queues]
    command += ["--burst", "--job-class", "django_tasks_rq.Job"]
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=WAIT_LIMIT_S
    )
    assert done.returncode == 0, done.stderr


def test_rq_workers_run_jobs_each_taking_its_own_queues(
    rq_backend: str, manager: User, login, tmp_path: Path
) -> None:
    campaign = campaign_of(manager, 6)
    client = login(manager)
    export = start(client, campaign, "export", subset="all", fmt="jsonl")
    score = start(client, campaign, "score", model="builtin:length")

    rq_worker(rq_backend, tmp_path, "scoring")  # a GPU machine's worker: scoring only
    scored = client.get(score["url"]).json()
    assert (scored["status"], scored["done"], scored["total"]) == ("done", 2, 2), scored
    assert json.loads(b"".join(client.get(scored["file"]).streaming_content))["run"] > 0
    assert client.get(export["url"]).json()["status"] == "queued"

    rq_worker(rq_backend, tmp_path, "default")
    done = client.get(export["url"]).json()
    assert (done["status"], done["done"], done["total"]) == ("done", 3, 3), done
    assert "zipping the export" in done["log"]
    archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(done["file"]).streaming_content)))
    (manifest,) = [name for name in archive.namelist() if name.endswith("/manifest.json")]
    assert json.loads(archive.read(manifest))["counts"]["exported_pairs"] == 6

    # RQ's own record of each task says it succeeded, and what run_job returned.
    for job in Job.objects.all():
        result = run_job.get_backend().get_result(job.task_id)
        assert (result.status, result.return_value) == ("SUCCESSFUL", "done"), job
        assert job.attempts == 1
