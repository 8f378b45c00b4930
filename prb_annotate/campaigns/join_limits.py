"""How many accounts an invite link makes, and for whom.

An invite link is seen by every participant of the study it is posted in, and Prolific's ids
are not secrets, so anyone could make up ``PROLIFIC_PID`` values and reserve the campaign's
slots with made-up accounts (each holds one reservation at a time), leaving the real
participants with "others are still working, check back". Two rules bound that:

- **The campaign's own study.** When a campaign names its Prolific study
  (``Campaign.prolific_study_id``), a link that carries another ``STUDY_ID`` (or none) makes no
  account (``WrongStudy``, 403).
- **A share of the slots per address.** The accounts made from one client address
  (``prb_annotate.addresses``: an IPv4 address, or an IPv6 /64) that have not submitted an
  answer yet may be at most ``PRB_JOIN_SHARE_PER_ADDRESS`` (10 % by default) of the campaign's
  slots (k per regular pair, with the extra and replacement slots), and at least one. Past
  that, the next new account from that address is refused (``TooManyJoins``, 429) until one of
  them submits; coming back to an existing account is never refused. A flood from one address
  therefore holds at most that share of the slots, and everyone else still gets work.

The count is rows in the database, read and written under a lock on the campaign's row, so
joins arriving at once across every worker are counted one after the other. Every flow that
makes an account through an invite link calls ``admit_new_account`` and then
``record_new_account`` in the transaction that makes it.
"""

import hmac
import math

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef, Sum

from prb_annotate.campaigns.lifecycle import InviteError
from prb_annotate.models import Assignment, Campaign, CampaignItem, InviteJoin


class JoinRefused(InviteError):
    """This link makes no account for this visitor now; nothing was written."""

    status = 403


class WrongStudy(JoinRefused):
    """The link carries another Prolific study than the campaign's."""


class TooManyJoins(JoinRefused):
    """This address has made as many new accounts as it may."""

    status = 429


def check_study(campaign: Campaign, study_id: str) -> None:
    """WrongStudy unless the campaign takes any study or ``study_id`` is its own."""
    expected = campaign.prolific_study_id
    if expected and not hmac.compare_digest(expected, study_id):
        raise WrongStudy(
            "This link belongs to another study. Open the study from your Prolific account, "
            "or contact the researcher."
        )


def slot_count(campaign: Campaign) -> int:
    """The campaign's slots: the annotations its regular pairs need, extras included."""
    items = CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.REGULAR)
    total = items.aggregate(slots=Sum(CampaignItem.slot_limit()))["slots"]
    return int(total or 0)


def accounts_per_address(campaign: Campaign) -> int:
    """How many accounts from one address may wait for their first answer at once."""
    return max(1, math.floor(settings.PRB_JOIN_SHARE_PER_ADDRESS * slot_count(campaign)))


def waiting_accounts(campaign: Campaign, address: str) -> int:
    """Accounts made from ``address`` in this campaign that have submitted nothing yet."""
    submitted = Assignment.objects.filter(
        campaign=campaign, annotator_id=OuterRef("user_id"), status=Assignment.Status.SUBMITTED
    )
    joins = InviteJoin.objects.filter(campaign=campaign, address=address)
    return joins.filter(~Exists(submitted)).count()


def admit_new_account(campaign: Campaign, address: str) -> None:
    """TooManyJoins when ``address`` may make no more accounts in ``campaign`` now.

    Call it inside the transaction that then makes the account: it locks the campaign's row
    (FOR NO KEY UPDATE, which rows referring to the campaign do not wait for), so that the
    count and the new row of one join are seen whole by the next.
    """
    Campaign.objects.select_for_update(no_key=True).filter(pk=campaign.pk).values("pk").get()
    if waiting_accounts(campaign, address) >= accounts_per_address(campaign):
        raise TooManyJoins(
            "Too many new participants from your network are starting this study at the "
            "moment. Please try again in a few minutes, or contact the researcher."
        )


def record_new_account(campaign: Campaign, user: User, address: str) -> None:
    InviteJoin.objects.create(campaign=campaign, user=user, address=address)
