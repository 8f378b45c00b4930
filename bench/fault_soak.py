"""Fault soak: annotators working for minutes while the server is hurt, on SQLite and PostgreSQL.

    python bench/fault_soak.py                             # both databases, 3 minutes each
    python bench/fault_soak.py --databases sqlite --minutes 1
    python bench/fault_soak.py --kill-every 1.5 --outage-every 20

The long version of ``tests/faults/test_faults_load.py``. Each database gets a fresh campaign
(k = 3) and a gunicorn of 2 workers (sync on SQLite, 4 threads each on PostgreSQL; ``--preload``,
as recommended for production, so that a killed worker is replaced by a fork at once), and API
and page annotators (``bench/faults.py``) work through it while:

- a gunicorn worker is killed with SIGKILL every ``--kill-every`` seconds;
- every ``--outage-every`` seconds the database goes away for ``--outage-s`` seconds:
  PostgreSQL (a throwaway cluster of this script's own, never the shared server) is stopped,
  alternately ``fast`` (maintenance) and ``immediate`` (a crash), and started again; on SQLite
  another process holds the write lock that long (a backup, a long migration), beyond the
  busy timeout the server is given (``--sqlite-busy-timeout``).

Clients that lose an answer send it again with the same client token. Printed per database:
answers sent (submits), acknowledged, stored, retried (sent more than once), lost, doubled,
reservations stuck past their window, answers of 5xx by request and status, and connection
errors by kind. Lost, doubled, stuck and any 500 must be 0. "Stored unheard" are answers stored
whose confirmation never reached the client: on the annotation page it is a message shown by the
next page, lost when that page is cut off or fails after taking it. Each is stored once, and a
client that sent it again would be told so.
"""

import argparse
import contextlib
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.annotate_load import default_threads, free_port, start_gunicorn  # noqa: E402
from bench.faults import (  # noqa: E402
    ThrowawayPostgres,
    database_child,
    in_background,
    kill_workers,
    run_annotators,
)


def sqlite_outages(
    path: Path, every_s: float, outage_s: float, seconds: float, stop: threading.Event
) -> int:
    """Hold SQLite's write lock for ``outage_s`` every ``every_s`` seconds; the count."""
    until = time.monotonic() + seconds
    count = 0
    while not stop.wait(every_s) and time.monotonic() < until:
        holder = sqlite3.connect(path, isolation_level=None, timeout=30)
        try:
            holder.execute("BEGIN IMMEDIATE")
            count += 1
            stop.wait(outage_s)
            holder.execute("ROLLBACK")
        finally:
            holder.close()
    return count


def postgres_outages(
    cluster: ThrowawayPostgres,
    every_s: float,
    outage_s: float,
    seconds: float,
    stop: threading.Event,
) -> int:
    """Stop the cluster for ``outage_s`` every ``every_s`` seconds, alternately ``fast`` and
    ``immediate``; the count."""
    until = time.monotonic() + seconds
    count = 0
    while not stop.wait(every_s) and time.monotonic() < until:
        cluster.restart("fast" if count % 2 == 0 else "immediate", down_s=outage_s)
        count += 1
    return count


@contextlib.contextmanager
def database(name: str, folder: Path) -> Iterator[tuple[str, ThrowawayPostgres | None]]:
    if name == "sqlite":
        yield f"sqlite:///{folder / 'soak.sqlite3'}", None
        return
    with ThrowawayPostgres() as cluster:
        yield cluster.create_database("prb_soak"), cluster


def soak(name: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    seconds = args.minutes * 60
    with database(name, folder) as (url, cluster):
        setup = database_child(
            "setup", url, pairs=args.pairs, api_users=args.api, page_users=args.page
        )
        port = free_port()
        # The 503s are counted here; the server logging each of them would drown the figures.
        env = {"PRB_SQLITE_BUSY_TIMEOUT_S": str(args.sqlite_busy_timeout), "LOG_LEVEL": "CRITICAL"}
        server = start_gunicorn(url, port, default_threads(url), env=env, preload=True)
        if cluster is None:
            outages: Any = (sqlite_outages, folder / "soak.sqlite3")
        else:
            outages = (postgres_outages, cluster)
        try:
            with (
                in_background(kill_workers, server.pid, args.kill_every, seconds) as kills,
                in_background(*outages, args.outage_every, args.outage_s, seconds) as downs,
            ):
                tally = run_annotators(port, setup, seconds, grace_s=60)
        finally:
            server.terminate()
            server.wait(timeout=30)
        check = database_child(
            "check", url, campaign=setup["campaign"], acknowledged=tally.acknowledged
        )
    return {
        "kills": kills["result"],
        "outages": downs["result"],
        "tally": tally.summary(),
        "check": check,
    }


def report(name: str, seconds: float, result: dict[str, Any]) -> None:
    tally, check = result["tally"], result["check"]
    print(
        f"{name:<9} {seconds:5.0f} s  worker kills {result['kills']}  "
        f"database outages {result['outages']}"
    )
    print(
        f"  submits {tally['submits']}  acknowledged {check['acknowledged']}  "
        f"stored {check['stored']}  retried {tally['retried']}  lost {check['lost']}  "
        f"doubled {check['doubled']}  stuck {check['stuck']}  "
        f"full {tally['full']}  given up {tally['given_up']}  "
        f"stored unheard {check['unacknowledged']}"
    )
    five = tally["five_hundreds"]
    print("  5xx: " + (", ".join(f"{key}: {value}" for key, value in five.items()) or "none"))
    refused = tally["refused"]
    print("  4xx other than 409: " + (", ".join(f"{k}: {v}" for k, v in refused.items()) or "none"))
    errors = tally["connection_errors"]
    print(
        "  connection errors: "
        + (", ".join(f"{key} {value}" for key, value in sorted(errors.items())) or "none")
    )
    for sample in tally["server_errors"] + tally["bad_unavailable"]:
        print(f"  BAD: {sample[:200]!r}")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description="Annotators under worker kills and outages.")
    parser.add_argument(
        "--databases", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"]
    )
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--api", type=int, default=8, help="API annotators")
    parser.add_argument("--page", type=int, default=4, help="annotation page annotators")
    parser.add_argument("--pairs", type=int, default=5000)
    parser.add_argument("--kill-every", type=float, default=3.0)
    parser.add_argument("--outage-every", type=float, default=30.0)
    parser.add_argument("--outage-s", type=float, default=3.0)
    parser.add_argument(
        "--sqlite-busy-timeout",
        type=float,
        default=1.0,
        help="seconds a SQLite writer waits for the lock before its request answers 503",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prb_fault_soak_") as folder:
        for name in args.databases:
            result = soak(name, args, Path(folder))
            report(name, args.minutes * 60, result)


if __name__ == "__main__":
    main()
