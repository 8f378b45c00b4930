"""How many of a campaign's slots the accounts one network made through the invite link may
hold: at most ``PRB_SLOT_SHARE_PER_NETWORK`` (10 % by default) of the campaign's slots, and at
least one.

``join_limits`` bounds the *accounts* a network makes in a window; this bounds what they
*hold*. Without it a flood of accounts that keep answering, each proven by a gold answer that
chance made right, took every slot within the hour: the join limit had let in 12 accounts, and
12 accounts answering 40 items each is 480 answers. Here every account made from a network
counts, at any time in the campaign (submitted answers and live reservations of regular items),
so the flood holds at most its share and everyone else still gets work.

The queue reads the member's network in its own statement (``queue_sql.NETWORK_COLUMN``), and
for a member the link made counts the network's slots (``queue_sql.NETWORK_HELD_SQL``, one
statement more in their cycle) before reserving a new item. The campaign's slot count is a
sum over its items, so it is kept for ``SLOT_COUNT_SECONDS`` per campaign each time it is
counted (every join counts it; it moves only when a manager adds extra or replacement slots).
The price: participants behind one carrier or campus NAT (one IPv4 /24) share one share; a lab
study run from one network raises the setting (1.0 lets one network hold every slot).
"""

import math

from django.conf import settings
from django.core.cache import cache
from django.db.models import Sum

from prb_annotate.models import Campaign, CampaignItem

SLOT_COUNT_SECONDS = 60


def slot_count(campaign: Campaign) -> int:
    """The campaign's slots: the annotations its regular pairs need, extras included. Kept
    for the queue (see the module) each time it is counted: a join counts it anyway."""
    items = CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.REGULAR)
    total = int(items.aggregate(slots=Sum(CampaignItem.slot_limit()))["slots"] or 0)
    cache.set(_slot_count_key(campaign), total, SLOT_COUNT_SECONDS)
    return total


def _slot_count_key(campaign: Campaign) -> str:
    # The creation time is in the key: a test database reuses a rolled-back campaign's id.
    return f"prb:slot-count:{campaign.pk}:{campaign.created_at.timestamp()}"


def share_of(slots: int, share: float) -> int:
    """``share`` of ``slots``, rounded down, and at least one."""
    return max(1, math.floor(share * slots))


def slots_per_network(campaign: Campaign) -> int:
    """How many regular slots the accounts one network made through the link may hold (see
    the module), from the slot count kept at most ``SLOT_COUNT_SECONDS`` ago."""
    slots = cache.get(_slot_count_key(campaign))
    if slots is None:
        slots = slot_count(campaign)
    return share_of(int(slots), settings.PRB_SLOT_SHARE_PER_NETWORK)
