"""Set-up shared by the export and API tests: a dataset imported from a file with every record
shape, and a campaign whose pairs end validated, excluded or undecided through real submits."""

import json

from django.contrib.auth.models import User

from prb_annotate.campaigns.annotating import Answers, skip, submit
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member, create_campaign, set_status
from prb_annotate.datasets.importing import import_upload
from prb_annotate.models import Campaign, Dataset

# Byte order puts upper case first: "Zeta" < "alpha". PostgreSQL's default collation would not.
ART_IDS = ["Zeta-1", "alpha-2", "alpha-10", "Beta-3"]
LIFE_IDS = ["life-1", "life-2", "life-3", "life-4"]
SOCIETY_IDS = ["soc-1", "soc-2"]
PLAIN_ID = 7  # a plain-shape record whose id is a JSON number and which has no category
GOLD_ID = "gold-1"
EXCLUDED_IDS = {"alpha-10", "life-2"}  # annotators say the difference is quality
UNDECIDED_IDS = {"life-4", "soc-2"}  # the third annotator skips them: too few annotations


def official(external_id: str, category: str, **extra: object) -> dict:
    return {
        "id": external_id,
        "question": f"What should I read next? ({external_id})",
        "profile": [
            {"id": f"{external_id}-p1", "category": category, "text": "I love long novels."},
            {"id": f"{external_id}-p2", "category": category, "text": "Ünïcode — fine."},
        ],
        "rubric_aspects": [
            {"aspect": "depth", "evidence": "long posts", "reason": "likes detail"},
        ],
        "narrative": f"I want something deep ({external_id}).",
        "category": category,
        "chosen": f"A detailed answer for {external_id}.",
        "rejected": f"A short answer for {external_id}.",
        **extra,
    }


def records() -> list[dict]:
    rows = [official(i, "Art_and_Entertainment") for i in ART_IDS]
    rows += [official(i, "Lifestyle_and_Personal_Development") for i in LIFE_IDS]
    rows += [official(i, "Society & Culture") for i in SOCIETY_IDS]
    # Unknown fields, nested and in no particular key order, are given back unchanged.
    rows[0]["source"] = {"z": 1, "a": [1, 2, {"y": None, "b": "x"}]}
    rows[1]["score"] = 0.5
    rows.append({"id": PLAIN_ID, "prompt": "Plain prompt?", "chosen": "Yes.", "rejected": "No."})
    rows.append(official(GOLD_ID, "Art_and_Entertainment"))
    return rows


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode()


def import_dataset(name: str = "prb") -> Dataset:
    return import_upload(jsonl(records()), "prb.jsonl", name).dataset


def answers(external_id: str, campaign: Campaign) -> Answers:
    criteria = campaign.quality_criteria
    return Answers(
        quality_chosen=dict.fromkeys(criteria, 5),
        quality_rejected=dict.fromkeys(criteria, 4),
        rubric_fit="chosen",
        differentiator="quality" if external_id in EXCLUDED_IDS else "preference",
        confidence="high",
        comment=f"checked {external_id}",
    )


def annotate(campaign: Campaign, users: list[User]) -> None:
    """Every user works through the queue; the third skips the UNDECIDED_IDS pairs."""
    for index, user in enumerate(users):
        while (assignment := next_assignment(campaign, user)) is not None:
            external_id = assignment.item.pair.external_id
            if index == 2 and external_id in UNDECIDED_IDS:
                skip(assignment.pk, user, reason="not sure")
                continue
            submit(
                assignment.pk,
                user,
                answers(external_id, campaign),
                client_token=f"{user.pk}-{assignment.pk}",
                time_on_task_ms=1000 + assignment.pk,
            )


def annotated_campaign(dataset: Dataset, users: list[User], name: str = "export") -> Campaign:
    campaign = create_campaign(dataset, name, k=3, seed=3, gold_pair_ids=[GOLD_ID], gold_rate=0.2)
    set_status(campaign, Campaign.Status.ACTIVE)
    for user in users:
        add_member(campaign, user)
    annotate(campaign, users)
    campaign.refresh_from_db()
    return campaign
