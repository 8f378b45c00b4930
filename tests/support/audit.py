"""Rows for audit tests, made directly with the ORM: campaigns, items, submitted annotations."""

import itertools
from datetime import UTC, datetime, timedelta

from django.contrib.auth.models import User

from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Annotation, Assignment, Campaign, CampaignItem, Dataset, Pair

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
CRITERIA = ["correctness", "relevance", "helpfulness"]
_tokens = itertools.count()


def make_campaign(dataset: Dataset, name: str = "audit", **fields) -> Campaign:
    return Campaign.objects.create(dataset=dataset, name=name, **fields)


def add_item(campaign: Campaign, pair: Pair, **fields) -> CampaignItem:
    return CampaignItem.objects.create(campaign=campaign, pair=pair, **fields)


def annotators(count: int, prefix: str = "rater") -> list[User]:
    return [User.objects.create_user(f"{prefix}{index}") for index in range(1, count + 1)]


def ratings(value, criteria=CRITERIA) -> dict[str, int]:
    """``5`` -> every criterion 5; a dict is taken as is (criteria not named get 5)."""
    if isinstance(value, dict):
        return {criterion: value.get(criterion, 5) for criterion in criteria}
    return dict.fromkeys(criteria, value)


def annotate(
    item: CampaignItem,
    user: User,
    *,
    fit: str = "chosen",
    differentiator: str = "preference",
    chosen=5,
    rejected=5,
    flagged: bool = False,
    position: str = "A",
    time_ms: int = 60_000,
    confidence: str = "high",
    comment: str = "",
) -> Annotation:
    """A submitted assignment with its current annotation, answers in dataset orientation."""
    assignment = Assignment.objects.create(
        campaign=item.campaign,
        item=item,
        annotator=user,
        chosen_position=position,
        status=Assignment.Status.SUBMITTED,
        reserved_at=NOW,
        expires_at=NOW + timedelta(minutes=30),
        submitted_at=NOW + timedelta(minutes=1),
    )
    return Annotation.objects.create(
        assignment=assignment,
        quality_chosen=ratings(chosen),
        quality_rejected=ratings(rejected),
        rubric_fit=fit,
        differentiator=differentiator,
        confidence=confidence,
        flagged=flagged,
        comment=comment,
        time_on_task_ms=time_ms,
        client_token=f"audit-token-{next(_tokens)}",
    )


def annotate_all(item: CampaignItem, users: list[User], answers: list[dict]) -> list[Annotation]:
    """One annotation per (user, answers) pair."""
    return [annotate(item, user, **answer) for user, answer in zip(users, answers, strict=False)]


# Prolific participants get usernames of 33 characters: the widest names a table meets.
NAMES = [f"prolific-5f3c9a0b1e2d4c6a7b8c9d{index:02d}" for index in range(5)]


def long_named_campaign(dataset: Dataset) -> Campaign:
    """Twelve pairs, each annotated by three of five annotators with long names, some of the
    answers slow, some fast, one annotator always answering A."""
    campaign = make_campaign(dataset, seed=3, status=Campaign.Status.ACTIVE)
    users = [User.objects.create_user(name) for name in NAMES]
    for user in users:
        add_member(campaign, user)
    for index, pair in enumerate(dataset.pairs.order_by("external_id")):
        item = add_item(campaign, pair)
        for offset in range(3):
            user = users[(index + offset) % len(users)]
            position = "A" if index % 2 else "B"
            fit = "chosen" if offset != 2 or index % 3 else "rejected"
            annotate(item, user, fit=fit, position=position, time_ms=3000 + 9000 * offset)
    return campaign
