"""A campaign's members, repaired from the dashboard: remove an annotator, and give an account
that never set its password a new "set your password" link; and a study participant who
returns the study.

Removing an annotator ends their membership and frees the items they hold at once (their
reservations expire now instead of by the clock). Their submitted answers stay in the database
either way; the manager chooses whether the audit keeps them (``KEEP``) or leaves them out
(``LEAVE_OUT``: an exclusion with its reason, as the dashboard's exclusion makes, so that
replacement slots open for their pairs and the exclusion can be lifted later). A study
participant's account keeps its Prolific id (``Participant``) after the removal, so one whose
answers are left out stays on Prolific's approval list, with ``reject`` (``prolific.py``).

A new link is the one ``add_annotators`` gives (``set_password_path``): it works once, for
``PASSWORD_RESET_TIMEOUT`` at most. Only for an annotator of the campaign whose account has no
usable password, is no staff account, and was made by a manager rather than through a link
(those accounts have no password by design); and only to a manager who may speak for the
account (``may_speak_for``): whoever holds the link chooses the password and logs in as the
account, wherever else it is a member.

Members are named by their account's id in the requests that act on one
(``campaign_account_or_404``): an id the campaign does not know answers 404, the same whether
or not such an account exists, so that no request names an account outside the campaign.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.http import Http404
from django.utils.translation import gettext, gettext_lazy, ngettext

from prb_annotate.audit.exclusions import exclude_annotator
from prb_annotate.campaigns.accounts import AddedAnnotator, link_for
from prb_annotate.models import (
    AnnotatorExclusion,
    Assignment,
    Campaign,
    Membership,
    Participant,
    QualificationAnswer,
)
from prb_annotate.security.access import is_staff, managed_campaigns

KEEP = "keep"
LEAVE_OUT = "leave_out"
ANSWER_CHOICES = {
    KEEP: gettext_lazy("keep their answers in the audit"),
    LEAVE_OUT: gettext_lazy("leave their answers out of the audit"),
}
REMOVAL_REASON = "removed from the campaign"


class MemberError(ValueError):
    """The change cannot be made; nothing was written. ``field`` names what was wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class NotYoursToSpeakFor(MemberError):
    """The requester may not be handed a key to the account (``may_speak_for``): a refusal
    (403), not bad input. Its message names no other campaign."""


@dataclass(frozen=True)
class RemovedMember:
    username: str
    answers: str  # KEEP or LEAVE_OUT
    submitted: int  # their submitted answers, kept in the database either way
    freed: int  # reservations freed now
    left_out: bool  # their answers are out of the audit now

    @property
    def statement(self) -> str:
        """What the removal did, said on the page (in its reader's language) and in the API's
        answer."""
        count = self.submitted
        if self.left_out:
            answers = ngettext(
                "their %(count)d answer is left out of the audit",
                "their %(count)d answers are left out of the audit",
                count,
            )
        else:
            answers = ngettext(
                "their %(count)d answer stays in the audit",
                "their %(count)d answers stay in the audit",
                count,
            )
        freed = ngettext(
            "%(count)d reserved item freed", "%(count)d reserved items freed", self.freed
        )
        return gettext("%(username)s is no longer a member: %(answers)s; %(freed)s.") % {
            "username": self.username,
            "answers": answers % {"count": count},
            "freed": freed % {"count": self.freed},
        }


def campaign_account_or_404(campaign: Campaign, user_id: int) -> User:
    """The account ``user_id`` when the campaign knows it: a member of it (any role), or an
    account that was handed one of its items or excluded from its audit (a removed member's
    answers and exclusions stay). Http404, naming no one, for any other id, whether or not
    such an account exists: an id is no way to learn who has an account elsewhere."""
    known = (
        Exists(Membership.objects.filter(campaign=campaign, user=OuterRef("pk")))
        | Exists(Assignment.objects.filter(campaign=campaign, annotator=OuterRef("pk")))
        | Exists(AnnotatorExclusion.objects.filter(campaign=campaign, annotator=OuterRef("pk")))
    )
    user = User.objects.filter(known, pk=user_id).first()
    if user is None:
        raise Http404(gettext("No such member of this campaign."))
    return user


def may_speak_for(requester: AbstractBaseUser | AnonymousUser, account: User) -> bool:
    """Whether ``requester`` may be handed a key to ``account``, such as a new set-password
    link: whoever holds one chooses the account's password and logs in as it, so it goes only
    to someone who already answers for everything the account can reach.

    - Staff manage every campaign and may speak for any account (a staff account still gets
      no link from a campaign: ``reissue_set_password_link`` sends them to the admin).
    - A manager without staff rights may speak only for an account that is no staff account,
      manages no campaign, and whose every tie to a campaign is in a campaign the requester
      manages. Its ties are its memberships, the items it was handed, its qualification
      answers, its exclusions and the link that made it: an answer left in a campaign the
      account was removed from counts too, since that campaign's managers may add it back.
    - Anyone else: no one.
    """
    if is_staff(requester):
        return True
    if not requester.is_authenticated or account.is_staff or account.is_superuser:
        return False
    if Membership.objects.filter(user=account, role=Membership.Role.MANAGER).exists():
        return False
    managed = set(managed_campaigns(requester).values_list("pk", flat=True))
    return _campaigns_tied_to(account) <= managed


def _campaigns_tied_to(account: User) -> set[int]:
    """The ids of the campaigns where ``account`` is a member, was handed an item, answered a
    qualification item, was excluded, or was made by an invite link."""
    ties = [
        Membership.objects.filter(user=account).values_list("campaign_id", flat=True),
        Assignment.objects.filter(annotator=account).values_list("campaign_id", flat=True),
        QualificationAnswer.objects.filter(annotator=account).values_list(
            "item__campaign_id", flat=True
        ),
        AnnotatorExclusion.objects.filter(annotator=account).values_list("campaign_id", flat=True),
        Participant.objects.filter(user=account).values_list("campaign_id", flat=True),
    ]
    return {campaign_id for rows in ties for campaign_id in rows.distinct()}


def _annotator_membership(campaign: Campaign, user: User) -> Membership:
    membership = Membership.objects.filter(campaign=campaign, user=user).first()
    if membership is None or membership.role != Membership.Role.ANNOTATOR:
        raise MemberError(
            "annotator",
            gettext("%(name)s is not an annotator of this campaign.")
            % {"name": user.get_username()},
        )
    return membership


def remove_member(
    campaign: Campaign, user: User, answers: str, *, by: User | None
) -> RemovedMember:
    """End the annotator's membership, free their reservations, and keep or leave out their
    answers as ``answers`` says (MemberError, nothing written, for anything else)."""
    if answers not in ANSWER_CHOICES:
        raise MemberError(
            "answers",
            gettext("answers must be one of: %(choices)s.")
            % {"choices": ", ".join(ANSWER_CHOICES)},
        )
    with transaction.atomic():
        membership = _annotator_membership(campaign, user)
        own = Assignment.objects.filter(campaign=campaign, annotator=user)
        freed = own.filter(status=Assignment.Status.RESERVED).update(
            status=Assignment.Status.EXPIRED
        )
        submitted = own.filter(status=Assignment.Status.SUBMITTED).count()
        excluded = AnnotatorExclusion.objects.filter(
            campaign=campaign, annotator=user, lifted_at__isnull=True
        ).exists()
        if answers == LEAVE_OUT and not excluded:
            # Excluded while still a member: the exclusion checks membership.
            exclude_annotator(campaign, user, REMOVAL_REASON, by=by)
            excluded = True
        membership.delete()
    return RemovedMember(user.get_username(), answers, submitted, freed, excluded)


def offers_new_link(
    requester: AbstractBaseUser | AnonymousUser, members: Iterable[Membership]
) -> set[int]:
    """The ids of the annotator members ``requester`` may ask a new set-password link for, as
    ``reissue_set_password_link`` decides: the dashboard offers the button to those alone.
    ``members`` carry their user and its participant row (``select_related``)."""
    return {
        member.user_id
        for member in members
        if member.role == Membership.Role.ANNOTATOR
        and not (member.user.is_staff or member.user.is_superuser)
        and not hasattr(member.user, "participant")
        and not member.user.has_usable_password()
        and may_speak_for(requester, member.user)
    }


def reissue_set_password_link(
    campaign: Campaign,
    user: User,
    *,
    site: str,
    by: AbstractBaseUser | AnonymousUser,
) -> AddedAnnotator:
    """A new one-time "set your password" link for an annotator who has not set a password
    (mailed as well where email is configured), asked for by ``by``. NotYoursToSpeakFor when
    ``by`` may not speak for the account (``may_speak_for``), checked before anything about the
    account is said; MemberError when the account cannot have one."""
    _annotator_membership(campaign, user)
    if not may_speak_for(by, user):
        raise NotYoursToSpeakFor(
            "annotator",
            gettext(
                "Only staff can give this account a new set-password link: it is not only an "
                "annotator of campaigns you manage."
            ),
        )
    name = user.get_username()
    if user.is_staff or user.is_superuser:
        raise MemberError(
            "annotator",
            gettext("%(name)s is a staff account; it is managed in the admin.") % {"name": name},
        )
    if Participant.objects.filter(user_id=user.pk).exists():
        raise MemberError(
            "annotator",
            gettext("%(name)s joined through a link and signs in through it, not a password.")
            % {"name": name},
        )
    if user.has_usable_password():
        raise MemberError(
            "annotator",
            gettext("%(name)s has set a password already; they log in with it.") % {"name": name},
        )
    return link_for(user, campaign, site)


def study_participant(campaign: Campaign, user: User) -> bool:
    """The account came through the campaign's study link (a Prolific participant); sign-up
    accounts carry a ``signup:`` id and are no study's."""
    row = Participant.objects.filter(user_id=user.pk, campaign=campaign).first()
    return row is not None and not row.participant_id.startswith("signup:")


def return_study(campaign: Campaign, user: User) -> RemovedMember:
    """A study participant returns the study (as Prolific's "return" does): their reserved
    items go back to the queue at once, not when the reservation times out, and their
    membership ends; what they submitted stays in the audit. MemberError for anyone else."""
    if not study_participant(campaign, user):
        raise MemberError("annotator", "Only a study participant can return the study.")
    return remove_member(campaign, user, KEEP, by=None)
