"""How many accounts an invite link makes, and for whom.

An invite link is seen by every participant of the study it is posted in, and Prolific's ids
are not secrets, so anyone could make up ``PROLIFIC_PID`` values and reserve the campaign's
slots with made-up accounts (each holds one reservation at a time), leaving the real
participants with "others are still working, check back". These rules bound that:

- **The campaign's own study.** When a campaign names its Prolific study
  (``Campaign.prolific_study_id``), a link that carries another ``STUDY_ID`` (or none) makes no
  account (``WrongStudy``, 403).
- **Listed by Prolific.** When the deployment has Prolific's API token
  (``PROLIFIC_API_TOKEN``) and the campaign names its study, a first join is admitted only if
  Prolific lists the participant among the study's submissions, neither returned nor timed
  out (``check_listed``): anyone else is refused (``NotInStudy``, 403) and logged. When Prolific
  cannot be reached or refuses the call, the join is refused too (``StudyUnchecked``, 503, "try
  again in a few minutes") and logged: every forged join makes the server call Prolific, so a
  flood can spend the token's rate limit, and a rule that admitted whoever came while Prolific
  did not answer would open the door exactly during the flood. Each refusal counts against
  the network's share (the next rule) as an account would, and a network over its share is
  refused before Prolific is asked: a flood of made-up ids from one network costs at most a
  share's calls to Prolific in a window.
- **A share of the slots per network.** The accounts made from one network
  (``prb_annotate.security.addresses.network_key``: an IPv4 /24, an IPv6 /48) within the last
  ``PRB_JOIN_WINDOW_MINUTES`` (60) may be at most ``PRB_JOIN_SHARE_PER_ADDRESS`` (10 % by
  default) of the campaign's slots (k per regular pair, with the extra and replacement slots),
  and at least one. Every such account counts, whether it has answered or not (answering junk
  does not free a place), except one screened out by the qualification (it holds no slot).
  Past that, the next new account from that network is refused (``TooManyJoins``, 429) until
  the oldest one is older than the window; coming back to an existing account is never
  refused. A flood from one network therefore holds at most that share of the slots in a
  window, and everyone else still gets work.

Joins from a network that used its whole share are a *burst* (``join_bursts``): the dashboard
lists them, and their accounts are left out of the audit in one action (``exclude_burst``).

The study and Prolific's list are checked before the start page's consent (``views/join.py``)
and again on the join itself. The count is rows in the database, read and written under a lock
on the campaign's row, so joins arriving at once across every worker are counted one after the
other. Every flow that makes an account through an invite link calls ``admit_new_account`` and then
``record_new_account`` in the transaction that makes it.
"""

import hmac
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Exists, F, Max, Min, OuterRef, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from prb_annotate.audit.exclusions import exclude_annotator
from prb_annotate.campaigns import prolific_api
from prb_annotate.campaigns.lifecycle import InviteError
from prb_annotate.campaigns.network_share import share_of, slot_count
from prb_annotate.models import (
    AnnotatorExclusion,
    Campaign,
    FailedLogin,
    InviteJoin,
    QualificationRecord,
)
from prb_annotate.models.access import PROLIFIC_REFUSAL_PREFIX

logger = logging.getLogger(__name__)


class JoinRefused(InviteError):
    """This link makes no account for this visitor now; nothing was written."""

    status = 403


class WrongStudy(JoinRefused):
    """The link carries another Prolific study than the campaign's."""


class TooManyJoins(JoinRefused):
    """This address has made as many new accounts as it may."""

    status = 429

    def __init__(self) -> None:
        # A network's count clears as its oldest account leaves the window, so the wait can be
        # as long as the window: said as it is.
        super().__init__(
            _(
                "Too many new participants from your network are starting this study at the "
                "moment. Please try again within %(minutes)d minutes, or contact the researcher."
            )
            % {"minutes": settings.PRB_JOIN_WINDOW_MINUTES}
        )


class NotInStudy(JoinRefused):
    """Prolific does not list this participant in the campaign's study."""

    def __init__(self) -> None:
        super().__init__(
            _(
                "Prolific does not list you as a participant of this study. Open the study from "
                "your Prolific account (its link brings you here), or contact the researcher."
            )
        )


class StudyUnchecked(JoinRefused):
    """Prolific could not say whether it lists this participant: refused, see the module."""

    status = 503

    def __init__(self) -> None:
        super().__init__(
            _(
                "We could not check your place in this study with Prolific just now. Please try "
                "again in a few minutes; nothing was recorded."
            )
        )


def check_study(campaign: Campaign, study_id: str) -> None:
    """WrongStudy unless the campaign takes any study or ``study_id`` is its own."""
    expected = campaign.prolific_study_id
    if expected and not hmac.compare_digest(expected, study_id):
        raise WrongStudy(
            _(
                "This link belongs to another study. Open the study from your Prolific "
                "account, or contact the researcher."
            )
        )


def accounts_per_address(campaign: Campaign, slots: int | None = None) -> int:
    """How many accounts one network may make in a window (see the module); ``slots``: the
    campaign's slot count where the caller has just read it."""
    counted = slot_count(campaign) if slots is None else slots
    return share_of(counted, settings.PRB_JOIN_SHARE_PER_ADDRESS)


def window_start() -> datetime:
    return timezone.now() - timedelta(minutes=settings.PRB_JOIN_WINDOW_MINUTES)


def holding_joins(campaign: Campaign) -> QuerySet[InviteJoin]:
    """The campaign's invite joins whose account may hold a slot: all but those screened out
    by the qualification."""
    screened_out = QualificationRecord.objects.filter(
        membership__campaign=campaign,
        membership__user_id=OuterRef("user_id"),
        outcome=QualificationRecord.Outcome.FAILED,
    )
    return InviteJoin.objects.filter(campaign=campaign).filter(~Exists(screened_out))


def counted_accounts(campaign: Campaign, network: str) -> int:
    """Accounts made from ``network`` in this campaign within the window, answered or not."""
    return holding_joins(campaign).filter(address=network, at__gte=window_start()).count()


def admit_new_account(campaign: Campaign, network: str) -> None:
    """TooManyJoins when ``network`` may make no more accounts in ``campaign`` now.

    Call it inside the transaction that then makes the account: it locks the campaign's row
    (FOR NO KEY UPDATE, which rows referring to the campaign do not wait for), so that the
    count and the new row of one join are seen whole by the next.
    """
    Campaign.objects.select_for_update(no_key=True).filter(pk=campaign.pk).values("pk").get()
    check_share(campaign, network)


def check_share(campaign: Campaign, network: str) -> None:
    """TooManyJoins when ``network`` has made its share of accounts in the window."""
    if counted_accounts(campaign, network) >= accounts_per_address(campaign):
        raise TooManyJoins()


def _prolific_refusals(campaign: Campaign, network: str) -> QuerySet[FailedLogin]:
    """Joins from ``network`` that Prolific's list refused in the window, kept as failed
    attempts (the name no account can have says which campaign)."""
    return FailedLogin.objects.filter(
        username=_refusal_name(campaign), address=network, at__gte=window_start()
    )


def _refusal_name(campaign: Campaign) -> str:
    return f"{PROLIFIC_REFUSAL_PREFIX}{campaign.pk}"


def _record_refusal(campaign: Campaign, network: str) -> None:
    """Keep the refusal; forget the campaign's refusals the window no longer counts (the
    login throttle leaves these rows alone, whatever its own windows)."""
    FailedLogin.objects.filter(username=_refusal_name(campaign), at__lt=window_start()).delete()
    FailedLogin.objects.create(username=_refusal_name(campaign), address=network)


def checks_study_list(campaign: Campaign) -> bool:
    """Whether the study link admits only the participants Prolific lists in the study: with
    Prolific's API token and the campaign's study named."""
    return prolific_api.configured() and bool(campaign.prolific_study_id)


def check_listed(campaign: Campaign, participant_id: str, network: str) -> None:
    """When ``checks_study_list``: NotInStudy unless Prolific lists ``participant_id`` in the
    study, StudyUnchecked when it cannot say (see the module). A network whose accounts and
    refusals fill its share is refused first (TooManyJoins), without a call to Prolific."""
    if not checks_study_list(campaign):
        return
    spent = counted_accounts(campaign, network) + _prolific_refusals(campaign, network).count()
    if spent >= accounts_per_address(campaign):
        raise TooManyJoins()
    study = campaign.prolific_study_id
    try:
        listed = prolific_api.takes_part(campaign, participant_id)
    except prolific_api.ProlificError as error:
        _record_refusal(campaign, network)
        logger.warning(
            "join refused: Prolific could not check participant %s of study %s "
            "(campaign %s, network %s): %s",
            participant_id,
            study,
            campaign.pk,
            network,
            error,
        )
        raise StudyUnchecked() from error
    if not listed:
        logger.warning(
            "join refused: Prolific does not list participant %s in study %s "
            "(campaign %s, network %s)",
            participant_id,
            study,
            campaign.pk,
            network,
        )
        _record_refusal(campaign, network)
        raise NotInStudy()


def record_new_account(campaign: Campaign, user: User, network: str) -> None:
    InviteJoin.objects.create(campaign=campaign, user=user, address=network)


@dataclass(frozen=True)
class JoinBurst:
    """A network that made a whole share's accounts: its accounts, first and last join."""

    network: str
    accounts: int
    first: datetime
    last: datetime
    excluded: int


def join_bursts(campaign: Campaign) -> list[JoinBurst]:
    """Networks that made at least a share's accounts in the campaign, most accounts first."""
    share = accounts_per_address(campaign)
    if share < 2:
        return []  # in a tiny campaign every joining network fills its share
    # Columns named as JoinBurst's fields.
    rows = (
        InviteJoin.objects.filter(campaign=campaign)
        .values(network=F("address"))
        .annotate(accounts=Count("pk"), first=Min("at"), last=Max("at"))
        .filter(accounts__gte=share)
        .order_by("-accounts", "network")
    )
    excluded = set(
        AnnotatorExclusion.objects.filter(campaign=campaign, lifted_at__isnull=True).values_list(
            "annotator_id", flat=True
        )
    )
    bursts = []
    for row in rows:
        users = burst_users(campaign, row["network"])
        bursts.append(JoinBurst(**row, excluded=len(excluded & set(users))))
    return bursts


def burst_users(campaign: Campaign, network: str) -> list[int]:
    return list(
        InviteJoin.objects.filter(campaign=campaign, address=network).values_list(
            "user_id", flat=True
        )
    )


def exclude_burst(campaign: Campaign, network: str, *, by: User | None) -> int:
    """Leave every account ``network`` made through the link out of the audit (those not
    left out already), in one transaction; how many were. Replacement slots follow."""
    reason = f"one of a burst of accounts made through the invite link from {network}"
    with transaction.atomic():
        users = User.objects.filter(pk__in=burst_users(campaign, network))
        done = 0
        for user in users:
            try:
                exclude_annotator(campaign, user, reason, by=by)
            except ValidationError:
                continue  # already left out, or no longer a member
            done += 1
    return done
