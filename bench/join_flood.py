"""Join floods against a study link, with and without the measures that bound them, in one
process through Django's test client, on SQLite and PostgreSQL.

    python bench/join_flood.py                                  # SQLite, the one-address flood
    python bench/join_flood.py --floods one-address ipv4-24 ipv6-56 --databases sqlite postgres

Each run gets a fresh database and a 52-pair campaign (k = 3): 42 regular pairs (126 slots)
and ten gold items at a gold rate of 0.1. A flood is 130 joins with made-up Prolific ids from
one address, from 130 addresses of one IPv4 /24, or from the /64s of one IPv6 /56. Every
account it is given then loops ``next`` and submit, up to 40 times, as one of two scripts:
*wrong on gold* (a script that happens never to be right on a gold item) or *at chance* (each
answer drawn at random, so right on a gold item one time in twelve: one of three sides and one
of four kinds of difference). The measures: the first items slowed
(``first_reservation_minutes`` at its default, or 0 for off), a network's share of the slots
(``PRB_SLOT_SHARE_PER_NETWORK`` at 0.10, or 1.0 for off) and, in a last run,
Prolific's list (``PROLIFIC_API_TOKEN``; its API answered by the local stand-in of
``tests/support/prolific.py``, the only part that is not the real thing, listing the one real
participant). Printed per run: the accounts made, the regular slots the flood's accounts hold
(submitted or reserved) of 126, how many of them a gold answer proved, and whether a
participant from another network then joins and gets an item.
"""

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import annotate_load  # a sibling script, found through the path set just above

ROOT = annotate_load.ROOT
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/prb_bench_flood"
FLOOD = 130
ROUNDS = 40
REGULAR_PAIRS = 42
GOLD_PAIRS = 10
STUDY = "study-1"
REAL_PID = "5f0c8e1e2b3a4c5d6e7f8091"
FLOODS = {
    "one-address": ["198.51.100.7"] * FLOOD,
    "ipv4-24": [f"198.51.100.{host}" for host in range(1, FLOOD + 1)],
    "ipv6-56": [f"2001:db8:1:{subnet:x}::1" for subnet in range(FLOOD)],
}
# (name, first items slowed, a network's share of the slots, Prolific's list, script)
RUNS = (
    ("no first-items rule, no slot share, wrong on gold", False, False, False, "wrong"),
    ("first items slowed, no slot share, wrong on gold", True, False, False, "wrong"),
    ("no first-items rule, no slot share, at chance", False, False, False, "chance"),
    ("first items slowed, no slot share, at chance", True, False, False, "chance"),
    ("slot share alone, at chance", False, True, False, "chance"),
    ("first items slowed and slot share, at chance", True, True, False, "chance"),
    ("Prolific's list, at chance", True, True, True, "chance"),
)
# "No slot share" lets one network hold every slot (PRB_SLOT_SHARE_PER_NETWORK = 1.0).
SLOT_SHARE = 0.10


def join(campaign: Any, pid: str, address: str) -> tuple[Any, int]:
    from django.test import Client
    from django.urls import reverse

    client = Client()
    params = {"PROLIFIC_PID": pid, "STUDY_ID": STUDY, "SESSION_ID": f"s-{pid}"}
    url = reverse("join", args=[campaign.invite_token])
    return client, client.post(url, params, REMOTE_ADDR=address).status_code


def answer(assignment: Any, script: str, rng: random.Random) -> dict[str, str]:
    from tests.support.campaigns import form_data

    if script == "chance":
        fit = rng.choice(["A", "B", "tie"])
        kind = rng.choice(["preference", "quality", "both", "none"])
        return form_data(assignment.campaign, rubric_fit=fit, differentiator=kind)
    wrong = "B" if assignment.chosen_position == "A" else "A"
    fit = wrong if assignment.item.kind == "gold" else "A"
    return form_data(assignment.campaign, rubric_fit=fit)


def run_flood(campaign: Any, addresses: list[str], script: str) -> dict[str, Any]:
    from prb_annotate.campaigns.annotating import answers_from_form, submit
    from prb_annotate.campaigns.assignment import next_assignment
    from prb_annotate.models import Assignment, InviteJoin, Membership

    statuses = [join(campaign, f"forged{i}", address)[1] for i, address in enumerate(addresses)]
    users = [row.user for row in InviteJoin.objects.filter(campaign=campaign)]
    rng = random.Random(1)
    for user in users:
        for _ in range(ROUNDS):
            assignment = next_assignment(campaign, user)
            if assignment is None:
                break
            data = answer(assignment, script, rng)
            form = answers_from_form(data, assignment=assignment)
            submit(assignment.pk, user, form, client_token=str(data["client_token"]))
    held = Assignment.objects.filter(
        campaign=campaign,
        annotator__in=users,
        item__kind="regular",
        status__in=["submitted", "reserved"],
    ).count()
    proven = Membership.objects.filter(campaign=campaign, user__in=users, proven_at__isnull=False)
    _client, status = join(campaign, REAL_PID, "203.0.113.20")
    gets = status == 302 and next_assignment(campaign, _real_user(campaign)) is not None
    return {
        "accounts": len(users),
        "refused": len(statuses) - statuses.count(302),
        "held": held,
        "proven": proven.count(),
        "real_join": status,
        "real_gets_item": gets,
    }


def _real_user(campaign: Any) -> Any:
    from prb_annotate.models import Membership

    return Membership.objects.get(campaign=campaign, participant_id=REAL_PID).user


def child(options: dict[str, Any]) -> list[dict[str, Any]]:
    annotate_load.setup_django(options["url"])
    from django.test import override_settings

    from prb_annotate.campaigns.lifecycle import create_campaign
    from prb_annotate.models import Dataset
    from tests.conftest import make_pairs
    from tests.support.prolific import TOKEN, listed, prolific_stand_in

    rows = []
    for index, (name, slowed, share, prolific, script) in enumerate(RUNS):
        dataset = Dataset.objects.create(name=f"flood-{index}")
        make_pairs(dataset, REGULAR_PAIRS + GOLD_PAIRS)
        gold = [f"p{number:04d}" for number in range(REGULAR_PAIRS, REGULAR_PAIRS + GOLD_PAIRS)]
        campaign = create_campaign(
            dataset,
            f"flood {index}",
            k=3,
            seed=1,
            activate=True,
            gold_pair_ids=gold,
            gold_rate=0.1,
            prolific_study_id=STUDY,
            first_reservation_minutes=10 if slowed else 0,
        )
        slot_share = override_settings(PRB_SLOT_SHARE_PER_NETWORK=SLOT_SHARE if share else 1.0)
        if prolific:
            with (
                slot_share,
                prolific_stand_in(listed(REAL_PID)) as base,
                override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=base),
            ):
                figures = run_flood(campaign, FLOODS[options["flood"]], script)
        else:
            with slot_share:
                figures = run_flood(campaign, FLOODS[options["flood"]], script)
        rows.append({"run": name, **figures})
    return rows


def run(database: str, flood: str, folder: str, pg_url: str) -> list[dict[str, Any]]:
    sqlite_path = Path(folder) / f"flood_{flood}.sqlite3"
    result: list[dict[str, Any]] = annotate_load.run_on_fresh_database(
        __file__, database, sqlite_path, pg_url, {"flood": flood}
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description="Join floods and the measures that bound them.")
    parser.add_argument(
        "--databases", nargs="+", choices=["sqlite", "postgres"], default=["sqlite"]
    )
    parser.add_argument("--floods", nargs="+", choices=list(FLOODS), default=["one-address"])
    parser.add_argument("--pg-url", default=DEFAULT_PG_URL)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child)), allow_nan=False))
        return
    slots = REGULAR_PAIRS * 3
    with tempfile.TemporaryDirectory(prefix="prb_join_flood_") as folder:
        for database in args.databases:
            for flood in args.floods:
                for row in run(database, flood, folder, args.pg_url):
                    real = (
                        "gets an item"
                        if row["real_gets_item"]
                        else f"gets none ({row['real_join']})"
                    )
                    print(
                        f"{database:<8} {flood:<11} {row['run']:<50} "
                        f"accounts {row['accounts']:>3} of {FLOOD}  "
                        f"slots held {row['held']:>3} of {slots}  proven {row['proven']:>2}  "
                        f"real participant {real}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
