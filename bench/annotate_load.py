"""Annotation load: simulated annotators against the JSON API under gunicorn, on SQLite and
PostgreSQL.

    python bench/annotate_load.py                  # both databases, 8 and 32 annotators, 15 s
    python bench/annotate_load.py --databases sqlite --annotators 8 --seconds 10
    python bench/annotate_load.py --annotators 32 --think-ms 1000   # annotators who read
    python bench/annotate_load.py --profile        # queries, transactions, ms per operation
    python bench/annotate_load.py --compare 862bae4 --annotators 8 --rounds 3   # side by side

Each (database, annotators) run gets a fresh database (a throwaway SQLite file, or the
PostgreSQL database ``prb_bench_load``, dropped and created again), a campaign over synthetic
pairs (k = 3), and a gunicorn on 127.0.0.1 with 2 workers: sync workers on SQLite, where one
write lock serializes the writers anyway, and gthread workers with 4 threads each on
PostgreSQL, so that a worker serves another request while one waits for the database
(``--threads`` sets the threads for both). Every simulated annotator is a thread with its own
keep-alive HTTP connection (``http.client``; the sync worker closes it after each answer, and
it opens again) and API token, looping POST next -> POST submit until the time is up (after an
unmeasured warm-up). Printed: cycles/s, p50/p95 of next, submit and the whole cycle, CPU per
cycle of the web workers, of this load generator (they share the machine) and of the
PostgreSQL backends serving the web workers, PostgreSQL's transaction count per cycle
(read-only ones included), and the invariants read back from the database afterwards: no
regular item over k submitted, no item twice to one annotator, every accepted submit stored
exactly once.

With no pause between cycles, N annotators keep N requests in flight, so latency is N divided
by throughput (Little's law); ``--think-ms`` gives the annotators reading time, as real ones
have (about a minute per pair), drawn at random around that mean so that they do not move in
step.

Before the clock starts, each run counts the statements of 48 cycles in process (Django's
query capture, through the test client, authentication and transaction control included) and
prints them per cycle beside the load's figures, with the median CPU time of such a cycle in
that one process: the steadiest of the CPU figures on a machine shared with other work.

``--compare REV [REV ...]`` checks each commit out into a temporary ``git worktree`` and runs
the same load (this script, the same options) against this tree and each of them in turn,
alternating the order every round, and prints the median of the rounds side by side with each
commit's ratio to this tree (``load_compare.py``): a regression shows as a ratio measured on
the same machine at the same time.

``--profile`` runs in one process through Django's test client on a campaign already 60 %
annotated and prints queries, commits, transactions (commits plus statements run in
autocommit mode, each a transaction of its own) and time per operation, with the SQL of the
last one: what to reduce when the figures disappoint.
"""

import argparse
import hashlib
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/prb_bench_load"
CRITERIA = ["correctness", "relevance", "helpfulness"]
BENCH_SECRET_KEY = "bench-only-secret-key-never-used-by-a-server"


# --- database set-up (runs in the child process) ------------------------------------------


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    # A server on its own database refuses to start without a key; any will do for a bench.
    os.environ.setdefault("SECRET_KEY", BENCH_SECRET_KEY)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prb_annotate.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def build_campaign(pairs: int, annotators: int, *, seed: int = 1) -> tuple[int, list[str]]:
    """A campaign over ``pairs`` synthetic pairs with ``annotators`` members; their API tokens."""
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    from fixtures.make_synthetic import synthetic_records
    from prb_annotate.campaigns.lifecycle import add_member, create_campaign
    from prb_annotate.models import Dataset, Pair

    dataset = Dataset.objects.create(name="bench", source="synthetic")
    rows = []
    for record in synthetic_records(pairs, seed=seed):
        text = json.dumps(record, sort_keys=True, allow_nan=False)
        rows.append(
            Pair(
                dataset=dataset,
                external_id=record["id"],
                category=record["category"],
                question=record["question"],
                profile=record["profile"],
                rubric_aspects=record["rubric_aspects"],
                narrative=record["narrative"],
                chosen=record["chosen"],
                rejected=record["rejected"],
                content_hash=hashlib.sha256(text.encode()).hexdigest(),
            )
        )
    Pair.objects.bulk_create(rows, batch_size=500)
    campaign = create_campaign(dataset, "load", k=3, seed=seed, activate=True)
    tokens = []
    for index in range(annotators):
        user = User.objects.create_user(f"load{index:03d}")
        add_member(campaign, user)
        tokens.append(Token.objects.create(user=user).key)
    return campaign.pk, tokens


def form(assignment_id: int) -> dict[str, Any]:
    data: dict[str, Any] = {f"quality_A_{c}": 5 for c in CRITERIA}
    data.update({f"quality_B_{c}": 4 for c in CRITERIA})
    data.update(
        rubric_fit="A",
        differentiator="preference",
        confidence="high",
        client_token=uuid.uuid4().hex,
        time_on_task_ms=9000,
    )
    return data


def items_over_their_limit(campaign_id: int) -> int:
    """Regular items with more submitted answers than slots: the assignment invariant."""
    from django.db.models import Count, Q

    from prb_annotate.models import CampaignItem

    return (
        CampaignItem.objects.filter(campaign_id=campaign_id, kind=CampaignItem.Kind.REGULAR)
        .annotate(n=Count("assignments", filter=Q(assignments__status="submitted")))
        .filter(n__gt=CampaignItem.slot_limit())
        .count()
    )


def items_twice_to_one_annotator(campaign_id: int) -> int:
    from django.db.models import Count

    from prb_annotate.models import Assignment

    return (
        Assignment.objects.filter(campaign_id=campaign_id)
        .values("item_id", "annotator_id")
        .annotate(n=Count("pk"))
        .filter(n__gt=1)
        .count()
    )


def invariants(campaign_id: int, accepted: list[int]) -> dict[str, int]:
    """Read back from the database after the run."""
    from django.db.models import Count, Q

    from prb_annotate.models import Annotation, Assignment

    over = items_over_their_limit(campaign_id)
    duplicates = items_twice_to_one_annotator(campaign_id)
    stored = set(
        Annotation.objects.filter(assignment__campaign_id=campaign_id).values_list("pk", flat=True)
    )
    submitted = Assignment.objects.filter(campaign_id=campaign_id, status="submitted")
    without_one_current = (
        submitted.annotate(n=Count("annotations", filter=Q(annotations__is_current=True)))
        .exclude(n=1)
        .count()
    )
    return {
        "over_assigned": over,
        "duplicates": duplicates,
        "lost": len(set(accepted) - stored) + without_one_current,
        "double_counted": len(accepted) - len(set(accepted)) + len(stored - set(accepted)),
        "submitted": submitted.count(),
    }


# --- load run (child process) -------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def default_threads(database_url: str) -> int:
    """gunicorn threads per worker: 1 (sync workers) on SQLite, 4 on PostgreSQL."""
    return 4 if database_url.startswith("postgres") else 1


def start_gunicorn(
    database_url: str,
    port: int,
    threads: int,
    *,
    workers: int = 2,
    env: dict[str, str] | None = None,
    preload: bool = False,
) -> subprocess.Popen[bytes]:
    """gunicorn on 127.0.0.1:``port``, once it answers (a worker may still be starting); ``env``
    adds variables; ``preload`` loads the app in the master (a new worker forks)."""
    env = dict(
        os.environ,
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="prb_annotate.settings",
        SECRET_KEY=os.environ.get("SECRET_KEY", BENCH_SECRET_KEY),
        **(env or {}),
    )
    command = [
        sys.executable, "-m", "gunicorn", "prb_annotate.wsgi",
        "-w", str(workers), "--threads", str(threads), "-b", f"127.0.0.1:{port}",
        "--log-level", "warning", *(["--preload"] if preload else []),
    ]  # fmt: skip
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    import requests

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            # A few requests, so that both workers have loaded Django before the clock starts.
            for _ in range(4):
                requests.get(f"http://127.0.0.1:{port}/login/", timeout=10)
            return server
        except requests.RequestException:
            time.sleep(0.2)
    server.terminate()
    server.wait(timeout=30)
    raise RuntimeError("gunicorn did not start")


def workers_cpu_seconds(master_pid: int) -> float:
    """User + system CPU of gunicorn's worker processes so far (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master_pid:  # field 4 of stat: the parent pid
            total += int(fields[11]) + int(fields[12])  # fields 14 and 15: utime, stime
    return total / ticks


class Annotator:
    """One annotator's HTTP/1.1 connection to the server, kept alive between requests where
    the server allows it (gthread workers do, sync workers close it after each answer and it
    opens again), as a browser's would be."""

    def __init__(self, host: str, port: int, token: str) -> None:
        self.connection = http.client.HTTPConnection(host, port, timeout=60)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}

    def post(self, path: str, body: bytes = b"") -> tuple[int, bytes]:
        try:
            return self._post(path, body)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # The server closed an idle kept-alive connection. Sending again is safe: next
            # answers with the same reservation, submit replays its client token.
            self.connection.close()
            return self._post(path, body)

    def _post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.connection.request("POST", path, body, self.headers)
        response = self.connection.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self.connection.close()


def calibration_seconds() -> float:
    """Seconds for a fixed pure-Python loop: how fast this machine runs Python right now."""
    started = time.perf_counter()
    total = 0
    for number in range(5_000_000):
        total += number
    return time.perf_counter() - started


def pg_commits(database_url: str) -> int | None:
    """PostgreSQL's count of committed transactions in this database. A backend publishes its
    counts when it exits and otherwise at the end of a transaction, at most once a second: the
    web workers' last second before a reading is counted in the next one, about as much before
    the run as after it."""
    if not database_url.startswith("postgres"):
        return None
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        )
        return int(cursor.fetchone()[0])


def pg_backend_cpu(database_url: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend serving this database, other than this
    process's own (Linux /proc; empty when the server runs elsewhere)."""
    if not database_url.startswith("postgres"):
        return {}
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        pids = [int(row[0]) for row in cursor.fetchall()]
    return {pid: seconds for pid in pids if (seconds := process_cpu_seconds(pid)) is not None}


def process_cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def annotator_loop(
    port: int,
    campaign_id: int,
    token: str,
    stop_at: float,
    out: dict[str, list[Any]],
    think_s: float = 0.0,
) -> None:
    """One simulated annotator: next, then submit, until the time is up; ``think_s`` is the
    mean pause between a submit and the next request (reading the next pair).

    Pauses are drawn from an exponential distribution (seeded per annotator), and the first
    comes before the first request: annotators who read independently, not a crowd that
    starts together and stays in step, sending bursts of N requests at once.
    """
    pauses = random.Random(token)
    annotator = Annotator("127.0.0.1", port, token)
    if think_s:
        time.sleep(pauses.expovariate(1 / think_s))
    next_path = f"/api/campaigns/{campaign_id}/next/"
    next_ms, submit_ms, cycle_ms, accepted, errors = [], [], [], [], []
    while time.monotonic() < stop_at:
        started = time.perf_counter()
        status, body = annotator.post(next_path)
        reserved = time.perf_counter()
        if status == 204:
            break
        if status != 200:
            errors.append(f"next {status}")
            continue
        assignment = json.loads(body)["assignment"]
        status, body = annotator.post(
            f"/api/assignments/{assignment}/submit/",
            json.dumps(form(assignment), allow_nan=False).encode(),
        )
        done = time.perf_counter()
        if status != 201:
            errors.append(f"submit {status} {body[:100]!r}")
            continue
        accepted.append(json.loads(body)["annotation"])
        next_ms.append((reserved - started) * 1000)
        submit_ms.append((done - reserved) * 1000)
        cycle_ms.append((done - started) * 1000)
        if think_s:
            time.sleep(pauses.expovariate(1 / think_s))
    annotator.close()
    with LOCK:
        for key, values in (
            ("next", next_ms),
            ("submit", submit_ms),
            ("cycle", cycle_ms),
            ("accepted", accepted),
            ("errors", errors),
        ):
            out[key].extend(values)


LOCK = threading.Lock()
WARM_UP_S = 3.0


def run_annotators(
    port: int,
    campaign_id: int,
    tokens: list[str],
    seconds: float,
    out: dict[str, list[Any]],
    think_s: float = 0.0,
) -> None:
    stop_at = time.monotonic() + seconds
    threads = [
        threading.Thread(
            target=annotator_loop, args=(port, campaign_id, token, stop_at, out, think_s)
        )
        for token in tokens
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def load_child(options: dict[str, Any]) -> dict[str, Any]:
    database_url = options["url"]
    setup_django(database_url)
    campaign_id, tokens = build_campaign(options["pairs"], options["annotators"])
    statements, counted = sibling().statements_per_cycle(
        campaign_id, tokens, options.get("count_cycles", 48), form
    )
    from django.db import connection

    # Publishes this process's set-up transactions (migrations, campaign) before the run.
    connection.close()
    port = free_port()
    threads = options["threads"] or default_threads(database_url)
    server = start_gunicorn(database_url, port, threads=threads)
    think_s = options["think_ms"] / 1000
    try:
        out: dict[str, list[Any]] = {
            "next": [],
            "submit": [],
            "cycle": [],
            "accepted": [],
            "errors": [],
        }
        # Warm-up, not measured: each worker imports the views and opens its connections on
        # its first requests, a one-off cost of seconds.
        warm: dict[str, list[Any]] = {key: [] for key in out}
        run_annotators(port, campaign_id, tokens, WARM_UP_S, warm, think_s)
        out["accepted"] += counted + warm["accepted"]
        out["errors"] += warm["errors"]
        commits_before = pg_commits(database_url)
        backends_before = pg_backend_cpu(database_url)
        connection.close()
        server_cpu_before = workers_cpu_seconds(server.pid)
        client_cpu_before = time.process_time()
        started = time.perf_counter()
        run_annotators(port, campaign_id, tokens, options["seconds"], out, think_s)
        elapsed = time.perf_counter() - started
        client_cpu = time.process_time() - client_cpu_before
        server_cpu = workers_cpu_seconds(server.pid) - server_cpu_before
        backends_after = pg_backend_cpu(database_url)
        commits_after = pg_commits(database_url)
    finally:
        server.terminate()
        server.wait(timeout=30)
    cycles = len(out["cycle"])
    result: dict[str, Any] = {
        "cycles": cycles,
        "cycles_per_s": cycles / elapsed,
        "errors": len(out["errors"]),
        "error_sample": out["errors"][:3],
        **{
            f"{name}_{label}": percentile(out[name], share)
            for name in ("next", "submit", "cycle")
            for label, share in (("p50", 0.5), ("p95", 0.95))
        },
        "invariants": invariants(campaign_id, out["accepted"]),
        # CPU per cycle, the figure that carries over to another machine: the web workers and
        # this load generator (database servers not included).
        "server_cpu_ms_per_cycle": 1000 * server_cpu / cycles if cycles else float("nan"),
        "client_cpu_ms_per_cycle": 1000 * client_cpu / cycles if cycles else float("nan"),
    }
    if commits_before is not None and commits_after is not None and cycles:
        # PostgreSQL counts every transaction, read-only autocommit ones included.
        result["pg_transactions_per_cycle"] = (commits_after - commits_before) / cycles
    if backends_before and cycles:
        # Backends that served the whole run (the web workers keep their connections).
        backend_cpu = sum(
            backends_after[pid] - before
            for pid, before in backends_before.items()
            if pid in backends_after
        )
        result["pg_cpu_ms_per_cycle"] = 1000 * backend_cpu / cycles
    result["threads"] = threads
    result["statements_next"] = statements["next"]
    result["statements_submit"] = statements["submit"]
    result["statements_per_cycle"] = statements["next"] + statements["submit"]
    result["inprocess_cpu_ms_per_cycle"] = statements["cpu_ms"]
    connection.close()
    return result


# --- profile (child process) --------------------------------------------------------------


def prefill(campaign_id: int, share: float) -> None:
    """Submitted assignments and annotations for the first ``share`` of items, k each."""
    from django.contrib.auth.models import User
    from django.utils import timezone

    from prb_annotate.models import Annotation, Assignment, CampaignItem

    users = list(User.objects.filter(username__startswith="load").order_by("pk"))
    items = list(CampaignItem.objects.filter(campaign_id=campaign_id).order_by("order_key"))
    now = timezone.now()
    rows = []
    for index, item in enumerate(items[: int(share * len(items))]):
        for slot in range(3):
            user = users[(index * 3 + slot) % len(users)]
            rows.append(
                Assignment(
                    campaign_id=campaign_id,
                    item=item,
                    annotator=user,
                    chosen_position="AB"[(index + slot) % 2],
                    status="submitted",
                    reserved_at=now,
                    expires_at=now,
                    submitted_at=now,
                )
            )
    Assignment.objects.bulk_create(rows, batch_size=1000)
    Annotation.objects.bulk_create(
        [
            Annotation(
                assignment=row,
                quality_chosen=dict.fromkeys(CRITERIA, 5),
                quality_rejected=dict.fromkeys(CRITERIA, 4),
                rubric_fit="chosen",
                differentiator="preference",
                confidence="high",
                client_token=uuid.uuid4().hex,
            )
            for row in Assignment.objects.filter(campaign_id=campaign_id)
        ],
        batch_size=1000,
    )


def profile_child(options: dict[str, Any]) -> dict[str, Any]:
    setup_django(options["url"])
    pairs, cycles = options["pairs"], options["cycles"]
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    campaign_id, tokens = build_campaign(pairs, 16)
    prefill(campaign_id, 0.6)
    commits = [0]
    original_commit = connection.commit

    def counting_commit() -> None:
        commits[0] += 1
        original_commit()

    connection.commit = counting_commit  # type: ignore[method-assign]
    autocommitted = [0]

    def count_autocommitted(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        # SQLite's own BEGIN IMMEDIATE also runs as a statement: the commit counts that one.
        autocommitted[0] += connection.get_autocommit() and not sql.startswith("BEGIN")
        return execute(sql, params, many, context)

    clients = [Client(HTTP_AUTHORIZATION=f"Token {token}") for token in tokens]
    stats: dict[str, dict[str, list[float]]] = {
        op: {"queries": [], "commits": [], "transactions": [], "ms": []}
        for op in ("next", "submit")
    }
    sample_sql: dict[str, list[str]] = {}
    for index in range(cycles):
        client = clients[index % len(clients)]
        for op in ("next", "submit"):
            commits[0] = autocommitted[0] = 0
            with (
                CaptureQueriesContext(connection) as queries,
                connection.execute_wrapper(count_autocommitted),
            ):
                started = time.perf_counter()
                if op == "next":
                    response = client.post(f"/api/campaigns/{campaign_id}/next/")
                    assert response.status_code == 200, response.content
                    assignment = response.json()["assignment"]
                else:
                    response = client.post(
                        f"/api/assignments/{assignment}/submit/",
                        form(assignment),
                        content_type="application/json",
                    )
                    assert response.status_code == 201, response.content
                elapsed = (time.perf_counter() - started) * 1000
            stats[op]["queries"].append(len(queries.captured_queries))
            stats[op]["commits"].append(commits[0])
            stats[op]["transactions"].append(commits[0] + autocommitted[0])
            stats[op]["ms"].append(elapsed)
            if index == cycles - 1:
                sample_sql[op] = [
                    f"{float(q['time']) * 1000:6.2f} ms  {' '.join(q['sql'].split())[:150]}"
                    for q in queries.captured_queries
                ]
    return {
        op: {
            "queries": statistics.mean(values["queries"]),
            "commits": statistics.mean(values["commits"]),
            "transactions": statistics.mean(values["transactions"]),
            "ms_p50": percentile(values["ms"], 0.5),
            "ms_p95": percentile(values["ms"], 0.95),
            "sql": sample_sql[op],
        }
        for op, values in stats.items()
    }


# --- driver -------------------------------------------------------------------------------


def reset_postgres(url: str, *, create: bool) -> None:
    import psycopg

    server, name = url.rsplit("/", 1)
    with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if create:
            connection.execute(f'CREATE DATABASE "{name}"')


def run_on_fresh_database(
    script: str, database: str, sqlite_path: Path, pg_url: str, options: dict[str, Any]
) -> Any:
    """``script --child OPTIONS`` in a child process on a fresh database (the SQLite file
    ``sqlite_path``, or ``pg_url`` created and dropped again), with the database's URL in the
    options; what the child printed last, read as JSON."""
    if database == "postgres":
        reset_postgres(pg_url, create=True)
        url = pg_url
    else:
        url = f"sqlite:///{sqlite_path}"
    child_options = json.dumps({"url": url, **options}, allow_nan=False)
    command = [sys.executable, script, "--child", child_options]
    try:
        output = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT)
    finally:
        if database == "postgres":
            reset_postgres(pg_url, create=False)
    return json.loads(output.stdout.strip().splitlines()[-1])


def run_child(mode: str, options: dict[str, Any], root: Path = ROOT) -> dict[str, Any]:
    """This script in a child process, serving the code of ``root`` (this tree, or another
    commit's worktree under --compare)."""
    command = [
        sys.executable,
        __file__,
        "--child",
        json.dumps({"mode": mode, "root": str(root), **options}, allow_nan=False),
    ]
    env = dict(os.environ, PYTHONPATH=str(root))
    output = subprocess.run(command, capture_output=True, text=True, cwd=root, env=env)
    if output.returncode:
        raise RuntimeError(f"the {mode} run on {root} failed:\n{output.stderr[-3000:]}")
    return json.loads(output.stdout.strip().splitlines()[-1])


def use_tree(root: str) -> None:
    """The child's code is ``root``'s: Django, the campaign set-up and gunicorn come from it."""
    global ROOT
    ROOT = Path(root)


def database_url(database: str, folder: str, pg_url: str, label: str) -> str:
    if database == "postgres":
        reset_postgres(pg_url, create=True)
        return pg_url
    path = Path(folder) / f"load_{label}.sqlite3"
    path.unlink(missing_ok=True)  # a fresh database for every run
    return f"sqlite:///{path}"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Annotation load on SQLite and PostgreSQL.")
    parser.add_argument(
        "--databases", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"]
    )
    parser.add_argument("--annotators", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="gunicorn threads per worker (default: 1 on SQLite, 4 on PostgreSQL)",
    )
    parser.add_argument(
        "--think-ms", type=float, default=0, help="mean pause of each annotator between cycles"
    )
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument(
        "--profile", action="store_true", help="queries and transactions per operation"
    )
    parser.add_argument("--cycles", type=int, default=200, help="cycles measured by --profile")
    parser.add_argument(
        "--compare",
        nargs="+",
        metavar="REV",
        help="run the load against these commits too, alternating (first --annotators only)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --compare")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    return parser.parse_args()


def load_run(
    args: argparse.Namespace, database: str, count: int, folder: str, root: Path = ROOT
) -> dict[str, Any]:
    """One load run on a fresh database, the server running ``root``'s code."""
    url = database_url(database, folder, args.pg_url, str(count))
    options = {
        "url": url,
        "annotators": count,
        "seconds": args.seconds,
        "pairs": args.pairs,
        "threads": args.threads,
        "think_ms": args.think_ms,
    }
    try:
        return run_child("load", options, root)
    finally:
        if database == "postgres":
            reset_postgres(args.pg_url, create=False)


def profile_run(args: argparse.Namespace, database: str, folder: str) -> None:
    url = database_url(database, folder, args.pg_url, "profile")
    try:
        result = run_child("profile", {"url": url, "pairs": args.pairs, "cycles": args.cycles})
    finally:
        if database == "postgres":
            reset_postgres(args.pg_url, create=False)
    for op, row in result.items():
        print(
            f"{database:<9} {op:<7} queries {row['queries']:5.1f}  commits "
            f"{row['commits']:4.1f}  transactions {row['transactions']:4.1f}  "
            f"p50 {row['ms_p50']:6.1f} ms  p95 {row['ms_p95']:6.1f} ms"
        )
        for line in row["sql"]:
            print(f"          {line}")


def sibling() -> Any:
    """``load_compare.py``, beside this script: the statement count, the printed line of a
    run and the side-by-side runs."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import load_compare  # found through the path set just above

    return load_compare


def compare_run(args: argparse.Namespace, folder: str) -> None:
    count = args.annotators[0]
    load_line = sibling().load_line
    sibling().compare(
        ROOT,
        args.compare,
        args.rounds,
        args.databases,
        run=lambda database, tree: load_run(args, database, count, folder, tree.root),
        report=lambda database, tree, number, result: print(
            f"round {number + 1}, {tree.label}: {load_line(database, count, result)}", flush=True
        ),
    )


def main() -> None:
    args = parse_args()
    if args.child:
        options = json.loads(args.child)
        use_tree(options["root"])
        child = load_child if options["mode"] == "load" else profile_child
        print(json.dumps(child(options), allow_nan=False))
        return

    print(
        f"calibration: a 5M-step Python loop takes {calibration_seconds():.2f} s on this machine "
        "now (compare it before comparing figures across machines)",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="prb_annotate_load_") as folder:
        if args.compare:
            compare_run(args, folder)
            return
        for database in args.databases:
            if args.profile:
                profile_run(args, database, folder)
                continue
            for count in args.annotators:
                result = load_run(args, database, count, folder)
                print(sibling().load_line(database, count, result), flush=True)


if __name__ == "__main__":
    main()
