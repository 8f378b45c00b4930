"""Who gets which item next.

An assignment row is a *reservation* while its status is ``reserved`` and ``expires_at`` lies
ahead; its slot frees by the clock alone, so correctness never waits for a sweeper. An item's
*occupied* slots are its submitted assignments plus its live reservations; a regular item never
has more than ``item.target_annotations()`` of them (k, plus extra ones the audit asked for:
one more annotator for a split vote, and a replacement for every answer that left the audit,
since that answer still holds its slot; see ``audit/replacements.py``).

Nothing of the queue reaches a member who is not *cleared* (``qualification/gate.py``: practice
answered, qualification passed or let in by a manager): the rule is read in the transaction
that hands out items, under the member's lock, and such a member gets ``QualificationFirst``
instead of any item, their own earlier reservation included. Practice and qualification items
are not campaign items, so they never take a slot here.

The queue for one annotator, in order:

1. their own live reservation (a reload shows the same pair);
2. their own lapsed reservation, if its item still has room (a reload after a break shows the
   same pair). Older lapsed items go back into their queue like any other item: an annotator
   may get back an item they let expire, and the expired row is reused for it, so one row per
   item and annotator holds. A skipped item never comes back;
3. on the positions the gold rate picks (one per block of ~1/rate items, at a seeded random
   place), a gold item they have not seen; gold items have no cap, since every annotator's gold
   accuracy needs them;
4. regular items already started (finish pairs before opening new ones), least occupied first,
   then by ``order_key``;
5. regular items with no occupied slot, in ``order_key`` order (a seeded permutation);
6. started items whose A/B tally pulls the other way from the annotator's (see
   ``balanced_position``): offering them last keeps both tallies within one; a compatible
   annotator usually comes along before the untouched items run out.

A participant's first items are slowed (``Campaign.first_reservation_minutes``; 0 turns it
off). A member whose account an invite link made (an ``InviteJoin`` row) is a *newcomer* until
they answer a gold, practice or qualification item right (``Membership.proven_at``, set by the
submits).
While they are one, their reservations last the short first window (never longer than the
campaign's own); where the campaign has gold items, once they have an answer their queue is
step 3 alone, a gold item every time, until one is right: an account made only to hold slots
holds at most one regular slot (its first item, unless that was gold), and lets a held item go
within minutes. Without gold items
nothing can prove them, so only their first reservation is short and the queue is as for
anyone. Proven or not, a member the link made gets no new item while the accounts the link made
from their network hold that network's share of the slots (``network_share.py``; read before
any item is locked, so requests served at the same moment may pass it by one each).

Steps 4-6 come from a *plan* (assignment_plan.py). It is only a proposal: every candidate is
locked and counted again before a slot is taken, and when none of them can be taken, an exact
plan is made before the annotator is told that nothing is left. On SQLite the plan is made
before the transaction opens, which keeps the query that grows with the campaign out of the
section where writers wait for each other; on PostgreSQL it is made inside the transaction,
after the membership lock (which only this annotator's own requests wait for) and before any
item lock, and only when a new item is needed.

Concurrency. Every operation is one transaction. On SQLite the settings make each transaction
``BEGIN IMMEDIATE``, so a writer holds the database lock for the whole block and the steps
below run one at a time. On PostgreSQL the same code relies on row locks; a lock is taken by a
statement of its own, and what it guards is read by the next statement, which sees every
change committed by whoever held the lock before:

- the membership row is locked first, so one annotator's concurrent requests (two tabs, a
  double click) run one after the other and cannot reserve two items;
- an item row is locked before its slots are counted and one is taken, with
  ``SKIP LOCKED`` so that concurrent annotators fan out over different items instead of
  queueing on the same one;
- submit (annotating.py) locks the assignment and then its item; this module only ever waits
  for the annotator's own assignment rows, before any item lock, so the two orders cannot
  deadlock.
"""

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from fractions import Fraction

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from prb_annotate.campaigns.briefing import ConsentFirst
from prb_annotate.campaigns.network_share import slots_per_network
from prb_annotate.campaigns.plan import MAX_CANDIDATES, Candidate, Plan, plan_for
from prb_annotate.campaigns.qualification.gate import CLEARED_COLUMN
from prb_annotate.campaigns.queue_sql import (
    CONSENT_PENDING_COLUMN,
    INSERT_SQL,
    ITEM_LOCK_SQL,
    ITEM_SQL,
    MEMBER_LOCK_SQL,
    MEMBER_SQL,
    NETWORK_COLUMN,
    NETWORK_HELD_SQL,
    NEWCOMER,
    NEWCOMER_COLUMN,
    NEWCOMER_WITH_GOLD,
    OWN_EXPIRED_SQL,
    PLAN_INPUTS_SQL,
    REUSE_SQL,
)
from prb_annotate.db.plainsql import (
    columns,
    db_time,
    execute,
    fetch,
    has_row_locks,
    instance,
    operation_transaction,
    row_lock,
)
from prb_annotate.models import (
    Assignment,
    Campaign,
    CampaignItem,
    Membership,
    Pair,
    QualificationRecord,
)
from prb_annotate.security.access import PARTICIPANT_SCOPE_SQL

A = Assignment.Position.A
B = Assignment.Position.B
RESERVED = Assignment.Status.RESERVED
SUBMITTED = Assignment.Status.SUBMITTED
EXPIRED = Assignment.Status.EXPIRED
REGULAR = CampaignItem.Kind.REGULAR
GOLD = CampaignItem.Kind.GOLD


def occupying(now: datetime, prefix: str = "") -> Q:
    """Assignments that hold a slot at ``now``: submitted ones and live reservations."""
    return Q(**{f"{prefix}status": SUBMITTED}) | Q(
        **{f"{prefix}status": RESERVED, f"{prefix}expires_at__gt": now}
    )


def is_live(assignment: Assignment, now: datetime) -> bool:
    return assignment.status == RESERVED and assignment.expires_at > now


def responses_ab(assignment: Assignment) -> tuple[str, str]:
    """The two answers as this annotator sees them: (response A, response B)."""
    pair = assignment.item.pair
    if assignment.chosen_position == A:
        return pair.chosen, pair.rejected
    return pair.rejected, pair.chosen


# --- counterbalancing and gold slots: pure functions ---------------------------------------


def balanced_position(
    *,
    annotator_a: int,
    annotator_b: int,
    item_a: int,
    item_b: int,
    tie_break: str,
    last_slot: bool = False,
) -> str:
    """The side (A or B) that shows the chosen answer, keeping both tallies within one.

    Each tally counts how often the chosen answer was shown on A and on B. A side is *wanted*
    when its tally lags. When annotator and item want different sides, the one further off
    wins; on equal terms the item wins on its last slot (its balance is then final) and the
    annotator otherwise (a later annotator of the item can still even it out). The queue
    offers such conflicting items last, so this happens mostly at the end of a campaign.
    """
    annotator_diff = annotator_a - annotator_b
    item_diff = item_a - item_b
    annotator_wants = _wanted_side(annotator_diff)
    item_wants = _wanted_side(item_diff)
    if annotator_wants is None and item_wants is None:
        return tie_break
    if annotator_wants is None:
        return str(item_wants)
    if item_wants is None or annotator_wants == item_wants:
        return annotator_wants
    if abs(annotator_diff) != abs(item_diff):
        return annotator_wants if abs(annotator_diff) > abs(item_diff) else item_wants
    return item_wants if last_slot else annotator_wants


def _wanted_side(diff: int) -> str | None:
    if diff > 0:
        return B
    if diff < 0:
        return A
    return None


def is_gold_slot(position: int, rate: float, *, seed: int, annotator_id: int) -> bool:
    """Whether the annotator's ``position``-th item (0-based) should be a gold item.

    Positions are cut into consecutive blocks of about 1/rate items and each block has exactly
    one gold slot at a seeded random place, so after n items an annotator has seen rate * n
    gold items to within one, and nobody can tell which position is gold from a fixed rhythm.
    """
    if rate <= 0:
        return False
    if rate >= 1:
        return True
    r = Fraction(rate).limit_denominator(10_000)
    block = position * r.numerator // r.denominator

    def start(b: int) -> int:  # first position of block b: ceil(b / r), in exact arithmetic
        return -(-b * r.denominator // r.numerator)

    first, end = start(block), start(block + 1)
    rng = random.Random(f"gold:{seed}:{annotator_id}:{block}")
    return position == first + rng.randrange(end - first)


# --- the queue ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _History:
    submitted: int
    shown_a: int
    reserved_rows: int  # this annotator's reservations, live or lapsed
    expired_rows: int
    newcomer: int  # 0, NEWCOMER or NEWCOMER_WITH_GOLD
    network: str | None = None  # where the invite link made the account (None: not the link)

    @property
    def shown_b(self) -> int:
        return self.submitted - self.shown_a

    @property
    def gold_only(self) -> bool:
        """A newcomer who has answered, in a campaign with gold items: gold until one is right."""
        return self.newcomer == NEWCOMER_WITH_GOLD and self.submitted > 0

    def quota_reached(self, campaign: Campaign) -> bool:
        quota = campaign.quota_per_annotator
        return quota is not None and self.submitted >= quota

    def reservation_minutes(self, campaign: Campaign) -> int:
        """How long a new reservation lasts: the short first window for a newcomer (their
        first reservation only where no gold item can prove them)."""
        slowed = self.newcomer == NEWCOMER_WITH_GOLD or (
            self.newcomer == NEWCOMER and self.submitted == 0
        )
        if not slowed:
            return campaign.reservation_minutes
        return min(campaign.first_reservation_minutes, campaign.reservation_minutes)


class QualificationFirst(Exception):
    """The member is not cleared for regular items: practice or qualification comes first,
    or they failed it (``qualification/flow.py`` says which)."""


# What the transaction answers for a member who is not cleared; raised as QualificationFirst
# once it has ended, so that a whole-request transaction is not marked for rollback.
_NOT_CLEARED = object()


def next_assignment(
    campaign: Campaign, annotator: User, *, now: datetime | None = None
) -> Assignment | None:
    """The annotator's current reservation, or a newly reserved item, or None.

    None means there is nothing for them now: the campaign is not active, their quota is
    done, or every remaining item is full or already theirs. Raises Membership.DoesNotExist
    when ``annotator`` is not an annotator of the campaign, and QualificationFirst when they
    are not cleared for regular items (the campaign being active). The returned assignment has
    ``campaign`` (as read in the transaction), ``item`` and ``item.pair`` loaded.
    """
    return next_assignment_by_id(campaign.pk, annotator, now=now)


def next_assignment_by_id(
    campaign_id: int,
    annotator: User,
    *,
    now: datetime | None = None,
    consent_first: bool = False,
) -> Assignment | None:
    """``next_assignment`` for a campaign known by its id alone (the API): the membership is
    checked on the way, so the caller needs no read of its own. With ``consent_first``, a
    member who has not accepted the campaign's consent text gets ``ConsentFirst`` (whatever
    the campaign's status), read in the same statement as the rest; the pages ask for consent
    with the membership they read anyway."""
    now = now or timezone.now()
    asks = _Asks(consent_first)
    assignment = _next(campaign_id, annotator, now, asks)
    if assignment is None and _made_room_for_replacements(campaign_id):
        assignment = _next(campaign_id, annotator, now, asks)
    if isinstance(assignment, ConsentFirst):
        raise assignment
    if assignment is _NOT_CLEARED:
        raise QualificationFirst("Practice or qualification comes first.")
    assert assignment is None or isinstance(assignment, Assignment)
    return assignment


@dataclass(frozen=True)
class _Asks:
    """What the caller wants checked besides the queue's own rules."""

    consent: bool


def _next(
    campaign_id: int, annotator: User, now: datetime, asks: _Asks
) -> Assignment | object | None:
    if has_row_locks():
        # PostgreSQL: one transaction, which plans only once it knows a new item is needed.
        with operation_transaction():
            return _next_in_transaction(campaign_id, annotator, now, asks, plan=None, may_plan=True)
    plan = _plan_before_transaction(campaign_id, annotator, now, asks)
    with operation_transaction():
        return _next_in_transaction(campaign_id, annotator, now, asks, plan=plan, may_plan=False)


def _made_room_for_replacements(campaign_id: int) -> bool:
    """Before an annotator is told that nothing is left: whether answers that left the audit
    (an excluded annotator, low gold accuracy, position bias) got replacement slots just now.

    An annotator drops below the gold minimum while annotating, when their pairs already look
    complete; asking here, where an annotator is waiting, means no such pair waits for a
    manager to open the audit. It runs outside the reserving transaction, and only raises
    targets, which never breaks the invariant.
    """
    # Imported here: the audit reads whole campaigns and is needed only on this rare path.
    from prb_annotate.audit.exclusions import request_replacement_annotations

    campaign = Campaign.objects.filter(pk=campaign_id, status=Campaign.Status.ACTIVE).first()
    return campaign is not None and request_replacement_annotations(campaign) > 0


def _plan_before_transaction(
    campaign_id: int, annotator: User, now: datetime, asks: _Asks
) -> Plan | None:
    """SQLite: the plan, made before the immediate transaction takes the write lock; None when
    no new item will be needed (the transaction reads the campaign's status and the consent
    again, under the lock, and decides)."""
    rows = fetch(
        PLAN_INPUTS_SQL.format(CONSENT_PENDING_COLUMN, PARTICIPANT_SCOPE_SQL),
        [db_time(now), campaign_id, annotator.pk],
    )
    if not rows:
        raise Membership.DoesNotExist("Not an annotator of this campaign.")
    status, k, invite_token, has_live, consent_owed = rows[0]
    if status != Campaign.Status.ACTIVE or has_live or (asks.consent and consent_owed.strip()):
        return None
    return plan_for(
        campaign_id=campaign_id,
        invite_token=invite_token,
        k=k,
        annotator_id=annotator.pk,
        now=now,
    )


def _next_in_transaction(
    campaign_id: int,
    annotator: User,
    now: datetime,
    asks: _Asks,
    *,
    plan: Plan | None,
    may_plan: bool,
) -> Assignment | object | None:
    # One annotator's requests queue on their membership row (PostgreSQL row lock; SQLite's
    # immediate transaction already serializes everything): two tabs asking at once get one
    # item, never two.
    if has_row_locks() and not fetch(
        MEMBER_LOCK_SQL.format(PARTICIPANT_SCOPE_SQL) + row_lock(), [campaign_id, annotator.pk]
    ):
        raise Membership.DoesNotExist("Not an annotator of this campaign.")
    member = _read_member(campaign_id, annotator)
    if member is None:
        raise Membership.DoesNotExist("Not an annotator of this campaign.")
    campaign, history, cleared, consent_owed = member
    if asks.consent and consent_owed.strip():
        # Returned, raised once the transaction has ended (like _NOT_CLEARED).
        return ConsentFirst(consent_owed)
    if campaign.status == Campaign.Status.ACTIVE and not cleared:
        return _NOT_CLEARED
    assignment = _queue(campaign, annotator, history, now, plan, may_plan)
    if assignment is not None:
        assignment.campaign = campaign
        assignment.item.campaign = campaign
    return assignment


def _read_member(campaign_id: int, annotator: User) -> tuple[Campaign, _History, bool, str] | None:
    """The campaign, the member's history, whether they are cleared for regular items and the
    consent text they still owe; None when they are not an annotator of the campaign."""
    rows = fetch(
        MEMBER_SQL.format(
            columns(Campaign, "c"),
            NEWCOMER_COLUMN,
            NETWORK_COLUMN,
            CLEARED_COLUMN,
            CONSENT_PENDING_COLUMN,
            PARTICIPANT_SCOPE_SQL,
        ),
        [campaign_id, annotator.pk, campaign_id, annotator.pk],
    )
    if not rows:
        return None
    campaign = instance(Campaign, rows[0])
    *counts, network, cleared, consent_owed = rows[0][len(Campaign._meta.concrete_fields) :]
    submitted, shown_a, reserved_rows, expired_rows, newcomer = (int(n) for n in counts)
    history = _History(submitted, shown_a, reserved_rows, expired_rows, newcomer, network)
    return campaign, history, bool(cleared), consent_owed


# Why the queue hands a member nothing while regular items are open to them: the standing
# (``progress.py``) counts items, and these rules of the queue are about the member.
HELD_BY_NETWORK = "network"  # the invite link's accounts from their network hold their share
GOLD_SPENT = "gold-spent"  # a newcomer who answered every gold item without being proven
# The gate before the queue (``qualification/gate.py``): the member is not cleared because they
# failed the qualification (until a manager lets them in), or must answer its items first.
SCREENED_OUT = "screened-out"
QUALIFYING = "qualification"
# The holds that stand whether or not items are open: they are about the member alone.
GATE_HOLDS = (SCREENED_OUT, QUALIFYING)


def held_back(campaign: Campaign, annotator: User, *, now: datetime | None = None) -> str | None:
    """``SCREENED_OUT``, ``QUALIFYING``, ``HELD_BY_NETWORK``, ``GOLD_SPENT`` or None: which of
    the queue's rules about the member keeps the open items from them now, read without
    reserving, in the queue's order (the gate first). (A gold item always has room, so a
    newcomer waits for gold only once none is left that is not theirs.)"""
    now = now or timezone.now()
    member = _read_member(campaign.pk, annotator)
    if member is None:
        return None
    campaign, history, cleared, _consent_owed = member
    if not cleared:
        return SCREENED_OUT if _failed_qualification(campaign, annotator) else QUALIFYING
    if campaign.status != Campaign.Status.ACTIVE or history.quota_reached(campaign):
        return None
    if history.network is not None and _network_full(campaign, history.network, now):
        return HELD_BY_NETWORK
    if history.gold_only and not _gold_not_theirs(campaign, annotator).exists():
        return GOLD_SPENT
    return None


def _failed_qualification(campaign: Campaign, annotator: User) -> bool:
    return QualificationRecord.objects.filter(
        membership__campaign_id=campaign.pk,
        membership__user_id=annotator.pk,
        outcome=QualificationRecord.Outcome.FAILED,
    ).exists()


def _gold_not_theirs(campaign: Campaign, annotator: User) -> QuerySet[CampaignItem]:
    """The campaign's gold items the annotator holds no row on but expired ones."""
    return CampaignItem.objects.filter(campaign_id=campaign.pk, kind=GOLD).exclude(
        pk__in=Assignment.objects.filter(campaign_id=campaign.pk, annotator=annotator)
        .exclude(status=EXPIRED)
        .values("item_id")
    )


def _queue(
    campaign: Campaign,
    annotator: User,
    history: _History,
    now: datetime,
    plan: Plan | None,
    may_plan: bool,
) -> Assignment | None:
    """The steps of the queue, in the transaction; the assignment has its item and pair."""
    if campaign.status != Campaign.Status.ACTIVE:
        return None
    locks = _ItemLocks(campaign, annotator, now)
    if history.reserved_rows:
        own = _own_reservation(campaign, annotator, history, locks)
        if own is not None:
            return own
    if history.expired_rows:
        # A new reservation may reuse one of these rows. Lock them now, before any item: a
        # submit of such a row by its annotator (an old page) locks the row, then the item.
        fetch(OWN_EXPIRED_SQL + row_lock(), [campaign.pk, annotator.pk])
    if history.quota_reached(campaign):
        return None
    if history.network is not None and _network_full(campaign, history.network, now):
        return None  # the accounts the link made from this network hold their share
    if history.gold_only or is_gold_slot(
        history.submitted, campaign.gold_rate, seed=campaign.seed, annotator_id=annotator.pk
    ):
        gold = _reserve_gold(campaign, annotator, history, locks)
        if gold is not None or history.gold_only:
            return gold
    if plan is None and may_plan:
        # Inside the transaction already: the walk for new items waits until it is needed.
        plan = _plan(campaign, annotator, now, eager=False)
    if plan is not None:
        reserved = _reserve_regular(campaign, history, locks, plan)
        if reserved is not None:
            return reserved
    # No plan yet, or none of its items could be taken: plan again from scratch, inside the
    # transaction, before telling the annotator that nothing is left.
    exact = _plan(campaign, annotator, now, exact=True)
    return _reserve_regular(campaign, history, locks, exact, last_try=True)


def _network_full(campaign: Campaign, network: str, now: datetime) -> bool:
    held = fetch(NETWORK_HELD_SQL, [campaign.pk, network, db_time(now)])[0][0]
    return bool(held) and held >= slots_per_network(campaign)


def _plan(
    campaign: Campaign,
    annotator: User,
    now: datetime,
    *,
    exact: bool = False,
    eager: bool = True,
) -> Plan:
    return plan_for(
        campaign_id=campaign.pk,
        invite_token=campaign.invite_token,
        k=campaign.annotations_per_pair,
        annotator_id=annotator.pk,
        now=now,
        exact=exact,
        eager=eager,
    )


def _own_reservation(
    campaign: Campaign, annotator: User, history: _History, locks: "_ItemLocks"
) -> Assignment | None:
    """The annotator's live reservation; or, when it lapsed, the same item again if it still
    has room (a reload after a long break shows the same pair). Lapsed reservations that do
    not come back are marked expired: their items return to the queue like any other."""
    now = locks.now
    rows = list(
        Assignment.objects.select_for_update(of=("self",))
        .select_related("item__pair")
        .filter(campaign_id=campaign.pk, annotator=annotator, status=RESERVED)
        .order_by("-reserved_at", "-pk")
    )
    for row in rows:
        if is_live(row, now):
            return row
    revived = None
    if rows and not history.quota_reached(campaign):
        latest = rows[0]
        slot = locks.lock(latest.item_id)
        if slot is not None and slot.has_room(exclude_own=True):
            latest.chosen_position = _position_for(campaign, annotator, history, slot)
            latest.reserved_at = now
            latest.expires_at = now + timedelta(minutes=history.reservation_minutes(campaign))
            latest.save(update_fields=["chosen_position", "reserved_at", "expires_at"])
            revived = latest
    lapsed = [row.pk for row in rows if row is not revived]
    if lapsed:
        Assignment.objects.filter(pk__in=lapsed).update(status=EXPIRED)
    return revived


@dataclass(frozen=True)
class _Slot:
    """An item locked by this transaction, with its slots counted after the lock."""

    item: CampaignItem  # with its pair
    target: int
    occupied: int
    shown_a: int
    stale: int
    own: int  # rows of this annotator other than expired ones
    own_expired_id: int | None

    @property
    def item_id(self) -> int:
        return int(self.item.pk)

    @property
    def kind(self) -> str:
        return self.item.kind

    def has_room(self, *, exclude_own: bool = False) -> bool:
        if self.own and not exclude_own:
            return False
        return self.kind == GOLD or self.occupied < self.target


class _ItemLocks:
    """Item row locks taken by one next_assignment transaction.

    Deadlock rule: the transaction waits for an item lock only while it holds no other item
    lock (PostgreSQL cannot let go of a row lock before commit). Every later attempt uses
    SKIP LOCKED. So whoever holds an item lock never waits for another item, and no cycle of
    waits can form between annotators.
    """

    def __init__(self, campaign: Campaign, annotator: User, now: datetime) -> None:
        self.campaign = campaign
        self.annotator = annotator
        self.now = now
        self.holding = False

    def lock(self, item_id: int, *, wait: bool = True) -> _Slot | None:
        """Lock the item and count its slots; None when someone else holds it (and we skip)."""
        if has_row_locks():
            blocking = wait and not self.holding
            if not fetch(ITEM_LOCK_SQL + row_lock(skip_locked=not blocking), [item_id]):
                return None
        # After the lock, in a statement of its own: it sees every reservation committed by
        # whoever held the lock before us. The pair comes along for the reservation's page.
        now = db_time(self.now)
        me = self.annotator.pk
        rows = fetch(
            ITEM_SQL.format(columns(CampaignItem, "i"), columns(Pair, "p")),
            [now, now, now, me, me, item_id, item_id],
        )
        if not rows:
            return None
        self.holding = True
        item = instance(CampaignItem, rows[0])
        item_width = len(CampaignItem._meta.concrete_fields)
        item.pair = instance(Pair, rows[0], item_width)
        counts = rows[0][item_width + len(Pair._meta.concrete_fields) :]
        occupied, shown_a, stale, own, own_expired_id = counts
        item.campaign = self.campaign
        return _Slot(
            item=item,
            target=item.target_annotations(),
            occupied=int(occupied),
            shown_a=int(shown_a),
            stale=int(stale),
            own=int(own),
            own_expired_id=own_expired_id,
        )


def _position_for(campaign: Campaign, annotator: User, history: _History, slot: _Slot) -> str:
    return balanced_position(
        annotator_a=history.shown_a,
        annotator_b=history.shown_b,
        item_a=slot.shown_a,
        item_b=slot.occupied - slot.shown_a,
        tie_break=_tie_break(campaign.seed, annotator.pk, slot.item_id),
        last_slot=slot.kind == REGULAR and slot.occupied + 1 >= slot.target,
    )


def _tie_break(seed: int, annotator_id: int, item_id: int) -> str:
    rng = random.Random(f"side:{seed}:{item_id}:{annotator_id}")
    return A if rng.random() < 0.5 else B


def _reserve(
    campaign: Campaign, annotator: User, history: _History, slot: _Slot, now: datetime
) -> Assignment:
    """Take one slot of the locked item, in a new row or in the annotator's expired row for it
    (one row per item and annotator). Lapsed reservations of others on it become expired."""
    if slot.stale:
        _expire_stale_on_item(slot.item_id, now)
    position = _position_for(campaign, annotator, history, slot)
    expires_at = now + timedelta(minutes=history.reservation_minutes(campaign))
    times = [db_time(now), db_time(expires_at)]
    if slot.own_expired_id is not None:
        execute(REUSE_SQL, [position, *times, slot.own_expired_id])
        assignment_id = slot.own_expired_id
    else:
        inserted = fetch(INSERT_SQL, [campaign.pk, slot.item_id, annotator.pk, position, *times])
        assignment_id = inserted[0][0]
    return Assignment(
        pk=assignment_id,
        campaign_id=campaign.pk,
        item=slot.item,
        annotator=annotator,
        chosen_position=position,
        status=RESERVED,
        reserved_at=now,
        expires_at=expires_at,
    )


def _expire_stale_on_item(item_id: int, now: datetime) -> None:
    # SKIP LOCKED: a lapsed row that its owner is submitting right now is left to that submit
    # (which counts it only if there is room); waiting for it here could deadlock, since that
    # submit waits for the item lock we hold.
    stale_ids = list(
        Assignment.objects.select_for_update(skip_locked=True)
        .filter(item_id=item_id, status=RESERVED, expires_at__lte=now)
        .values_list("pk", flat=True)
    )
    if stale_ids:
        Assignment.objects.filter(pk__in=stale_ids, status=RESERVED).update(status=EXPIRED)


def _reserve_gold(
    campaign: Campaign, annotator: User, history: _History, locks: _ItemLocks
) -> Assignment | None:
    live = occupying(locks.now, "assignments__")
    rows = (
        _gold_not_theirs(campaign, annotator)
        .values("pk", "order_key")
        .annotate(
            occupied=Count("assignments", filter=live),
            shown_a=Count("assignments", filter=live & Q(assignments__chosen_position=A)),
        )
        .order_by("order_key")
    )
    rng = random.Random(f"gold-order:{campaign.seed}:{annotator.pk}")
    candidates = [
        Candidate(row["pk"], row["occupied"], row["shown_a"], rng.getrandbits(32)) for row in rows
    ]
    # Least seen first, so gold items are spread; the annotator's own seeded order breaks ties.
    candidates.sort(key=lambda c: (c.occupied, _conflict(history, c), c.order_key))
    for candidate in candidates[:MAX_CANDIDATES]:
        slot = locks.lock(candidate.item_id)
        if slot is not None and slot.has_room():
            return _reserve(campaign, annotator, history, slot, locks.now)
    return None


def _conflict(history: _History, candidate: Candidate) -> bool:
    """Whether annotator and item want different sides (the pick then unbalances one)."""
    annotator_wants = _wanted_side(history.shown_a - history.shown_b)
    item_wants = _wanted_side(2 * candidate.shown_a - candidate.occupied)
    return annotator_wants is not None and item_wants is not None and annotator_wants != item_wants


def _reserve_regular(
    campaign: Campaign,
    history: _History,
    locks: _ItemLocks,
    plan: Plan,
    *,
    last_try: bool = False,
) -> Assignment | None:
    skipped: list[int] = []
    for candidate in _candidates(plan, history):
        # SKIP LOCKED: concurrent annotators fan out over the items instead of all queueing
        # for the same one.
        slot = locks.lock(candidate.item_id, wait=False)
        if slot is None:
            skipped.append(candidate.item_id)
        elif slot.has_room():
            return _reserve(campaign, locks.annotator, history, slot, locks.now)
    if not last_try:
        return None
    # Every item left was being taken by someone else: wait for them rather than tell the
    # annotator that nothing is left while one may still have room once they commit.
    for item_id in skipped:
        slot = locks.lock(item_id)
        if slot is not None and slot.has_room():
            return _reserve(campaign, locks.annotator, history, slot, locks.now)
    return None


def _candidates(plan: Plan, history: _History) -> Iterator[Candidate]:
    """Steps 4-6 of the queue, up to MAX_CANDIDATES each. A generator: the plan reads its
    free items only when no started item was taken."""
    fitting = [c for c in plan.started if not _conflict(history, c)]
    conflicting = [c for c in plan.started if _conflict(history, c)]
    yield from fitting[:MAX_CANDIDATES]
    yield from plan.free[:MAX_CANDIDATES]
    yield from conflicting[:MAX_CANDIDATES]


def reclaim_expired(campaign: Campaign, *, now: datetime | None = None) -> int:
    """Mark the campaign's lapsed reservations expired; returns how many rows changed.

    Slots free by the clock whether or not this runs; it makes the rows say what they are
    (for progress pages and exports). Rows locked by a submit in flight are left to it.
    """
    now = now or timezone.now()
    with transaction.atomic():
        stale_ids = list(
            Assignment.objects.select_for_update(skip_locked=True)
            .filter(campaign=campaign, status=RESERVED, expires_at__lte=now)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        if not stale_ids:
            return 0
        return Assignment.objects.filter(pk__in=stale_ids, status=RESERVED).update(status=EXPIRED)
