"""How far a campaign has come: counts are queries over assignment and annotation rows."""

import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import pandas as pd
from django.contrib.auth.models import User
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from prb_annotate.audit.cache import cached
from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.audit.exclusions import campaign_quality, sync_slots_for
from prb_annotate.campaigns.assignment import (
    GATE_HOLDS,
    GOLD_SPENT,
    QUALIFYING,
    SCREENED_OUT,
    held_back,
    occupying,
)
from prb_annotate.db.plainsql import db_time, fetch
from prb_annotate.models import (
    RAISED_SLOTS_SQL,
    Annotation,
    Assignment,
    Campaign,
    CampaignItem,
    Membership,
)


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
    # Slots added because answers left the audit: those taken by a submitted answer beyond
    # k (+ split-vote extras), and those still open (being annotated, or waiting).
    replacement_slots_filled: int = 0
    replacement_slots_open: int = 0
    # Pairs whose answers left the audit and that lack answers for their verdict
    # (``audit.exclusions.pairs_short_of_answers``); None when not counted.
    pairs_short_of_answers: int | None = None

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
    complete = in_progress = untouched = filled = open_slots = 0
    for row in items:
        base = campaign.annotations_per_pair + row["extra_annotations"]
        replacements = row["replacement_annotations"]
        if row["n_submitted"] >= base + replacements:
            complete += 1
        elif row["n_occupied"]:
            in_progress += 1
        else:
            untouched += 1
        taken = min(replacements, max(row["n_submitted"] - base, 0))
        filled += taken
        open_slots += replacements - taken
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
        replacement_slots_filled=filled,
        replacement_slots_open=open_slots,
    )


def assignment_counts(campaign: Campaign, now: datetime) -> dict[int, dict[str, Any]]:
    """Per annotator of the campaign: items ``submitted``, ``skipped``, ``live`` reservations,
    and the last ``reserved_at`` and ``submitted_at`` (None when there is none)."""
    return {
        row["annotator_id"]: row
        for row in Assignment.objects.filter(campaign=campaign)
        .values("annotator_id")
        .annotate(
            submitted=Count("pk", filter=Q(status=Assignment.Status.SUBMITTED)),
            skipped=Count("pk", filter=Q(status=Assignment.Status.SKIPPED)),
            live=Count("pk", filter=Q(status=Assignment.Status.RESERVED, expires_at__gt=now)),
            reserved_at=Max("reserved_at"),
            submitted_at=Max("submitted_at"),
        )
        .order_by()
    }


def _annotator_rows(
    campaign: Campaign, now: datetime, *, median_times: bool
) -> list[AnnotatorProgress]:
    counts = assignment_counts(campaign, now)
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

    rows = []
    for user_id, username, participant_id in _annotators(campaign, set(counts)):
        row = counts.get(user_id, {})
        rows.append(
            AnnotatorProgress(
                user_id=user_id,
                username=username,
                participant_id=participant_id,
                submitted=row.get("submitted", 0),
                skipped=row.get("skipped", 0),
                reserved=bool(row.get("live", 0)),
                median_seconds=(
                    statistics.median(times[user_id]) / 1000 if times[user_id] else None
                ),
                gold_scored=gold_scored[user_id],
                gold_correct=gold_correct[user_id],
            )
        )
    return rows


def _annotators(campaign: Campaign, answering: set[int]) -> list[tuple[int, str, str]]:
    """(user id, username, Prolific id) of the campaign's annotators, by username: its
    annotator members, and whoever else has answers in it (the annotators of answers imported
    into an external campaign are accounts with answers and no membership)."""
    members = Membership.objects.filter(campaign=campaign, role=Membership.Role.ANNOTATOR)
    found = {
        user_id: (username, participant_id)
        for user_id, username, participant_id in members.values_list(
            "user_id", "user__username", "participant_id"
        )
    }
    managers = set(
        Membership.objects.filter(campaign=campaign, role=Membership.Role.MANAGER).values_list(
            "user_id", flat=True
        )
    )
    others = answering - set(found) - managers
    for user_id, username in User.objects.filter(pk__in=others).values_list("pk", "username"):
        found[user_id] = (username, "")
    rows = [(user_id, name, pid) for user_id, (name, pid) in found.items()]
    return sorted(rows, key=lambda row: row[1])


def is_gold_correct(annotation: Annotation, expected: dict[str, str]) -> bool:
    """Whether the annotation gives every expected answer of a gold item."""
    return all(getattr(annotation, key, None) == value for key, value in expected.items())


# An annotator's standing. An item is *theirs* once they hold any row on it other than an
# expired one (submitted, skipped or reserved): it never comes to them again as a new item. The
# regular items that are not theirs are either *full* (every slot taken by submitted answers and
# live reservations) or open to them: open = all - theirs - (full - full and theirs).
#
# The annotator's own figures are read through their own rows (an index range each). The number
# of full items is campaign-wide, the same for every annotator, and it is the one figure that
# grows with the campaign: it groups every row that occupies a slot. The annotation page may
# take it from a per-process copy up to FULL_ITEMS_TTL_S old (the bar's "available" then lags
# others' work by that much); the completion and home pages always count afresh.
OWN_TEMPLATE = """
SELECT
  (SELECT COUNT(*) FROM prb_annotate_assignment
   WHERE campaign_id = %s AND annotator_id = %s AND status = 'submitted'),
  (SELECT COUNT(*) FROM prb_annotate_assignment
   WHERE campaign_id = %s AND annotator_id = %s AND status = 'reserved'),
  (SELECT COUNT(*) FROM prb_annotate_campaignitem WHERE campaign_id = %s AND kind = 'regular'),
  (SELECT COUNT(*) FROM prb_annotate_assignment a
   JOIN prb_annotate_campaignitem i ON i.id = a.item_id
   WHERE a.campaign_id = %s AND a.annotator_id = %s AND a.status <> 'expired'
     AND i.kind = 'regular'),
  tf.full_items, tf.held_items
FROM (
    SELECT COUNT(*) AS full_items,
           COALESCE(SUM(CASE WHEN t.submitted < %s + t.extra THEN 1 ELSE 0 END), 0) AS held_items
    FROM (
        SELECT {raised} AS extra,
               SUM(CASE WHEN o.status = 'submitted' THEN 1 ELSE 0 END) AS submitted
        FROM prb_annotate_assignment m
        JOIN prb_annotate_campaignitem i ON i.id = m.item_id
        JOIN prb_annotate_assignment o ON o.item_id = m.item_id
        WHERE m.campaign_id = %s AND m.annotator_id = %s AND m.status <> 'expired'
          AND i.kind = 'regular'
          AND (o.status = 'submitted' OR (o.status = 'reserved' AND o.expires_at > %s))
        GROUP BY m.item_id, i.extra_annotations, i.replacement_annotations
        HAVING COUNT(*) >= %s + {raised}
    ) t
) tf
"""
# Full regular items and, among them, those still short of submitted answers (some slots held
# by live reservations). Items whose target the audit raised are few and read from their item
# rows; joining every group to its item instead would cost more than all the rest.
FULL_TEMPLATE = """
SELECT plain.full_items, plain.held_items, raised.full_items, raised.held_items
FROM (
    SELECT COUNT(*) AS full_items,
           COALESCE(SUM(CASE WHEN g.submitted < %s THEN 1 ELSE 0 END), 0) AS held_items
    FROM (
        SELECT item_id,
               COUNT(*) AS occupied,
               SUM(CASE WHEN status = 'submitted' THEN 1 ELSE 0 END) AS submitted
        FROM prb_annotate_assignment
        WHERE campaign_id = %s
          AND (status = 'submitted' OR (status = 'reserved' AND expires_at > %s))
          AND item_id NOT IN (
              SELECT id FROM prb_annotate_campaignitem
              WHERE campaign_id = %s
                AND (kind <> 'regular' OR extra_annotations + replacement_annotations > 0))
        GROUP BY item_id
    ) g
    WHERE g.occupied >= %s
) plain CROSS JOIN (
    SELECT COUNT(*) AS full_items,
           COALESCE(SUM(CASE WHEN r.submitted < %s + r.extra THEN 1 ELSE 0 END), 0) AS held_items
    FROM (
        SELECT {raised} AS extra,
               SUM(CASE WHEN a.status = 'submitted'
                             OR (a.status = 'reserved' AND a.expires_at > %s)
                   THEN 1 ELSE 0 END) AS occupied,
               SUM(CASE WHEN a.status = 'submitted' THEN 1 ELSE 0 END) AS submitted
        FROM prb_annotate_campaignitem i
        JOIN prb_annotate_assignment a ON a.item_id = i.id
        WHERE i.campaign_id = %s AND i.kind = 'regular' AND {raised} > 0
        GROUP BY i.id, i.extra_annotations, i.replacement_annotations
    ) r
    WHERE r.occupied >= %s + r.extra
) raised
"""
OWN_SQL = OWN_TEMPLATE.format(raised=RAISED_SLOTS_SQL)
FULL_SQL = FULL_TEMPLATE.format(raised=RAISED_SLOTS_SQL)
FULL_ITEMS_TTL_S = 15.0
# (campaign id, invite token, k) -> (monotonic time, full items, held items). The invite token
# is random per campaign, so an id reused by another database never finds a stale copy.
_full_items: dict[tuple[int, str, int], tuple[float, int, int]] = {}
_full_items_lock = threading.Lock()

# ``AnnotatorStanding.held`` when the campaign itself, not a rule about the member, keeps its
# items from them: its status.
CAMPAIGN_CLOSED = Campaign.Status.CLOSED.value
CAMPAIGN_PAUSED = Campaign.Status.PAUSED.value
CAMPAIGN_DRAFT = Campaign.Status.DRAFT.value


@dataclass(frozen=True)
class AnnotatorStanding:
    """Where one annotator stands in a campaign, as their own pages show it.

    ``available`` is what they can reach from here: what they did, the item in hand and the
    regular items with a free slot for them now (capped by the quota). It can shrink while
    they work, as others fill the open items; it never counts an item twice.
    """

    done: int  # items they submitted, gold ones included
    in_hand: bool  # they hold a reservation (the item on their page)
    open_items: int  # regular items not theirs with a free slot now
    held_items: int  # regular items not theirs, incomplete, every free slot reserved by others
    quota: int | None
    # A rule of the queue about this member that keeps the open items from them
    # (``assignment.held_back``), or the status of a campaign that is not active (``CAMPAIGN_*``
    # above); ``member_standing`` applies them. None: nothing keeps the open items back.
    held: str | None = None

    @property
    def quota_reached(self) -> bool:
        return self.quota is not None and self.done >= self.quota

    @property
    def available(self) -> int:
        reachable = self.done + int(self.in_hand) + self.open_items
        return reachable if self.quota is None else min(self.quota, reachable)

    @property
    def finished(self) -> bool:
        """Nothing will ever come to them again: the quota is reached, or every item is done
        by them, skipped by them, or complete with others' answers."""
        if self.quota_reached or self.held in (GOLD_SPENT, SCREENED_OUT, CAMPAIGN_CLOSED):
            return True
        if self.held is not None:
            # The network's share (a reservation of theirs that lapses frees one), the
            # qualification still to answer, or a campaign paused or not started yet.
            return False
        return not self.in_hand and not self.open_items and not self.held_items

    @property
    def waiting(self) -> bool:
        """Nothing for them now, but others hold the last free slots: a reservation that runs
        out sends its item back to the queue, so checking back may find work. (Not while the
        qualification waits for them: they have work; nor while the campaign is paused or not
        started: no reservation running out brings work then.)"""
        if self.finished or self.held in (QUALIFYING, CAMPAIGN_PAUSED, CAMPAIGN_DRAFT):
            return False
        return not self.in_hand and not self.open_items

    @property
    def percent(self) -> float:
        return 100.0 * self.done / self.available if self.available else 100.0


def annotator_standing(
    campaign: Campaign, user: User, *, now: datetime | None = None, fresh: bool = True
) -> AnnotatorStanding:
    """The annotator's standing now. With ``fresh`` False the campaign-wide count of full items
    may come from a copy up to FULL_ITEMS_TTL_S old (see above); their own figures never do."""
    now = now or timezone.now()
    k, when, me, here = campaign.annotations_per_pair, db_time(now), user.pk, campaign.pk
    own = fetch(OWN_SQL, [here, me, here, me, here, here, me, k, here, me, when, k])[0]
    done, reserved, regular, theirs, theirs_full, theirs_held = (int(n) for n in own)
    full, held = _full_and_held(campaign, now, fresh=fresh)
    return AnnotatorStanding(
        done=done,
        in_hand=bool(reserved),
        open_items=max(regular - theirs - max(full - theirs_full, 0), 0),
        held_items=max(held - theirs_held, 0),
        quota=campaign.quota_per_annotator,
    )


def member_standing(campaign: Campaign, user: User) -> AnnotatorStanding:
    """``annotator_standing`` with the queue's rules about the member applied: open items the
    queue keeps from them (the qualification not passed, their network's share, a newcomer out
    of gold) are not available to them, and ``held`` says which rule; the home page, the
    completion page and the API's progress read this. The gate's holds stand even when no item
    is open: a member screened out is finished, not waiting. A campaign that is not active
    keeps every item from them, the one in hand too (its page is not served): ``held`` is then
    its status (``closed``, ``paused`` or ``draft``)."""
    standing = annotator_standing(campaign, user)
    if standing.finished:
        return standing
    held = held_back(campaign, user)
    status_hold = _status_hold(campaign, held)
    if status_hold is not None:
        return replace(standing, in_hand=False, open_items=0, held=status_hold)
    if held is None or not (standing.open_items or held in GATE_HOLDS):
        return standing
    return replace(standing, open_items=0, held=held)


def _status_hold(campaign: Campaign, queue_hold: str | None) -> str | None:
    """The campaign's status when it is what keeps the items from the member, else None."""
    if campaign.is_active:
        return None
    if queue_hold == SCREENED_OUT and campaign.status != Campaign.Status.CLOSED:
        # Their end whatever the campaign does: resuming or starting it would not let them in.
        return None
    return str(campaign.status)


def _full_and_held(campaign: Campaign, now: datetime, *, fresh: bool) -> tuple[int, int]:
    key = (campaign.pk, campaign.invite_token, campaign.annotations_per_pair)
    if not fresh:
        with _full_items_lock:
            cached = _full_items.get(key)
        if cached is not None and time.monotonic() - cached[0] < FULL_ITEMS_TTL_S:
            return cached[1], cached[2]
    k, when, here = campaign.annotations_per_pair, db_time(now), campaign.pk
    row = fetch(FULL_SQL, [k, here, when, here, k, k, when, here, k])[0]
    full, held = int(row[0]) + int(row[2]), int(row[1]) + int(row[3])
    with _full_items_lock:
        _full_items[key] = (time.monotonic(), full, held)
    return full, held


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


def dashboard_figures(campaign: Campaign) -> dict[str, Any]:
    """The dashboard's slower figures, kept like the audit: annotator quality control and
    completion over time (``[(ISO time, items complete)]``)."""

    def compute() -> dict[str, Any]:
        # One read of the campaign's annotations serves both figures and the replacement
        # slots, which follow who is left out (kept as ``campaign_audit_cached`` keeps its
        # report: with the stamp read before the answers).
        audit = CampaignAudit(campaign, lengths=False)
        items, frame, left_out = audit.items, audit.answers, audit.left_out
        sync_slots_for(campaign, left_out)
        return {
            "annotators": campaign_quality(campaign, items, frame, left_out),
            "completion": [(at.isoformat(), n) for at, n in _completion(campaign, items, frame)],
        }

    return cached(campaign, "dashboard", compute)


def _completion(
    campaign: Campaign, items: pd.DataFrame, frame: pd.DataFrame
) -> list[tuple[datetime, int]]:
    """(time, regular items complete by then), one point per item completed, from frames
    already read: every submitted assignment has one current annotation, with its submission
    time."""
    replacements = dict(
        CampaignItem.objects.filter(campaign_id=campaign.pk, replacement_annotations__gt=0)
        .values_list("pk", "replacement_annotations")
        .order_by()
    )
    regular = items[items["item_kind"] == CampaignItem.Kind.REGULAR]
    targets = {
        int(item_id): int(required) + replacements.get(int(item_id), 0)
        for item_id, required in zip(regular["item_id"], regular["required"], strict=True)
    }
    answered = frame[frame["submitted_at"].notna()]
    submissions = zip(
        answered["item_id"].tolist(),
        answered["submitted_at"].dt.to_pydatetime().tolist(),
        strict=True,
    )
    done = completion_times(((int(i), at) for i, at in submissions), targets)
    return [(at, count) for count, at in enumerate(done, 1)]
