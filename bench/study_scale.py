"""A study at scale: a campaign of N pairs x 3 answers, and what its long work costs.

    python bench/study_scale.py --pairs 50000      # the size of a lab's real study
    python bench/study_scale.py --pairs 2000       # a quick look

Fills a temporary SQLite database (or the empty one given with --database-url) as
bench/export_bench.py does, then times, in this one process: the audit cold (nothing kept) and
warm (kept behind its change stamp), the export zip in each format, the paper zip, and the page
that starts a background job (the median of several POSTs; the job is only queued). Prints one
line of JSON per figure; docs/operations.md quotes them with the machine they ran on.
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.export_bench import fill, setup_django

FORMATS = ("jsonl", "parquet", "csv")


def timed(label: str, work: Any, **extra: Any) -> Any:
    start = time.perf_counter()
    result = work()
    step = {"step": label, "seconds": round(time.perf_counter() - start, 3), **extra}
    print(json.dumps(step, allow_nan=False))
    return result


def job_start_latency(campaign_id: int, repeat: int) -> list[float]:
    """Seconds the job-start page takes to answer (it queues the job and redirects)."""
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client()
    client.force_login(User.objects.create(username="bench-staff", is_staff=True))
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = client.post(f"/campaigns/{campaign_id}/jobs/start/", {"kind": "paper"})
        seconds.append(time.perf_counter() - start)
        assert response.status_code == 302, response.status_code
    return seconds


def measure(campaign_id: int, repeat: int) -> None:
    from prb_annotate.audit.cache import campaign_audit_cached, forget_audits
    from prb_annotate.exports.archive import export_zip
    from prb_annotate.models import Campaign
    from prb_annotate.paper.inputs import paper_zip

    campaign = Campaign.objects.select_related("dataset").get(pk=campaign_id)
    forget_audits(campaign)
    audit = timed("audit cold", lambda: campaign_audit_cached(campaign))
    timed("audit warm", lambda: campaign_audit_cached(campaign))
    for fmt in FORMATS:
        archive, _ = timed(
            f"export zip {fmt}", lambda fmt=fmt: export_zip(campaign, subset="validated", fmt=fmt)
        )
        archive.close()
    timed("paper zip", lambda: paper_zip(campaign, audit))
    seconds = job_start_latency(campaign_id, repeat)
    print(
        json.dumps(
            {
                "step": "job-start page",
                "median_seconds": round(statistics.median(seconds), 4),
                "max_seconds": round(max(seconds), 4),
                "requests": repeat,
            },
            allow_nan=False,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--pairs", type=int, default=50_000)
    parser.add_argument("--requests", type=int, default=20, help="job-start page requests")
    parser.add_argument("--database-url", help="an empty database (default: temporary SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'study.sqlite3'}"
        setup_django(url)
        campaign_id = timed(f"fill {args.pairs} pairs x 3 answers", lambda: fill(args.pairs))
        measure(campaign_id, args.requests)


if __name__ == "__main__":
    main()
