"""Audit page benchmark: the campaign audit page and the dashboard, cold and warm.

    python bench/audit_page_bench.py                    # 3,000 and 30,000 pairs x 3
    python bench/audit_page_bench.py --pairs 3000       # a quick look
    python bench/audit_page_bench.py --database-url postgres://.../empty_db --pairs 30000

Each size gets its own SQLite file in a temporary folder (or the empty database given with
--database-url, migrated and filled as ``export_bench.py`` fills it), then a fifth of the
answers are varied so that the coefficients and verdicts have real work to do. The pages are
requested in-process through Django's test client, as a logged-in manager:

- *cold*: the kept audit dropped first (``cache.forget_audits``), so the page reads every
  annotation and computes the whole audit (1,000 bootstrap resamples);
- *warm*: the same page again, nothing changed: the page reads the change stamp and renders
  the kept result.

Medians of ``--repeat`` requests, wall and CPU. Target at 30,000 pairs: warm under 300 ms,
cold under 3 s.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from export_bench import fill, setup_django  # noqa: E402 - after the path is set


def vary_answers() -> None:
    """Disagreement and low ratings on a fifth of the answers, spread over the pairs."""
    from django.db.models import F
    from django.db.models.functions import Mod

    from prb_annotate.models import Annotation

    every = Annotation.objects.annotate(m7=Mod(F("id"), 7), m11=Mod(F("id"), 11))
    every.filter(m7=0).update(rubric_fit="rejected")
    every.filter(m11=0).update(differentiator="quality")
    low = {"correctness": 2, "relevance": 3, "helpfulness": 4}
    Annotation.objects.annotate(m13=Mod(F("id"), 13)).filter(m13=0).update(quality_chosen=low)
    Annotation.objects.annotate(m5=Mod(F("id"), 5)).filter(m5=0).update(time_on_task_ms=4000)


def timed(request: Callable[[], object], repeat: int) -> tuple[float, float]:
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        request()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def measure(campaign_id: int, repeat: int) -> None:
    from django.contrib.auth.models import User
    from django.test import Client
    from django.test.utils import setup_test_environment

    from prb_annotate.audit.cache import forget_audits
    from prb_annotate.models import Campaign

    setup_test_environment()  # lets the test client's host in
    campaign = Campaign.objects.get(pk=campaign_id)
    client = Client()
    client.force_login(User.objects.create(username="bench-manager", is_staff=True))

    for name, url in (
        ("audit page", f"/campaigns/{campaign_id}/audit/"),
        ("dashboard ", f"/campaigns/{campaign_id}/"),
    ):

        def get(url: str = url) -> None:
            response = client.get(url)
            assert response.status_code == 200, response.status_code

        def cold(get: Callable[[], None] = get) -> None:
            forget_audits(campaign)
            get()

        get()  # the first request also warms Python's imports and the template cache
        cold_wall, cold_cpu = timed(cold, repeat)
        warm_wall, warm_cpu = timed(get, repeat)
        print(
            f"  {name}  cold {cold_wall:6.3f} s (CPU {cold_cpu:.3f})   "
            f"warm {warm_wall * 1000:6.1f} ms (CPU {warm_cpu * 1000:.1f})   "
            f"medians of {repeat}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", default="3000,30000", help="comma-separated sizes")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--database-url", help="an empty database to fill (default: a temporary SQLite file)"
    )
    parser.add_argument("--one", nargs=2, metavar=("DB", "PAIRS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        # A child process per size: a fresh database connection, cache and memory each.
        database_url, size = args.one[0], int(args.one[1])
        setup_django(database_url)
        started = time.perf_counter()
        campaign_id = fill(size)
        vary_answers()
        filled = time.perf_counter() - started
        print(f"{size:,} pairs x 3 annotators (filled in {filled:.0f} s):", flush=True)
        measure(campaign_id, args.repeat)
        return
    sizes = [int(value) for value in args.pairs.split(",")]
    if args.database_url and len(sizes) > 1:
        parser.error("--database-url takes one size: the database is filled once")
    for size in sizes:
        with tempfile.TemporaryDirectory() as work:
            database_url = args.database_url or f"sqlite:///{work}/bench.sqlite3"
            command = [sys.executable, __file__, "--one", database_url, str(size)]
            subprocess.run([*command, "--repeat", str(args.repeat)], check=True)


if __name__ == "__main__":
    main()
