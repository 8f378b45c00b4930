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
(those accounts have no password by design).
"""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext, gettext_lazy, ngettext

from prb_annotate.audit.exclusions import exclude_annotator
from prb_annotate.campaigns.accounts import AddedAnnotator, link_for
from prb_annotate.models import (
    AnnotatorExclusion,
    Assignment,
    Campaign,
    Membership,
    Participant,
)

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


def reissue_set_password_link(campaign: Campaign, user: User, *, site: str) -> AddedAnnotator:
    """A new one-time "set your password" link for an annotator who has not set a password
    (mailed as well where email is configured). MemberError when the account cannot have one."""
    _annotator_membership(campaign, user)
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
