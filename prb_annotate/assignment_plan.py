"""The plan for next_assignment: regular items that may have room for one annotator.

A plan is a proposal computed *before* the reserving transaction opens: next_assignment locks
and counts every candidate again before it takes a slot, so a plan only decides the order in
which items are tried. It must be cheap, because it runs on every request for a new item.

Finding the started items means counting the slots of items handed out before, and a campaign
accumulates k rows per pair. Two facts keep the count small:

- a regular item that reached its target stays complete (submitted rows never go back), so
  once every item with a row below some row id is complete, rows below it never matter again:
  a *low-water mark*;
- items are opened in ``order_key`` order, so the items never handed out form a tail of that
  order: the walk for them can start where the last walk found the first one.

Each web process remembers both marks per campaign (``_Hint``) and moves them forward as plans
show the way; every ``HINT_TTL_S`` seconds, and whenever no candidate turns up, a plan is made
from scratch. The marks can only be wrong after changes that make a complete item incomplete
again, which the rule above excludes except for deleted rows and a larger k (k is part of the
key); a larger ``extra_annotations`` is read on every plan. When a mark is wrong, an item is
offered later than it should be, never wrongly and never lost: the exact plan runs before any
annotator is told that nothing is left.
"""

import threading
import time
from dataclasses import dataclass
from datetime import datetime

from prb_annotate.plainsql import db_time, fetch, placeholders

MAX_CANDIDATES = 8  # per step of the queue
HINT_TTL_S = 30.0
# Row ids are handed out when a row is inserted and become visible when its transaction
# commits, not necessarily in id order on PostgreSQL. The mark stays this many ids behind, far
# more than the rows that concurrent transactions can hold uncommitted.
ID_MARGIN = 200

# Both count an item's slots over some of its assignment rows: (item, occupied slots, occupied
# slots showing the chosen answer on A, submitted, rows of this annotator that keep the item
# from them - all but expired ones -, first row id). A slot is occupied by a submitted
# assignment or a reservation that has not expired. Both queries below share this select list.
ITEM_COUNTS_SELECT = """
SELECT a.item_id,
       SUM(CASE WHEN a.status = 'submitted' OR (a.status = 'reserved' AND a.expires_at > %s)
           THEN 1 ELSE 0 END),
       SUM(CASE WHEN a.chosen_position = 'A' AND (a.status = 'submitted'
                     OR (a.status = 'reserved' AND a.expires_at > %s))
           THEN 1 ELSE 0 END),
       SUM(CASE WHEN a.status = 'submitted' THEN 1 ELSE 0 END),
       SUM(CASE WHEN a.annotator_id = %s AND a.status <> 'expired' THEN 1 ELSE 0 END),
       MIN(a.id)
"""

# Items handed out since the low-water mark that are not complete on submitted answers. An item
# with rows below the mark is complete by the mark's definition, whatever the window shows.
SINCE_MARK_SQL = (
    ITEM_COUNTS_SELECT  # noqa: S608 - two constants joined; values go in as parameters
    + """FROM prb_annotate_assignment a
WHERE a.campaign_id = %s AND a.id >= %s
GROUP BY a.item_id
HAVING SUM(CASE WHEN a.status = 'submitted' THEN 1 ELSE 0 END) < %s
   AND NOT EXISTS (
       SELECT 1 FROM prb_annotate_assignment b WHERE b.item_id = a.item_id AND b.id < %s)
"""
)

# Items whose target the audit raised: their rows may lie anywhere, so they are counted whole.
EXTRA_COUNTS_SQL = (
    ITEM_COUNTS_SELECT
    + """FROM prb_annotate_assignment a
WHERE a.item_id IN ({})
GROUP BY a.item_id
"""
)

EXTRA_ITEMS_SQL = """
SELECT id FROM prb_annotate_campaignitem WHERE campaign_id = %s AND extra_annotations > 0
"""

ITEMS_SQL = """
SELECT id, kind, extra_annotations, order_key FROM prb_annotate_campaignitem WHERE id IN ({})
"""

# Regular items never handed out, in queue order, from the first one the last walk found. The
# order keys of a campaign are a permutation of 0..n-1, so a short range of keys usually holds
# enough of them; the range widens when it does not.
NEVER_HANDED_OUT_SQL = """
SELECT i.id, i.order_key FROM prb_annotate_campaignitem i
WHERE i.campaign_id = %s AND i.kind = 'regular' AND i.order_key >= %s AND i.order_key < %s
  AND NOT EXISTS (SELECT 1 FROM prb_annotate_assignment a WHERE a.item_id = i.id)
ORDER BY i.order_key, i.id
LIMIT %s
"""
WALK_SPANS = (64, 1024, 2**62)


@dataclass(frozen=True)
class Candidate:
    item_id: int
    occupied: int
    shown_a: int
    order_key: int


@dataclass(frozen=True)
class Plan:
    """Regular items that may have room for the annotator, as seen a moment ago."""

    started: list[Candidate]  # least occupied first, then order_key
    free: list[Candidate]  # no occupied slot, in order_key order
    exact: bool  # made from scratch, without the marks


@dataclass
class _Hint:
    low_row_id: int  # every regular item with a row below this id is complete
    walk_from: int  # every regular item with a smaller order_key was handed out
    made_at: float


# (campaign id, invite token, k) -> marks. The invite token is random per campaign, so a
# campaign id reused by another database (tests, a restored backup) never finds stale marks.
_hints: dict[tuple[int, str, int], _Hint] = {}
_hints_lock = threading.Lock()


def plan_for(
    *,
    campaign_id: int,
    invite_token: str,
    k: int,
    annotator_id: int,
    now: datetime,
    exact: bool = False,
) -> Plan:
    """The regular items that may have room for this annotator, in queue order."""
    key = (campaign_id, invite_token, k)
    with _hints_lock:
        hint = _hints.get(key)
    if exact or hint is None or time.monotonic() - hint.made_at > HINT_TTL_S:
        hint, exact = _Hint(0, 0, time.monotonic()), True

    when = db_time(now)
    counts = [when, when, annotator_id]
    rows = fetch(SINCE_MARK_SQL, [*counts, campaign_id, hint.low_row_id, k, hint.low_row_id])
    extra_ids = [row[0] for row in fetch(EXTRA_ITEMS_SQL, [campaign_id])]
    if extra_ids:
        in_list = placeholders(len(extra_ids))
        whole = fetch(EXTRA_COUNTS_SQL.format(in_list), [*counts, *extra_ids])
        rows = [row for row in rows if row[0] not in set(extra_ids)] + whole
    items = {}
    if rows:
        ids = [row[0] for row in rows]
        items = {
            item_id: (kind, extra, order_key)
            for item_id, kind, extra, order_key in fetch(
                ITEMS_SQL.format(placeholders(len(ids))), ids
            )
        }
    started: list[Candidate] = []
    free: list[Candidate] = []
    first_rows: list[int] = []
    for item_id, occupied, shown_a, submitted, own, first_row in rows:
        if item_id not in items:
            continue
        kind, extra, order_key = items[item_id]
        if kind != "regular" or int(submitted) >= k + extra:
            continue
        if not extra:  # items with extra annotations are counted whole every time
            first_rows.append(first_row)
        if own or int(occupied) >= k + extra:
            continue
        candidate = Candidate(item_id, int(occupied), int(shown_a), order_key)
        (started if candidate.occupied else free).append(candidate)

    for span in WALK_SPANS:
        never = fetch(
            NEVER_HANDED_OUT_SQL,
            [campaign_id, hint.walk_from, hint.walk_from + span, MAX_CANDIDATES],
        )
        if len(never) == MAX_CANDIDATES:
            break
    free += [Candidate(item_id, 0, 0, order_key) for item_id, order_key in never]
    started.sort(key=lambda c: (c.occupied, c.order_key, c.item_id))
    free.sort(key=lambda c: (c.order_key, c.item_id))

    moved = _Hint(
        low_row_id=max(hint.low_row_id, min(first_rows) - ID_MARGIN)
        if first_rows
        else hint.low_row_id,
        walk_from=never[0][1] if never else hint.walk_from,
        made_at=hint.made_at,
    )
    with _hints_lock:
        _hints[key] = moved
    return Plan(started=started, free=free, exact=exact)
