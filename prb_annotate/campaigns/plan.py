"""The plan for next_assignment: regular items that may have room for one annotator.

A plan is a proposal: next_assignment locks and counts every candidate again before it takes
a slot, so a plan only decides the order in which items are tried. It must be cheap, because it
runs on every request for a new item (before the reserving transaction on SQLite, inside it
before any item lock on PostgreSQL).

Finding the started items means counting the slots of items handed out before, and a campaign
accumulates k rows per pair. Two facts keep the count small:

- a regular item that reached its target stays complete (submitted rows never go back), so
  once every item with a row below some row id is complete, rows below it never matter again:
  a *low-water mark*;
- items are opened in ``order_key`` order, so the items never handed out form a tail of that
  order: the walk for them can start where the last walk found the first one.

Items whose target the audit raised (``extra_annotations`` for a split vote,
``replacement_annotations`` for answers that left the audit) are complete items made
incomplete again; their rows may lie anywhere, so they are counted whole, and since finding
them means reading every item of the campaign, their ids are part of the marks.

Each web process remembers the marks per campaign (``_Hint``) and moves them forward as plans
show the way; every ``HINT_TTL_S`` seconds, and whenever no candidate turns up, a plan is made
from scratch. The marks can only be wrong after changes that make a complete item incomplete
again, which the rule above excludes except for deleted rows, a larger k (k is part of the
key) and a target raised since the last plan from scratch. When a mark is wrong, an item is
offered later than it should be, never wrongly and never lost: the exact plan runs before any
annotator is told that nothing is left.
"""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property
from typing import Any

from prb_annotate.db.plainsql import db_time, fetch, placeholders
from prb_annotate.models import RAISED_SLOTS_SQL

MAX_CANDIDATES = 8  # per step of the queue
HINT_TTL_S = 30.0
# Row ids are handed out when a row is inserted and become visible when its transaction
# commits, not necessarily in id order on PostgreSQL. The mark stays this many ids behind, far
# more than the rows that concurrent transactions can hold uncommitted.
ID_MARGIN = 200

# Items with their slots counted over some of their assignment rows: (item, occupied slots,
# occupied slots showing the chosen answer on A, submitted, rows of this annotator that keep the
# item from them - all but expired ones -, first row id counted, kind, extra annotations,
# order key). A slot is occupied by a submitted assignment or a reservation that has not
# expired. The items' own columns are joined after the counting, for the few items left.
COUNTS_SQL = """
SELECT g.item_id, g.occupied, g.shown_a, g.submitted, g.own, g.first_row,
       i.kind, {raised}, i.order_key
FROM (
    SELECT a.item_id,
           SUM(CASE WHEN a.status = 'submitted'
                         OR (a.status = 'reserved' AND a.expires_at > %s)
               THEN 1 ELSE 0 END) AS occupied,
           SUM(CASE WHEN a.chosen_position = 'A' AND (a.status = 'submitted'
                         OR (a.status = 'reserved' AND a.expires_at > %s))
               THEN 1 ELSE 0 END) AS shown_a,
           SUM(CASE WHEN a.status = 'submitted' THEN 1 ELSE 0 END) AS submitted,
           SUM(CASE WHEN a.annotator_id = %s AND a.status <> 'expired' THEN 1 ELSE 0 END) AS own,
           {first_row} AS first_row
    FROM prb_annotate_assignment a
    WHERE {rows}
    GROUP BY a.item_id
    {having}
) g JOIN prb_annotate_campaignitem i ON i.id = g.item_id
"""

# Items handed out since the low-water mark that are not complete on submitted answers. An
# item with rows below the mark is complete by the mark's definition, whatever the window
# shows. The first row is looked up per item (an index probe each): written as NOT EXISTS,
# PostgreSQL would hash every row below the mark instead.
WINDOW_ROWS = "a.campaign_id = %s AND a.id >= %s"
WINDOW_HAVING = "HAVING SUM(CASE WHEN a.status = 'submitted' THEN 1 ELSE 0 END) < %s"
BELOW_MARK = """
   AND (SELECT MIN(b.id) FROM prb_annotate_assignment b WHERE b.item_id = a.item_id) >= %s"""

EXTRA_ITEMS_SQL = """
SELECT id FROM prb_annotate_campaignitem
WHERE campaign_id = %s AND (extra_annotations > 0 OR replacement_annotations > 0)
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
    released: list[Candidate]  # handed out before, no occupied slot now
    exact: bool  # made from scratch, without the marks
    walk: Callable[[], list[Candidate]]  # the items never handed out, from the walk

    @cached_property
    def free(self) -> list[Candidate]:
        """Items with no occupied slot, in order_key order. Read on first use: most requests
        take a started item and never need the walk."""
        return sorted([*self.released, *self.walk()], key=lambda c: (c.order_key, c.item_id))


@dataclass
class _Hint:
    low_row_id: int  # every regular item with a row below this id is complete
    walk_from: int  # every regular item with a smaller order_key was handed out
    made_at: float
    extra_ids: tuple[int, ...] = ()  # items whose target the audit raised, counted whole


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
    eager: bool = True,
) -> Plan:
    """The regular items that may have room for this annotator, in queue order. With
    ``eager`` False the walk for items never handed out waits until ``free`` is read."""
    key = (campaign_id, invite_token, k)
    with _hints_lock:
        hint = _hints.get(key)
    if exact or hint is None or time.monotonic() - hint.made_at > HINT_TTL_S:
        extra_ids = tuple(row[0] for row in fetch(EXTRA_ITEMS_SQL, [campaign_id]))
        hint, exact = _Hint(0, 0, time.monotonic(), extra_ids), True

    started: list[Candidate] = []
    released: list[Candidate] = []
    first_rows: list[int] = []
    counted_whole = set(hint.extra_ids)
    for row in _counted_items(hint, campaign_id, k, annotator_id, now):
        item_id, occupied, shown_a, submitted, own, first_row, kind, extra, order_key = row
        from_window = first_row is not None
        if from_window and item_id in counted_whole:
            continue  # counted whole below
        if kind != "regular" or int(submitted) >= k + extra:
            continue
        if from_window and not extra:
            first_rows.append(first_row)
        if own or int(occupied) >= k + extra:
            continue
        candidate = Candidate(item_id, int(occupied), int(shown_a), order_key)
        (started if candidate.occupied else released).append(candidate)

    started.sort(key=lambda c: (c.occupied, c.order_key, c.item_id))
    moved = replace(
        hint,
        low_row_id=max(hint.low_row_id, min(first_rows) - ID_MARGIN)
        if first_rows
        else hint.low_row_id,
    )
    with _hints_lock:
        _hints[key] = moved
    if eager:
        never = _walk(key, moved, campaign_id)
        return Plan(started, released, exact, walk=lambda: never)
    return Plan(started, released, exact, walk=lambda: _walk(key, moved, campaign_id))


def _walk(key: tuple[int, str, int], hint: _Hint, campaign_id: int) -> list[Candidate]:
    """Regular items never handed out, from the hint's walk mark; moves the mark."""
    for span in WALK_SPANS:
        never = fetch(
            NEVER_HANDED_OUT_SQL,
            [campaign_id, hint.walk_from, hint.walk_from + span, MAX_CANDIDATES],
        )
        if len(never) == MAX_CANDIDATES:
            break
    if never:
        with _hints_lock:
            current = _hints.get(key)
            if current is not None and current.made_at == hint.made_at:
                _hints[key] = replace(current, walk_from=max(current.walk_from, never[0][1]))
    return [Candidate(item_id, 0, 0, order_key) for item_id, order_key in never]


def _counted_items(
    hint: _Hint, campaign_id: int, k: int, annotator_id: int, now: datetime
) -> list[tuple[Any, ...]]:
    """COUNTS_SQL rows: the window's items (with their first row counted), then the items
    with extra annotations (first row None), in one statement."""
    when = db_time(now)
    counts = [when, when, annotator_id]
    having = WINDOW_HAVING + (BELOW_MARK if hint.low_row_id else "")
    sql = COUNTS_SQL.format(
        rows=WINDOW_ROWS, having=having, first_row="MIN(a.id)", raised=RAISED_SLOTS_SQL
    )
    params = [*counts, campaign_id, hint.low_row_id, k]
    if hint.low_row_id:
        params.append(hint.low_row_id)
    if hint.extra_ids:
        rows = f"a.item_id IN ({placeholders(len(hint.extra_ids))})"
        whole = COUNTS_SQL.format(
            rows=rows, having="", first_row="CAST(NULL AS BIGINT)", raised=RAISED_SLOTS_SQL
        )
        sql = f"{sql} UNION ALL {whole}"
        params += [*counts, *hint.extra_ids]
    return fetch(sql, params)
