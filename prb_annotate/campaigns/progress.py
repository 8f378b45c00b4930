"""How far a campaign has come: counts are queries over assignment and annotation rows."""

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.db.models import Count, F, Q
from django.utils import timezone

from prb_annotate.campaigns.assignment import occupying
from prb_annotate.models import Annotation, Assignment, Campaign, CampaignItem, Membership


@dataclass(frozen=True)
class AnnotatorProgress:
    user_id: int
    username: str
    participant_id: str
    submitted: int
    skipped: int
    reserved: bool  # holds a live reservation now
    median_seconds: float | None  # median time on task of current annotations
    gold_scored: int  # gold items with expected answers that this annotator submitted
    gold_correct: int

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_correct / self.gold_scored if self.gold_scored else None


@dataclass(frozen=True)
class CampaignProgress:
    """Regular items by state; gold items are counted apart since they have no target."""

    items_total: int
    items_complete: int  # submitted annotations reached the item's target
    items_in_progress: int  # some submitted or reserved, not complete
    items_untouched: int
    gold_items: int
    annotations_submitted: int  # submitted assignments, regular and gold
    live_reservations: int
    annotators: list[AnnotatorProgress]

    @property
    def percent_complete(self) -> float:
        return 100.0 * self.items_complete / self.items_total if self.items_total else 0.0


def campaign_progress(
    campaign: Campaign, *, now: datetime | None = None, median_times: bool = True
) -> CampaignProgress:
    """The campaign's figures now. ``median_times=False`` leaves ``median_seconds`` empty: it
    reads every answer's time, and the dashboard has it from quality control already."""
    now = now or timezone.now()
    submitted = Q(assignments__status=Assignment.Status.SUBMITTED)
    items = (
        CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.REGULAR)
        .annotate(
            n_submitted=Count("assignments", filter=submitted),
            n_occupied=Count("assignments", filter=occupying(now, "assignments__")),
        )
        .values("n_submitted", "n_occupied", "extra_annotations", "replacement_annotations")
        .order_by()
    )
    complete = in_progress = untouched = 0
    for row in items:
        target = (
            campaign.annotations_per_pair
            + row["extra_annotations"]
            + row["replacement_annotations"]
        )
        if row["n_submitted"] >= target:
            complete += 1
        elif row["n_occupied"]:
            in_progress += 1
        else:
            untouched += 1
    gold_items = CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.GOLD).count()
    annotators = _annotator_rows(campaign, now, median_times=median_times)
    return CampaignProgress(
        items_total=complete + in_progress + untouched,
        items_complete=complete,
        items_in_progress=in_progress,
        items_untouched=untouched,
        gold_items=gold_items,
        annotations_submitted=sum(row.submitted for row in annotators),
        live_reservations=sum(row.reserved for row in annotators),
        annotators=annotators,
    )


def _annotator_rows(
    campaign: Campaign, now: datetime, *, median_times: bool
) -> list[AnnotatorProgress]:
    counts = {
        row["annotator_id"]: row
        for row in Assignment.objects.filter(campaign=campaign)
        .values("annotator_id")
        .annotate(
            submitted=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED)),
            skipped=Count("pk", filter=Q(status=Assignment.Status.SKIPPED)),
            live=Count("pk", filter=Q(status=Assignment.Status.RESERVED, expires_at__gt=now)),
        )
        .order_by()
    }
    current = Annotation.objects.filter(
        assignment__campaign=campaign,
        assignment__status=Assignment.Status.SUBMITTED,
        is_current=True,
    )
    times: dict[int, list[int]] = defaultdict(list)
    timed = current.filter(time_on_task_ms__isnull=False) if median_times else current.none()
    for annotator_id, ms in timed.values_list("assignment__annotator_id", "time_on_task_ms"):
        if ms is not None:
            times[annotator_id].append(ms)
    gold_scored: dict[int, int] = defaultdict(int)
    gold_correct: dict[int, int] = defaultdict(int)
    gold_rows = current.filter(
        assignment__item__kind=CampaignItem.Kind.GOLD, assignment__item__gold_answers__isnull=False
    ).annotate(
        annotator_id=F("assignment__annotator_id"), expected=F("assignment__item__gold_answers")
    )
    for annotation in gold_rows:
        expected = annotation.expected or {}
        if not expected:
            continue
        gold_scored[annotation.annotator_id] += 1
        if is_gold_correct(annotation, expected):
            gold_correct[annotation.annotator_id] += 1

    members = (
        Membership.objects.filter(campaign=campaign, role=Membership.Role.ANNOTATOR)
        .select_related("user")
        .order_by("user__username")
    )
    rows = []
    for member in members:
        row = counts.get(member.user_id, {})
        rows.append(
            AnnotatorProgress(
                user_id=member.user_id,
                username=member.user.username,
                participant_id=member.participant_id,
                submitted=row.get("submitted", 0),
                skipped=row.get("skipped", 0),
                reserved=bool(row.get("live", 0)),
                median_seconds=(
                    statistics.median(times[member.user_id]) / 1000
                    if times[member.user_id]
                    else None
                ),
                gold_scored=gold_scored[member.user_id],
                gold_correct=gold_correct[member.user_id],
            )
        )
    return rows


def is_gold_correct(annotation: Annotation, expected: dict[str, str]) -> bool:
    """Whether the annotation gives every expected answer of a gold item."""
    return all(getattr(annotation, key, None) == value for key, value in expected.items())


def annotator_progress(campaign: Campaign, user: User) -> tuple[int, int | None]:
    """(items the user has submitted, the campaign's quota or None)."""
    done = Assignment.objects.filter(
        campaign=campaign, annotator=user, status=Assignment.Status.SUBMITTED
    ).count()
    return done, campaign.quota_per_annotator


def completion_times(
    submissions: Iterable[tuple[int, datetime]], targets: Mapping[int, int]
) -> list[datetime]:
    """When each item became complete: the time of its ``target``-th submission, in order.

    ``submissions`` are (item id, submitted at) of submitted assignments; items that have not
    reached their target are left out.
    """
    times: dict[int, list[datetime]] = defaultdict(list)
    for item_id, submitted_at in submissions:
        times[item_id].append(submitted_at)
    completed = []
    for item_id, target in targets.items():
        submitted = sorted(times.get(item_id, []))
        if target and len(submitted) >= target:
            completed.append(submitted[target - 1])
    return sorted(completed)
