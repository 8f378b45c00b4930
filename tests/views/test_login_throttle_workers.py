"""The login throttle across worker processes: gunicorn started on the test database with
``--max-requests 1``, so that every request is served by a fresh process and nothing kept in a
process's memory could count the failures. The lock still holds, because the count is rows.
And on the README's production layout (four workers of four threads), parallel guesses get no
more password checks than the limit: the count is taken after each attempt's own row is in."""

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.db import connection

from tests.conftest import PASSWORD

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 5
PARALLEL = 64

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def served_database_url() -> str:
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    user, password = settings["USER"], settings["PASSWORD"] or ""
    return f"postgres://{user}:{password}@{settings['HOST']}:{settings['PORT']}/{settings['NAME']}"


@pytest.fixture
def gunicorn(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A gunicorn serving the test database, a fresh process for every request; yields its
    URL and its access log."""
    yield from serve(tmp_path, "--workers", "2", "--max-requests", "1")


@pytest.fixture
def production_gunicorn(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The README's production layout: the app preloaded, four workers of four threads."""
    yield from serve(
        tmp_path, "--preload", "--workers", "4", "--threads", "4", "--graceful-timeout", "5"
    )


def serve(tmp_path: Path, *options: str) -> Iterator[tuple[str, Path]]:
    access_log = tmp_path / "access.log"
    error_log = tmp_path / "error.log"
    env = {
        **os.environ,
        "DATABASE_URL": served_database_url(),
        "PRB_DATA_DIR": str(tmp_path),
    }
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "prb_annotate.wsgi",
        *options,
        "--bind",
        "127.0.0.1:0",
        "--access-logfile",
        str(access_log),
        "--access-logformat",
        "%(p)s %(s)s",
        "--error-logfile",
        str(error_log),
    ]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        url = ""
        for _ in range(600):
            text = error_log.read_text() if error_log.exists() else ""
            found = re.search(r"Listening at: (http://127\.0\.0\.1:\d+)", text)
            if found:
                url = found.group(1)
                break
            if process.poll() is not None:
                break
            time.sleep(0.1)
        assert url, error_log.read_text() if error_log.exists() else "gunicorn did not start"
        yield url, access_log
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()  # ours, by its pid: a master that would not stop in time
            process.wait(timeout=30)


def token_status(url: str, password: str, username: str = "alice") -> int:
    body = json.dumps({"username": username, "password": password}).encode()
    request = urllib.request.Request(
        f"{url}/api/token/", body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=180) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def logged_pids(access_log: Path, count: int) -> list[str]:
    """The worker of each request, once all ``count`` are logged (a worker logs a request
    just after answering it)."""
    for _ in range(600):
        lines = access_log.read_text().splitlines() if access_log.exists() else []
        if len(lines) >= count:
            return [line.split()[0] for line in lines]
        time.sleep(0.1)
    raise AssertionError(f"{count} requests were not logged: {lines}")


def test_every_worker_process_sees_the_same_failures(annotator, gunicorn) -> None:
    url, access_log = gunicorn
    statuses = [token_status(url, "wrong") for _ in range(LIMIT)]
    assert statuses == [400] * LIMIT
    assert token_status(url, PASSWORD) == 429
    served_by = logged_pids(access_log, LIMIT + 1)
    assert len(set(served_by)) == LIMIT + 1  # a fresh process for every request


def test_parallel_guesses_on_the_production_layout_check_five_passwords(
    manager, production_gunicorn
) -> None:
    """64 wrong passwords for ``manager`` at once against ``-w 4 --threads 4`` (where the
    report counted 14 to 17 checks): at most five are checked (400), the rest refused (429),
    and guesses sent one by one afterwards stop at five checks in all."""
    url, _ = production_gunicorn
    start = threading.Barrier(PARALLEL)

    def guess(_: int) -> int:
        start.wait(timeout=60)
        return token_status(url, "guess", "manager")

    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        statuses = Counter(pool.map(guess, range(PARALLEL)))
    assert set(statuses) <= {400, 429}, statuses
    assert statuses[400] <= LIMIT, statuses
    checked = statuses[400]
    while token_status(url, "guess", "manager") == 400:
        checked += 1
    assert checked == LIMIT
    assert token_status(url, PASSWORD, "manager") == 429
