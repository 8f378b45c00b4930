"""The annotator page, submit to next, in one process through Django's test client, on SQLite and
PostgreSQL: what the page costs per item and what its progress figures cost within that.

    python bench/annotator_page_bench.py                       # both databases, 3,000 pairs
    python bench/annotator_page_bench.py --pairs 3000 30000 --databases sqlite

Each (database, pairs) run gets a fresh database, a campaign over synthetic pairs (k = 3) already
60 % annotated, and annotators who submit through the page form and open the next item, as the
browser does. Printed, as medians and 95th percentiles: the submit (POST, answered by a redirect)
and the next page (GET) in ms, the queries of the next page, and, measured apart, the progress
figures the page shows (``annotator_standing``, one statement) next to the plain count of done
items that the page used before it showed what is available.
"""

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import annotate_load  # a sibling script, found through the path set just above

ROOT = annotate_load.ROOT
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/prb_bench_page"


def page_form(campaign: Any, client_token: str) -> dict[str, str]:
    data = {f"quality_A_{c}": "5" for c in campaign.quality_criteria}
    data.update({f"quality_B_{c}": "4" for c in campaign.quality_criteria})
    data.update(
        rubric_fit="A",
        differentiator="preference",
        confidence="high",
        client_token=client_token,
        time_on_task_ms="9000",
    )
    return data


def timed(samples: list[float], action: Any) -> Any:
    started = time.perf_counter()
    result = action()
    samples.append((time.perf_counter() - started) * 1000)
    return result


def child(options: dict[str, Any]) -> dict[str, Any]:
    annotate_load.setup_django(options["url"])
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from prb_annotate.campaigns.progress import annotator_progress, annotator_standing
    from prb_annotate.models import Campaign

    campaign_id, _ = annotate_load.build_campaign(options["pairs"], 16)
    annotate_load.prefill(campaign_id, 0.6)
    campaign = Campaign.objects.get(pk=campaign_id)
    users = list(User.objects.filter(username__startswith="load").order_by("pk")[:4])
    clients = []
    for user in users:
        client = Client()
        client.force_login(user)
        clients.append(client)
    page_url = reverse("annotate", args=[campaign_id])
    times: dict[str, list[float]] = {"submit": [], "next": [], "standing": [], "count": []}
    next_queries: list[int] = []
    for client in clients:  # warm-up: every annotator holds an item
        assert client.get(page_url).status_code == 200
    for index in range(options["cycles"]):
        client, user = clients[index % len(clients)], users[index % len(users)]
        page = client.get(page_url).content.decode()
        submit_url = re.search(r'action="([^"]+/submit/)"', page).group(1)  # type: ignore[union-attr]
        data = page_form(campaign, uuid.uuid4().hex)
        response = timed(times["submit"], lambda: client.post(submit_url, data))  # noqa: B023
        assert response.status_code == 302, response.status_code
        with CaptureQueriesContext(connection) as queries:
            response = timed(times["next"], lambda: client.get(page_url))  # noqa: B023
        assert response.status_code == 200, response.status_code
        next_queries.append(len(queries))
        timed(times["standing"], lambda: annotator_standing(campaign, user))  # noqa: B023
        timed(times["count"], lambda: annotator_progress(campaign, user))  # noqa: B023
    result: dict[str, Any] = {"queries": statistics.median(next_queries)}
    for name, samples in times.items():
        result[name] = (
            statistics.median(samples),
            annotate_load.percentile(samples, 0.95),
        )
    return result


def run(database: str, pairs: int, cycles: int, folder: str, pg_url: str) -> dict[str, Any]:
    sqlite_path = Path(folder) / f"page_{pairs}.sqlite3"
    options = {"pairs": pairs, "cycles": cycles}
    result: dict[str, Any] = annotate_load.run_on_fresh_database(
        __file__, database, sqlite_path, pg_url, options
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description="The annotator page: submit to next.")
    parser.add_argument(
        "--databases", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"]
    )
    parser.add_argument("--pairs", type=int, nargs="+", default=[3000])
    parser.add_argument("--cycles", type=int, default=100)
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child)), allow_nan=False))
        return
    print(
        f"calibration: a 5M-step Python loop takes {annotate_load.calibration_seconds():.2f} s "
        "on this machine now",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="prb_annotator_page_") as folder:
        for database in args.databases:
            for pairs in args.pairs:
                row = run(database, pairs, args.cycles, folder, args.pg_url)
                figures = "  ".join(
                    f"{name} p50 {row[name][0]:6.1f} p95 {row[name][1]:6.1f} ms"
                    for name in ("submit", "next", "standing", "count")
                )
                print(
                    f"{database:<9} {pairs:>6} pairs  next page queries {row['queries']:4.1f}  "
                    f"{figures}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
