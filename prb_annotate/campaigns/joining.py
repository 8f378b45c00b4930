"""Joining a campaign through its invite link as a study participant, and coming back.

A participant arrives with the values Prolific appends to the study link: ``PROLIFIC_PID``
(the person), ``STUDY_ID`` and ``SESSION_ID`` (this person's run of this study). None of them is
a secret: anyone who has seen a participant id could type it. So:

- The first join makes an account for this campaign alone (a ``Participant`` row beside the
  user): it has no password, and ``prb_annotate.security.access`` lets it reach nothing but this
  campaign. The same participant id in another campaign is another account.
- That join gives the browser a resume key (random, 256 bits), kept by the browser in a signed
  HttpOnly cookie and by the server only as a SHA-256 hash.
- Coming back without a live session resumes the account only with that key, or when
  ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID`` all equal what the first join stored
  (Prolific sends the same three again when the participant reopens their study). Anything
  else is refused (``ResumeRefused``): the visitor is not logged in.
- Passwords, staff and every account not made by an invite link are never logged in here.
- A first join is admitted by ``join_limits``: the campaign's own Prolific study only (when it
  names one), a participant Prolific lists in that study (with Prolific's API token), and a
  share of the campaign's slots per client network and hour.
"""

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from prb_annotate.campaigns.join_limits import (
    admit_new_account,
    check_listed,
    check_study,
    record_new_account,
)
from prb_annotate.campaigns.lifecycle import (
    PROLIFIC_USERNAME_PREFIX,
    InvalidInvite,
    InviteClosed,
    InviteError,
    campaign_for_token,
)
from prb_annotate.campaigns.places import check_places
from prb_annotate.models import Campaign, Membership, Participant

PROLIFIC_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")
# Prolific's ids are 24 hex characters; accept any short id of safe characters.
PARTICIPANT_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")
SESSION_VALUE = re.compile(r"[A-Za-z0-9_-]{0,100}")
RESUME_COOKIE_PREFIX = "prb_resume_"
RESUME_COOKIE_SALT = "prb_annotate.joining.resume"
# Long enough for a study, short enough that a forgotten browser does not keep the key forever.
RESUME_COOKIE_MAX_AGE = 60 * 60 * 24 * 90


class BadJoinParameters(InviteError):
    """The link's participant values are malformed (views answer 400); nothing was written."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class ResumeRefused(InviteError):
    """This participant id has an account here, and nothing proves this visitor is its owner."""


@dataclass(frozen=True)
class StudyIds:
    participant_id: str
    study_id: str
    session_id: str


@dataclass(frozen=True)
class ParticipantJoin:
    membership: Membership
    # The browser's new resume key (set it in the cookie), or None when it keeps its own.
    resume_key: str | None


def study_ids(params: Mapping[str, str]) -> StudyIds:
    """The three Prolific values from a link's parameters, checked; BadJoinParameters if not."""
    values = {name: (params.get(name) or "").strip() for name in PROLIFIC_PARAMS}
    if not PARTICIPANT_ID.fullmatch(values["PROLIFIC_PID"]):
        raise BadJoinParameters(
            "PROLIFIC_PID", _("a participant id is 1 to 100 letters, digits, '-' or '_'.")
        )
    for name in ("STUDY_ID", "SESSION_ID"):
        if not SESSION_VALUE.fullmatch(values[name]):
            raise BadJoinParameters(name, _("at most 100 letters, digits, '-' or '_'."))
    return StudyIds(values["PROLIFIC_PID"], values["STUDY_ID"], values["SESSION_ID"])


def resume_cookie_name(campaign: Campaign) -> str:
    return f"{RESUME_COOKIE_PREFIX}{campaign.pk}"


def join_as_participant(
    token: str, ids: StudyIds, *, resume_key: str = "", address: str = ""
) -> ParticipantJoin:
    """Make the participant's account on first join, or resume it as the module says.

    ``resume_key`` is the key from the browser's cookie (empty when it has none), ``address``
    the client's network (``addresses.client_network``). Raises InvalidInvite, InviteClosed,
    ResumeRefused, ``join_limits.JoinRefused`` or ``places.NoPlacesLeft`` (a new account only);
    nothing is written when it raises.
    """
    campaign = campaign_for_token(token)
    if campaign.status == Campaign.Status.CLOSED:
        raise InviteClosed(_("This campaign is closed."))
    existing = _participant(campaign, ids.participant_id)
    if existing is None:
        check_study(campaign, ids.study_id)
        # Outside the transaction: no row lock is held while Prolific answers.
        check_listed(campaign, ids.participant_id, address)
        try:
            return _first_join(campaign, ids, address)
        except IntegrityError:
            # The same participant's other request (a double click) made the account first.
            existing = _participant(campaign, ids.participant_id)
            if existing is None:
                raise InvalidInvite(_("This participant id cannot be used here.")) from None
    return _resume(existing, ids, resume_key)


def _participant(campaign: Campaign, participant_id: str) -> Participant | None:
    return (
        Participant.objects.select_related("user")
        .filter(campaign=campaign, participant_id=participant_id)
        .first()
    )


def _first_join(campaign: Campaign, ids: StudyIds, address: str) -> ParticipantJoin:
    username = f"{PROLIFIC_USERNAME_PREFIX}{campaign.pk}-{ids.participant_id}"
    key = secrets.token_urlsafe(32)
    with transaction.atomic():
        admit_new_account(campaign, address)
        check_places(campaign)  # under the campaign lock admit_new_account took
        if User.objects.filter(username=username).exists():
            # An account of another kind carries this name: never open it through a link.
            raise InvalidInvite(_("This participant id cannot be used here."))
        user = User(username=username)
        user.set_unusable_password()
        user.save()
        Participant.objects.create(
            user=user,
            campaign=campaign,
            participant_id=ids.participant_id,
            study_id=ids.study_id,
            session_id=ids.session_id,
            resume_key_hash=_hash(key),
        )
        membership = Membership.objects.create(
            campaign=campaign, user=user, role=Membership.Role.ANNOTATOR, **asdict(ids)
        )
        record_new_account(campaign, user, address)
    return ParticipantJoin(membership, key)


def _resume(participant: Participant, ids: StudyIds, resume_key: str) -> ParticipantJoin:
    if resume_key and hmac.compare_digest(_hash(resume_key), participant.resume_key_hash):
        return ParticipantJoin(_membership(participant), None)
    if not _same_study_session(participant, ids):
        raise ResumeRefused(
            _(
                "This study link was already used to start this campaign, in another browser "
                "or session. Open the study again from your Prolific account (the same study "
                "link brings you back), or contact the researcher."
            )
        )
    # A new browser: it gets a key of its own; the old one still resumes with the link's ids.
    key = secrets.token_urlsafe(32)
    participant.resume_key_hash = _hash(key)
    participant.save(update_fields=["resume_key_hash"])
    return ParticipantJoin(_membership(participant), key)


def _same_study_session(participant: Participant, ids: StudyIds) -> bool:
    """All three values match, and the first join had all three (else only the key resumes)."""
    stored = (participant.participant_id, participant.study_id, participant.session_id)
    given = (ids.participant_id, ids.study_id, ids.session_id)
    if not all(stored):
        return False
    return all(hmac.compare_digest(a, b) for a, b in zip(stored, given, strict=True))


def _membership(participant: Participant) -> Membership:
    # Made with the account; a manager may have removed it since, which ends the participation.
    membership = Membership.objects.filter(
        campaign_id=participant.campaign_id, user_id=participant.user_id
    ).first()
    if membership is None:
        raise ResumeRefused(_("You are no longer a participant of this campaign."))
    membership.user = participant.user
    return membership


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def participant_campaign_id(user: User) -> int | None:
    """The campaign an invite link made ``user`` for, or None for any other account."""
    row = Participant.objects.filter(user_id=user.pk).values_list("campaign_id", flat=True)
    return row.first()
