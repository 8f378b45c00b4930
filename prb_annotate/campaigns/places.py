"""Places: whether a campaign can still give a newcomer work, asked before they start.

A participant who arrives when every pair has its answers must be told so on the join page,
before consent, practice or qualification, not after them (on Prolific that is time nobody
pays for). A *place* is one item a newcomer could be given within their quota, counted the way
the queue will hand items out:

- **free slots**: for every regular item, the slots its target allows (k, split-vote extras,
  replacements) less the occupied ones (submitted answers and live reservations);
- **held**: every annotator who is still at work holds the items their quota still allows
  them, less the reservation they hold now (already occupied): a member is at work while their
  last sign of life (joining, starting the qualification, reserving or submitting an item) is
  more recent than the campaign's reservation timeout, and they are not screened out. Without
  a quota a member holds one item.

``places = free slots - held``; a newcomer is admitted while it is at least one. Admitting is
decided under the lock on the campaign's row that every new account through a link takes
(``join_limits.admit_new_account``), so newcomers arriving together are counted one after the
other, and everyone admitted keeps the places counted for them as long as they keep working (a
member who stops for longer than the reservation timeout gives their places back). A newcomer
admitted with fewer places left than the quota can do only those; the join and sign-up pages
say so (``briefing.time_estimate``). Two answers of one annotator to one pair are never
allowed, so a newcomer can be given at most one item per pair with a free slot
(``Places.for_newcomer``: with k = 3, twelve such pairs are 36 places but 12 items for anyone);
when the free slots sit on pairs a member has already answered they may finish short of the
quota, which the count does not see.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, F, Q, Sum
from django.db.models.functions import Greatest
from django.utils import timezone
from django.utils.translation import gettext as _

from prb_annotate.campaigns.lifecycle import InviteError
from prb_annotate.campaigns.progress import assignment_counts
from prb_annotate.models import Assignment, Campaign, CampaignItem, Membership, QualificationRecord


class NoPlacesLeft(InviteError):
    """Every place of the campaign is taken: no item could come to a newcomer now."""

    status = 409


@dataclass(frozen=True)
class Places:
    free_slots: int
    held: int
    # Regular pairs with at least one free slot: one annotator answers each pair once at most.
    open_pairs: int = 0

    @property
    def left(self) -> int:
        return max(0, self.free_slots - self.held)

    @property
    def for_newcomer(self) -> int:
        """The most regular items one newcomer could be given now: the places left, and no
        more than one per pair with a free slot."""
        return min(self.left, self.open_pairs)


def open_slots(campaign: Campaign, now: datetime) -> tuple[int, int]:
    """(slots of the regular items that no submitted answer or live reservation occupies, the
    regular items with at least one such slot)."""
    occupied = Q(assignments__status=Assignment.Status.SUBMITTED) | Q(
        assignments__status=Assignment.Status.RESERVED, assignments__expires_at__gt=now
    )
    items = (
        CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.REGULAR)
        .annotate(occupied=Count("assignments", filter=occupied))
        .annotate(free=Greatest(CampaignItem.slot_limit() - F("occupied"), 0))
    )
    totals = items.aggregate(slots=Sum("free"), pairs=Count("pk", filter=Q(free__gt=0)))
    return int(totals["slots"] or 0), int(totals["pairs"] or 0)


def held_slots(campaign: Campaign, now: datetime) -> int:
    """What the annotators still at work will take (see the module's docstring)."""
    since = now - timedelta(minutes=campaign.reservation_minutes)
    screened_out = QualificationRecord.objects.filter(
        membership__campaign=campaign, outcome=QualificationRecord.Outcome.FAILED
    ).values_list("membership_id", flat=True)
    members = (
        Membership.objects.filter(campaign=campaign, role=Membership.Role.ANNOTATOR)
        .exclude(pk__in=screened_out)
        .values_list("user_id", "joined_at", "qualification__started_at")
    )
    work = assignment_counts(campaign, now)
    held = 0
    for user_id, joined_at, started_at in members:
        row = work.get(user_id, {})
        seen = [
            moment
            for moment in (joined_at, started_at, row.get("reserved_at"), row.get("submitted_at"))
            if moment is not None
        ]
        if not seen or max(seen) <= since:
            continue
        quota = campaign.quota_per_annotator
        wanted = 1 if quota is None else max(0, quota - row.get("submitted", 0))
        held += max(0, wanted - row.get("live", 0))
    return held


def places(campaign: Campaign, *, now: datetime | None = None) -> Places:
    now = now or timezone.now()
    slots, pairs = open_slots(campaign, now)
    return Places(slots, held_slots(campaign, now), pairs)


def newcomer_reach(campaign: Campaign, places: Places) -> int:
    """The most items a newcomer could be given now, quota aside: a regular item for each of
    ``places.for_newcomer`` and every gold item once."""
    gold = CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.GOLD).count()
    return places.for_newcomer + gold


def check_places(campaign: Campaign) -> None:
    """NoPlacesLeft when no item could come to a newcomer now. Call it under the campaign's
    row lock in the transaction that makes the account (``join_limits.admit_new_account``)."""
    if places(campaign).left < 1:
        raise NoPlacesLeft(
            _(
                "All places in this study are taken: every pair has the answers it needs, or "
                "is held by participants at work. Thank you for your interest."
            )
        )
