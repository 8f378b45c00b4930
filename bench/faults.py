"""Faults under load: what ``bench/fault_soak.py`` and the fault tests (``tests/faults/``)
share.

- ``ThrowawayPostgres``: a PostgreSQL cluster of our own (initdb in a temporary folder, its own
  free port on 127.0.0.1) that may be stopped and restarted at will; the shared server is never
  touched.
- ``Annotators``: simulated annotators against a gunicorn started by ``annotate_load``, through
  the JSON API and through the annotation page's form posts (logged in, CSRF token and all).
  An answer lost on the way (connection cut, 503) is sent again with the same client token
  until it is acknowledged; every answer is classified (status, or connection error by kind).
- ``kill_workers``: SIGKILL to one of the gunicorn master's worker processes every few seconds
  (only children of the master we started, by pid).
- ``database_child``: set-up and the read-back of the invariants, each in a child process
  configured for the database under test, so the caller needs no Django of its own there.
"""

import contextlib
import html
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from bench.annotate_load import (
    ROOT,
    build_campaign,
    form,
    free_port,
    items_over_their_limit,
    items_twice_to_one_annotator,
    setup_django,
)

PASSWORD = "fault-soak-password"
SAVED_MESSAGES = ("Your answer was saved.", "Your answer was already saved.")
FULL_MESSAGE = "This pair already has enough annotations"
REQUEST_TIMEOUT_S = 30
# A client honours Retry-After, up to this many seconds (a test has no time to wait 5 s).
RETRY_CAP_S = 0.5


# --- a throwaway PostgreSQL cluster ---------------------------------------------------------


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's program folder (Debian's layout), if any."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    return found[-1].parent if found else None


class ThrowawayPostgres:
    """A cluster in a temporary folder on a free port; ``restart`` it as maintenance would.

    As root, the server programs run as the ``postgres`` user (initdb refuses root). fsync is
    off: a restart (even ``immediate``, a crash) loses nothing the operating system holds,
    and the tests do not power the machine off.
    """

    def __init__(self) -> None:
        binaries = postgres_bin()
        if binaries is None:
            raise RuntimeError("PostgreSQL server programs not found under /usr/lib/postgresql")
        self.bin = binaries
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="prb_pg_"))
        self.data = self.folder / "data"

    def _as_server_user(self, args: list[str]) -> list[str]:
        if os.geteuid() == 0:
            return ["runuser", "-u", "postgres", "--", *args]
        return args

    def _run(self, *args: str) -> None:
        command = self._as_server_user([str(self.bin / args[0]), *args[1:]])
        subprocess.run(command, check=True, capture_output=True, cwd=self.folder)

    def __enter__(self) -> "ThrowawayPostgres":
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
            "-c fsync=off -c full_page_writes=off -c max_connections=100"
        )
        log = str(self.folder / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        """``fast``: clients are cut off at once ("terminating connection due to
        administrator command"); ``immediate``: as if the server crashed."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, mode: str = "fast", down_s: float = 0.0) -> None:
        self.stop(mode)
        time.sleep(down_s)
        self.start()

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


# --- set-up and read-back, in a child process ---------------------------------------------


def database_child(operation: str, database_url: str, **options: Any) -> dict[str, Any]:
    """Run ``operation`` (``setup`` or ``check``) in a child process on ``database_url``."""
    payload = json.dumps({"operation": operation, "url": database_url, **options}, allow_nan=False)
    env = dict(os.environ, DATABASE_URL=database_url)
    # A server on its own database refuses to start without a key; any will do for a bench.
    env.setdefault("SECRET_KEY", "bench-only-secret-key-never-used-by-a-server")
    env.pop("DJANGO_SETTINGS_MODULE", None)
    output = subprocess.run(
        [sys.executable, "-m", "bench.faults"],
        input=payload,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    if output.returncode != 0:
        raise RuntimeError(f"{operation} failed:\n{output.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(output.stdout.strip().splitlines()[-1])
    return result


def setup_campaign(pairs: int, api_users: int, page_users: int) -> dict[str, Any]:
    """A campaign (k = 3) with API annotators (tokens) and page annotators (passwords)."""
    from django.contrib.auth.models import User

    campaign_id, tokens = build_campaign(pairs, api_users + page_users)
    names = []
    for user in User.objects.filter(username__startswith="load").order_by("pk")[api_users:]:
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
        names.append(user.username)
    return {"campaign": campaign_id, "tokens": tokens[:api_users], "page_users": names}


def check_campaign(campaign_id: int, acknowledged: list[str]) -> dict[str, int]:
    """What the database holds against what the clients were told.

    - ``stored``: acknowledged client tokens found; ``lost``: acknowledged and not found;
    - ``doubled``: items over their target, an item twice to one annotator, an assignment with
      more than one answer (nothing here revises), an acknowledgement given twice;
    - ``stuck``: reservations still live once every reservation window since now has passed;
    - ``unacknowledged``: stored answers no client heard of (one sent as the run ended).
    """
    from datetime import timedelta

    from django.db.models import Count, Q
    from django.utils import timezone

    from prb_annotate.models import Annotation, Assignment, Campaign

    campaign = Campaign.objects.get(pk=campaign_id)
    stored = set(
        Annotation.objects.filter(assignment__campaign_id=campaign_id).values_list(
            "client_token", flat=True
        )
    )
    over_target = items_over_their_limit(campaign_id)
    twice_to_one = items_twice_to_one_annotator(campaign_id)
    several_answers = (
        Assignment.objects.filter(campaign_id=campaign_id)
        .annotate(n=Count("annotations"))
        .filter(n__gt=1)
        .count()
    )
    submitted_without_answer = (
        Assignment.objects.filter(campaign_id=campaign_id, status="submitted")
        .annotate(n=Count("annotations", filter=Q(annotations__is_current=True)))
        .exclude(n=1)
        .count()
    )
    after_windows = timezone.now() + timedelta(minutes=campaign.reservation_minutes)
    stuck = Assignment.objects.filter(
        campaign_id=campaign_id, status="reserved", expires_at__gt=after_windows
    ).count()
    acked = set(acknowledged)
    doubled = over_target + twice_to_one + several_answers + len(acknowledged) - len(acked)
    return {
        "acknowledged": len(acked),
        "stored": len(acked & stored),
        "lost": len(acked - stored) + submitted_without_answer,
        "doubled": doubled,
        "over_target": over_target,
        "twice_to_one": twice_to_one,
        "several_answers": several_answers,
        "stuck": stuck,
        "unacknowledged": len(stored - acked),
        "submitted": Assignment.objects.filter(campaign_id=campaign_id, status="submitted").count(),
    }


def child_main() -> None:
    options = json.loads(sys.stdin.read())
    setup_django(options["url"])
    if options["operation"] == "setup":
        result: dict[str, Any] = setup_campaign(
            options["pairs"], options["api_users"], options["page_users"]
        )
    else:
        result = check_campaign(options["campaign"], options["acknowledged"])
    from django.db import connection

    connection.close()
    print(json.dumps(result, allow_nan=False))


# --- annotators ---------------------------------------------------------------------------


@dataclass
class Tally:
    """What the clients saw. Shared by all annotator threads (under ``lock``)."""

    acknowledged: list[str] = field(default_factory=list)
    submits: int = 0  # distinct answers sent (one client token each)
    retried: int = 0  # answers sent more than once before an answer came
    full: int = 0  # answers refused because the pair filled up meanwhile
    given_up: int = 0  # answers still unanswered when the run's grace time ran out
    answers: Counter[str] = field(default_factory=Counter)  # "api submit 201", "page post 503"
    connection_errors: Counter[str] = field(default_factory=Counter)  # by kind
    bad_unavailable: list[str] = field(default_factory=list)  # a 503 without its format
    server_errors: list[str] = field(default_factory=list)  # samples of 500 bodies
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, key: str, counter: Counter[str]) -> None:
        with self.lock:
            counter[key] += 1

    def five_hundreds(self) -> dict[str, int]:
        """Answers of 500 or more, by status and kind of request."""
        return {
            key: value
            for key, value in sorted(self.answers.items())
            if int(key.rsplit(" ", 1)[1]) >= 500
        }

    def refused(self) -> dict[str, int]:
        """Answers of 4xx other than 409 (the pair full): none is expected."""
        return {
            key: value
            for key, value in sorted(self.answers.items())
            if 400 <= int(key.rsplit(" ", 1)[1]) < 500 and not key.endswith(" 409")
        }

    def summary(self) -> dict[str, Any]:
        return {
            "refused": self.refused(),
            "submits": self.submits,
            "acknowledged": len(self.acknowledged),
            "retried": self.retried,
            "full": self.full,
            "given_up": self.given_up,
            "five_hundreds": self.five_hundreds(),
            "connection_errors": dict(self.connection_errors),
            "bad_unavailable": self.bad_unavailable[:3],
            "server_errors": self.server_errors[:3],
        }


def connection_error_kind(error: requests.RequestException) -> str:
    text = str(error)
    for kind, marker in (
        ("refused", "Connection refused"),
        ("reset", "Connection reset"),
        ("disconnected", "RemoteDisconnected"),
        ("aborted", "Connection aborted"),
        ("timeout", "timed out"),
    ):
        if marker in text:
            return kind
    return type(error).__name__


class Client:
    """One annotator's HTTP session; ``send`` retries until an answer other than 5xx."""

    def __init__(self, base: str, tally: Tally, give_up_at: float, kind: str) -> None:
        self.base = base
        self.tally = tally
        self.give_up_at = give_up_at
        self.kind = kind
        self.session = requests.Session()
        self.attempts = 0  # of the last ``send``

    def send(self, label: str, method: str, path: str, **kwargs: Any) -> requests.Response | None:
        """The first answer below 500, or None once the grace time is over. A lost answer is
        sent again as it was: the API's and the page's submits carry their client token."""
        attempt = self.attempts = 0
        while time.monotonic() < self.give_up_at:
            attempt = self.attempts = attempt + 1
            try:
                response = self.session.request(
                    method, self.base + path, timeout=REQUEST_TIMEOUT_S, **kwargs
                )
            except requests.RequestException as error:
                self.tally.count(f"{self.kind} {label}: {connection_error_kind(error)}",
                                 self.tally.connection_errors)  # fmt: skip
                time.sleep(0.05 * min(attempt, 10))
                continue
            self.tally.count(f"{self.kind} {label} {response.status_code}", self.tally.answers)
            if response.status_code < 500:
                return response
            self.note_failure(response)
            wait = float(response.headers.get("Retry-After", "1") or 1)
            time.sleep(min(wait, RETRY_CAP_S))
        return None

    def note_failure(self, response: requests.Response) -> None:
        if response.status_code == 503 and not self.is_well_formed_unavailable(response):
            with self.tally.lock:
                self.tally.bad_unavailable.append(response.text[:300])
        elif response.status_code != 503:
            with self.tally.lock:
                self.tally.server_errors.append(f"{response.status_code} {response.text[:300]}")

    def is_well_formed_unavailable(self, response: requests.Response) -> bool:
        """A 503 as promised: Retry-After, and the API's error body or a plain page."""
        if not response.headers.get("Retry-After", "").isdigit():
            return False
        if self.kind == "api":
            try:
                body = response.json()
            except ValueError:
                return False
            return isinstance(body.get("detail"), str) and body.get("errors") == {}
        return "Back in a moment" in response.text and "Traceback" not in response.text

    def submitted(self) -> None:
        with self.tally.lock:
            self.tally.submits += 1
            self.tally.retried += self.attempts > 1


class ApiAnnotator(Client):
    def __init__(self, base: str, tally: Tally, give_up_at: float, token: str) -> None:
        super().__init__(base, tally, give_up_at, "api")
        self.session.headers["Authorization"] = f"Token {token}"

    def run(self, campaign_id: int, stop_at: float) -> None:
        while time.monotonic() < stop_at:
            response = self.send("next", "POST", f"/api/campaigns/{campaign_id}/next/")
            if response is None or response.status_code != 200:
                return  # 204: nothing left; anything else is in the tally
            assignment = response.json()["assignment"]
            body = form(assignment)
            self.submit(f"/api/assignments/{assignment}/submit/", body)

    def submit(self, path: str, body: dict[str, Any]) -> None:
        response = self.send("submit", "POST", path, json=body)
        self.submitted()
        with self.tally.lock:
            if response is None:
                self.tally.given_up += 1
            elif response.status_code in (200, 201):
                self.tally.acknowledged.append(body["client_token"])
            elif response.status_code == 409:
                self.tally.full += 1


FORM_ACTION = re.compile(r'<form method="post" action="([^"]+/submit/)" id="annotation-form"')
HIDDEN = re.compile(
    r'<input type="hidden" name="(csrfmiddlewaretoken|client_token)" value="([^"]*)"'
)


class PageAnnotator(Client):
    """An annotator in a browser: the annotation page, its form posted, the next page read."""

    def __init__(self, base: str, tally: Tally, give_up_at: float, username: str) -> None:
        super().__init__(base, tally, give_up_at, "page")
        self.username = username
        self.pending: str | None = None  # the token of a post whose outcome is not read yet

    def log_in(self) -> bool:
        page = self.send("login", "GET", "/login/")
        if page is None:
            return False
        token = HIDDEN.search(page.text)
        data = {"username": self.username, "password": PASSWORD}
        data["csrfmiddlewaretoken"] = token.group(2) if token else ""
        response = self.send("login", "POST", "/login/", data=data, allow_redirects=False)
        return response is not None and response.status_code == 302

    def run(self, campaign_id: int, stop_at: float) -> None:
        if not self.log_in():
            return
        while True:
            page = self.send("get", "GET", f"/c/{campaign_id}/")
            if page is None:
                return
            self.read_outcome(page.text)
            action = FORM_ACTION.search(page.text)
            if action is None or time.monotonic() >= stop_at:
                return  # the completion page: nothing left, or the run is over
            hidden = dict(HIDDEN.findall(page.text))
            data = form(0)
            data["client_token"] = hidden["client_token"]
            data["csrfmiddlewaretoken"] = hidden["csrfmiddlewaretoken"]
            path = html.unescape(action.group(1))
            response = self.send("post", "POST", path, data=data, allow_redirects=False)
            self.submitted()
            if response is None:
                with self.tally.lock:
                    self.tally.given_up += 1
                return
            self.pending = data["client_token"] if response.status_code == 302 else None

    def read_outcome(self, text: str) -> None:
        """The page after a post says how it went (Django's messages)."""
        if self.pending is None:
            return
        with self.tally.lock:
            if any(message in text for message in SAVED_MESSAGES):
                self.tally.acknowledged.append(self.pending)
            elif FULL_MESSAGE in text:
                self.tally.full += 1
        self.pending = None


def run_annotators(
    port: int, setup: dict[str, Any], seconds: float, *, grace_s: float = 30.0
) -> Tally:
    """API and page annotators for ``seconds``; then each finishes the answer in hand (within
    ``grace_s``) and stops."""
    base = f"http://127.0.0.1:{port}"
    tally = Tally()
    stop_at = time.monotonic() + seconds
    give_up_at = stop_at + grace_s
    annotators: list[ApiAnnotator | PageAnnotator] = [
        ApiAnnotator(base, tally, give_up_at, token) for token in setup["tokens"]
    ]
    annotators += [PageAnnotator(base, tally, give_up_at, name) for name in setup["page_users"]]
    threads = [
        threading.Thread(target=annotator.run, args=(setup["campaign"], stop_at))
        for annotator in annotators
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally


# --- faults ---------------------------------------------------------------------------------


def worker_pids(master_pid: int) -> list[int]:
    """gunicorn's worker processes: the children of the master we started (Linux /proc)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master_pid:
            pids.append(int(stat.parent.name))
    return pids


def kill_workers(master_pid: int, every_s: float, seconds: float, stop: threading.Event) -> int:
    """SIGKILL one worker of ``master_pid`` every ``every_s`` seconds for ``seconds`` (or until
    ``stop``); the count. The master starts a new worker each time, as after a crash."""
    chooser = random.Random(master_pid)
    until = time.monotonic() + seconds
    kills = 0
    while not stop.wait(every_s) and time.monotonic() < until:
        pids = worker_pids(master_pid)
        if pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(chooser.choice(pids), signal.SIGKILL)
                kills += 1
    return kills


@contextlib.contextmanager
def in_background(target: Any, *args: Any) -> Iterator[dict[str, Any]]:
    """Run ``target(*args, stop)`` in a thread while the block runs; its result in ``["result"]``
    once the block is left (``stop`` is set then)."""
    stop = threading.Event()
    out: dict[str, Any] = {}

    def run() -> None:
        out["result"] = target(*args, stop)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join()


if __name__ == "__main__":
    child_main()
