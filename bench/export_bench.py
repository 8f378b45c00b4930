"""Export benchmark: N validated pairs (k = 3 annotations each) as JSONL and as Parquet.

    python bench/export_bench.py                      # 20,000 and 100,000 pairs
    python bench/export_bench.py --pairs 5000         # a quick look
    python bench/export_bench.py --pairs 100000 --database-url postgres://.../empty_db

Each size gets its own SQLite file in a temporary folder (or the empty database given with
--database-url, which is migrated and filled), filled with bulk inserts. Every export then runs
in a fresh Python process, which prints its wall time, its CPU time and its workers', and its
peak RSS (ru_maxrss) next to the RSS it had before exporting, with the largest worker's peak,
so the figures do not include the filling and one format does not inherit the other's peak.
``--workers`` is passed to the export as ``manage.py export_split`` passes it (default: one
per CPU core, at most 4; 1 exports in one process). Target: under 15 s per export at 100,000
pairs, with memory that does not grow with the number of pairs.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TEXT = (
    "A considered answer that weighs the user's stated preferences against general advice, "
    "with concrete steps, caveats and an example or two. "
)


def setup_django(database_url: str) -> None:
    os.environ["DATABASE_URL"] = database_url
    # A server on its own database refuses to start without a key; any will do for a bench.
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-never-used-by-a-server")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "prb_annotate.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def fill(pairs: int) -> int:
    """A dataset of ``pairs`` pairs and a campaign where three annotators validated each."""
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import transaction
    from django.utils import timezone

    from prb_annotate.campaigns.lifecycle import add_member, create_campaign
    from prb_annotate.datasets.pair_writers import prefer_lz4_compression
    from prb_annotate.models import Annotation, Assignment, Dataset

    call_command("migrate", verbosity=0)
    categories = [
        "Art_and_Entertainment",
        "Lifestyle_and_Personal_Development",
        "Society_and_Culture",
    ]
    dataset = Dataset.objects.create(name=f"bench-{pairs}", source="bench")
    batch = 5000
    for start in range(0, pairs, batch):
        # Stored as import_pairs stores them (LZ4 on PostgreSQL), so that reading them back
        # costs what it costs after a real import.
        with transaction.atomic():
            prefer_lz4_compression()
            create_pairs(dataset, range(start, min(start + batch, pairs)), categories)
    campaign = create_campaign(dataset, f"bench-{pairs}", k=3, seed=1)
    users = [User.objects.create(username=f"annotator{n}") for n in range(3)]
    for user in users:
        add_member(campaign, user)
    now = timezone.now()
    criteria = list(campaign.quality_criteria)
    items = list(campaign.items.values_list("pk", flat=True))
    for n, user in enumerate(users):
        for start in range(0, len(items), batch):
            with transaction.atomic():
                rows = Assignment.objects.bulk_create(
                    [
                        Assignment(
                            campaign=campaign,
                            item_id=item_id,
                            annotator=user,
                            chosen_position="AB"[(item_id + n) % 2],
                            status=Assignment.Status.SUBMITTED,
                            reserved_at=now,
                            expires_at=now,
                            submitted_at=now,
                        )
                        for item_id in items[start : start + batch]
                    ]
                )
                Annotation.objects.bulk_create(
                    [
                        Annotation(
                            assignment=row,
                            quality_chosen=dict.fromkeys(criteria, 5),
                            quality_rejected=dict.fromkeys(criteria, 4),
                            rubric_fit="chosen",
                            differentiator="preference",
                            confidence="high",
                            time_on_task_ms=30_000,
                            client_token=f"{user.pk}-{row.item_id}",
                        )
                        for row in rows
                    ]
                )
    return campaign.pk


def create_pairs(dataset: Any, indexes: range, categories: list[str]) -> None:
    from prb_annotate.models import Pair

    Pair.objects.bulk_create(
        [
            Pair(
                dataset=dataset,
                external_id=f"r{index:07d}",
                category=categories[index % 3],
                question=f"Question {index}: how should I plan a trip that suits me?",
                profile=[
                    {"id": f"r{index}-{n}", "category": categories[index % 3], "text": TEXT}
                    for n in range(3)
                ],
                rubric_aspects=[
                    {"aspect": f"aspect {n}", "evidence": "past posts", "reason": "stated"}
                    for n in range(3)
                ],
                narrative=TEXT,
                chosen=f"{TEXT * 6} ({index})",
                rejected=f"{TEXT * 5} ({index})",
                extra={"source_id": index},
                content_hash=f"{index:064d}",
            )
            for index in indexes
        ]
    )


def export_once(database_url: str, campaign_id: int, fmt: str, out: Path, workers: int) -> dict:
    setup_django(database_url)
    from prb_annotate.exports.export import export_split
    from prb_annotate.models import Campaign

    campaign = Campaign.objects.select_related("dataset").get(pk=campaign_id)
    before = current_rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    manifest = export_split(
        campaign, out, subset="validated", fmt=fmt, with_validation=True, workers=workers
    )
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "format": fmt,
        "pairs": manifest["counts"]["exported_pairs"],
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "worker_cpu_seconds": round(children.ru_utime + children.ru_stime, 2),
        "rss_before_mb": round(before),
        "peak_rss_mb": round(rss_mb()),
        # ru_maxrss of the children is the largest single worker's peak.
        "worker_peak_rss_mb": round(children.ru_maxrss / 1024),
        "bytes": sum(entry["bytes"] for entry in manifest["files"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", default="20000,100000", help="comma-separated sizes")
    parser.add_argument("--formats", default="jsonl,parquet")
    parser.add_argument(
        "--repeat", type=int, default=1, help="exports per format (the median is printed too)"
    )
    parser.add_argument(
        "--database-url", help="an empty database to fill (default: a temporary SQLite file)"
    )
    parser.add_argument("--workers", type=int, help="worker processes (default: one per CPU core)")
    parser.add_argument("--fill", nargs=2, metavar=("DB", "PAIRS"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--export", nargs=4, metavar=("DB", "CAMPAIGN", "FORMAT", "WORKERS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()

    # The two hidden modes run in child processes, so each measurement starts fresh.
    if args.fill:
        setup_django(args.fill[0])
        print(fill(int(args.fill[1])))
        return
    if args.export:
        database_url, campaign_id, fmt, workers = args.export
        with tempfile.TemporaryDirectory() as work:
            result = export_once(
                database_url, int(campaign_id), fmt, Path(work) / "out", int(workers)
            )
            print(json.dumps(result, allow_nan=False))
        return

    sys.path.insert(0, str(ROOT))
    from prb_annotate.exports.processes import default_workers

    workers = args.workers or default_workers()
    print(f"workers: {workers} (host has {os.cpu_count()} CPUs)", flush=True)
    sizes = [int(value) for value in args.pairs.split(",")]
    if args.database_url and len(sizes) > 1:
        parser.error("--database-url takes one size: the database is filled once")
    for size in sizes:
        with tempfile.TemporaryDirectory() as work:
            database_url = args.database_url or f"sqlite:///{work}/bench.sqlite3"
            started = time.perf_counter()
            filled = child("--fill", database_url, str(size))
            campaign_id = int(filled.split()[-1])
            print(f"{size:,} pairs: filled in {time.perf_counter() - started:.0f} s", flush=True)
            for fmt in args.formats.split(","):
                seconds = []
                for _ in range(args.repeat):
                    output = child("--export", database_url, str(campaign_id), fmt, str(workers))
                    result = json.loads(output.strip().splitlines()[-1])
                    seconds.append(result["seconds"])
                    print(
                        f"  {fmt:8} {result['pairs']:>7,} pairs  {result['seconds']:6.1f} s  "
                        f"(CPU {result['cpu_seconds']:.1f} s + workers "
                        f"{result['worker_cpu_seconds']:.1f} s)  "
                        f"peak RSS {result['peak_rss_mb']:5} MB "
                        f"(before export {result['rss_before_mb']} MB, largest worker "
                        f"{result['worker_peak_rss_mb']} MB)  "
                        f"{result['bytes'] / 2**20:7.1f} MB written",
                        flush=True,
                    )
                if args.repeat > 1:
                    print(f"  {fmt:8} median {statistics.median(seconds):.1f} s", flush=True)


def child(*args: str) -> str:
    run = subprocess.run(
        [sys.executable, __file__, *args], check=True, capture_output=True, text=True
    )
    return run.stdout


if __name__ == "__main__":
    main()
