"""Faults under load, in short (``bench/fault_soak.py`` runs the long version): annotators
working through the API and the annotation page against a gunicorn whose workers are killed,
whose PostgreSQL restarts, or whose SQLite lock is held longer than the busy timeout.

Every acknowledged answer is stored exactly once, nothing is doubled by the retries (the same
client token), no item goes over its target, no reservation outlives its window, and no answer
is a 500: a request in flight on a killed worker fails as a connection error, one that finds the
database away or locked gets a 503 with Retry-After. Only processes these tests started are
stopped or killed, by pid; PostgreSQL restarts are on a cluster of the test's own.
"""

import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from bench.annotate_load import default_threads, form, free_port, start_gunicorn
from bench.faults import (
    PASSWORD,
    Tally,
    ThrowawayPostgres,
    database_child,
    in_background,
    kill_workers,
    postgres_bin,
    run_annotators,
    worker_pids,
)

pytestmark = pytest.mark.slow

SHARED_URL = os.environ.get("DATABASE_URL", "")


@pytest.fixture
def database_url(tmp_path: Path) -> Iterator[str]:
    """A fresh database on the suite's own engine: a SQLite file, or a new database on the
    PostgreSQL server of ``DATABASE_URL`` (dropped afterwards)."""
    if not SHARED_URL.startswith("postgres"):
        yield f"sqlite:///{tmp_path / 'faults.sqlite3'}"
        return
    import psycopg

    server = SHARED_URL.rsplit("/", 1)[0]
    name = f"prb_faults_{os.getpid()}_{secrets.token_hex(3)}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{server}/{name}"
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def throwaway_postgres() -> Iterator[ThrowawayPostgres]:
    if postgres_bin() is None:
        pytest.skip("PostgreSQL server programs not installed under /usr/lib/postgresql")
    with ThrowawayPostgres() as cluster:
        yield cluster


def serve(url: str, **options: Any) -> tuple[Any, int]:
    """gunicorn on a free port, returned once every worker it was asked for is running.

    gunicorn forks its workers a moment apart, and the first answers before the last exists:
    a test that compares the workers before and after a fault must see all of them first."""
    port = free_port()
    threads = options.pop("threads", default_threads(url))
    workers = options.setdefault("workers", 2)
    server = start_gunicorn(url, port, threads, preload=True, **options)
    deadline = time.monotonic() + 30
    while len(worker_pids(server.pid)) < workers:
        if time.monotonic() > deadline:
            stop(server)
            raise RuntimeError(f"gunicorn started {len(worker_pids(server.pid))} of {workers}")
        time.sleep(0.05)
    return server, port


def stop(server: Any) -> None:
    server.terminate()
    server.wait(timeout=30)


def assert_exact(tally: Tally, check: dict[str, int]) -> None:
    """Nothing lost, nothing doubled, nothing stuck, nothing left unanswered."""
    assert tally.acknowledged, tally.summary()
    assert tally.given_up == 0, tally.summary()
    assert not tally.refused(), tally.summary()
    assert check["stored"] == check["acknowledged"] == len(tally.acknowledged), check
    assert check["lost"] == 0, check
    assert check["doubled"] == 0, check
    assert check["stuck"] == 0, check


def assert_no_500(tally: Tally) -> None:
    """Only 503s, each with Retry-After and its body; never a 500 or a traceback."""
    assert not tally.server_errors, tally.server_errors
    assert not tally.bad_unavailable, tally.bad_unavailable
    assert all(key.endswith(" 503") for key in tally.five_hundreds()), tally.five_hundreds()


def test_it_loses_and_doubles_nothing_while_workers_are_killed(database_url: str) -> None:
    # Enough pairs that the annotators are still at work when the last kill comes, however
    # fast the machine: they stop when nothing is left, and the killer stops with them.
    setup = database_child("setup", database_url, pairs=3000, api_users=4, page_users=2)
    server, port = serve(database_url)
    try:
        with in_background(kill_workers, server.pid, 2.0, 8.0) as killer:
            tally = run_annotators(port, setup, seconds=8)
    finally:
        stop(server)
    check = database_child(
        "check", database_url, campaign=setup["campaign"], acknowledged=tally.acknowledged
    )
    assert killer["result"] >= 3
    assert_no_500(tally)
    assert not tally.five_hundreds(), tally.five_hundreds()  # the database never went away
    assert_exact(tally, check)


def restart_after(cluster: ThrowawayPostgres, delay_s: float, stop_event: threading.Event) -> bool:
    if stop_event.wait(delay_s):
        return False
    cluster.restart("fast", down_s=1.5)
    return True


def test_it_answers_503_while_postgresql_restarts_and_recovers_by_itself(
    throwaway_postgres: ThrowawayPostgres,
) -> None:
    url = throwaway_postgres.create_database("prb_faults")
    setup = database_child("setup", url, pairs=300, api_users=4, page_users=2)
    server, port = serve(url)
    try:
        workers_before = sorted(worker_pids(server.pid))
        with in_background(restart_after, throwaway_postgres, 2.0) as restart:
            during = run_annotators(port, setup, seconds=6)
        after = run_annotators(port, setup, seconds=2)
        workers_after = sorted(worker_pids(server.pid))
    finally:
        stop(server)
    acknowledged = during.acknowledged + after.acknowledged
    check = database_child("check", url, campaign=setup["campaign"], acknowledged=acknowledged)

    assert restart["result"] is True
    assert_no_500(during)
    assert during.five_hundreds(), "no request met the outage"
    # The same processes serve again, and every request after the outage succeeds.
    assert workers_after == workers_before
    assert after.acknowledged
    assert not after.five_hundreds(), after.summary()
    assert not after.connection_errors, after.summary()
    during.acknowledged = acknowledged
    assert_exact(during, check)


def login_form(base: str, username: str) -> tuple[requests.Session, dict[str, str]]:
    """A browser session that has read the login page, and the form it would post."""
    session = requests.Session()
    token = session.get(f"{base}/login/").cookies.get("csrftoken")
    assert token, "the login page sets the CSRF cookie"
    return session, {"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token}


def test_it_answers_503_when_the_sqlite_lock_outlasts_the_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "locked.sqlite3"
    url = f"sqlite:///{path}"
    setup = database_child("setup", url, pairs=30, api_users=1, page_users=1)
    campaign = setup["campaign"]
    server, port = serve(url, workers=2, env={"PRB_SQLITE_BUSY_TIMEOUT_S": "0.2"})
    base = f"http://127.0.0.1:{port}"
    try:
        api = requests.Session()
        api.headers["Authorization"] = f"Token {setup['tokens'][0]}"
        assignment = api.post(f"{base}/api/campaigns/{campaign}/next/").json()["assignment"]
        answer = form(assignment)
        page, credentials = login_form(base, setup["page_users"][0])
        page.post(f"{base}/login/", data=credentials)
        second, second_credentials = login_form(base, setup["page_users"][0])
        shown = page.get(f"{base}/c/{campaign}/").text
        page_answer = form(0)
        page_answer["client_token"] = shown.split('name="client_token" value="')[1].split('"')[0]
        page_answer["csrfmiddlewaretoken"] = page.cookies["csrftoken"]
        action = shown.split('id="annotation-form"')[0].rsplit('action="', 1)[1].split('"')[0]

        # Another writer holds SQLite's write lock longer than the busy timeout.
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            locked_api = api.post(f"{base}/api/assignments/{assignment}/submit/", json=answer)
            locked_page = page.post(base + action, data=page_answer, allow_redirects=False)
            locked_login = second.post(
                f"{base}/login/", data=second_credentials, allow_redirects=False
            )
        finally:
            holder.execute("ROLLBACK")
            holder.close()

        assert locked_api.status_code == 503
        assert locked_api.headers["Retry-After"] == "1"
        assert set(locked_api.json()) == {"detail", "errors"}
        assert locked_api.json()["errors"] == {}
        assert locked_page.status_code == 503
        assert locked_page.headers["Retry-After"] == "1"
        assert "Back in a moment" in locked_page.text
        # A login cut off by the lock keeps the browser's cookies: the same form is accepted.
        assert locked_login.status_code == 503
        assert "csrftoken" not in locked_login.cookies
        relogin = second.post(f"{base}/login/", data=second_credentials, allow_redirects=False)
        assert relogin.status_code == 302

        # Sent again with the same client tokens once the lock is free: stored, once.
        resent_api = api.post(f"{base}/api/assignments/{assignment}/submit/", json=answer)
        resent_page = page.post(base + action, data=page_answer, allow_redirects=False)
        assert resent_api.status_code == 201
        assert resent_page.status_code == 302
        replayed = api.post(f"{base}/api/assignments/{assignment}/submit/", json=answer)
        assert replayed.status_code == 200
    finally:
        stop(server)
    tokens = [answer["client_token"], page_answer["client_token"]]
    check = database_child("check", url, campaign=campaign, acknowledged=tokens)
    assert check["stored"] == check["submitted"] == 2, check
    assert check["unacknowledged"] == check["doubled"] == 0, check


def test_it_answers_503_not_500_when_writers_outnumber_the_busy_timeout(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'contended.sqlite3'}"
    setup = database_child("setup", url, pairs=300, api_users=6, page_users=2)
    server, port = serve(url, workers=4, env={"PRB_SQLITE_BUSY_TIMEOUT_S": "0.001"})
    try:
        tally = run_annotators(port, setup, seconds=4)
    finally:
        stop(server)
    check = database_child(
        "check", url, campaign=setup["campaign"], acknowledged=tally.acknowledged
    )
    assert_no_500(tally)
    assert_exact(tally, check)
