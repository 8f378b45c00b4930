"""Who may come in: study participants' accounts, logins and invite-link joins."""

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from prb_annotate.models.campaigns import USER_MODEL, Campaign

# The ``participant_id`` of an account the sign-up invite made: ``signup:<user id>``. A colon
# never appears in a study link's participant id (``joining.PARTICIPANT_ID``), so no link can
# ever resume such an account, and no study lists it.
SIGNUP_PARTICIPANT_PREFIX = "signup:"


class Participant(models.Model):
    """An account made by an invite link for one study participant, in one campaign only.

    An account made by the study link has no password: the values Prolific sent at its first
    join, or the resume key that join gave the participant's browser (kept here only as a
    hash), are what bring the same person back. An account made by the sign-up invite has a
    password and logs in as usual; its ``participant_id`` is ``signup:<user id>``, which no
    study link can carry (a colon is refused there), and it has no resume key. Either way
    ``prb_annotate.security.access`` lets it reach ``campaign`` and nothing else.
    """

    user = models.OneToOneField(
        USER_MODEL, on_delete=models.CASCADE, related_name="participant", verbose_name=_("User")
    )
    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="participants", verbose_name=_("Campaign")
    )
    participant_id = models.CharField(max_length=100, verbose_name=_("Participant id"))
    study_id = models.CharField(max_length=100, blank=True, verbose_name=_("Study id"))
    session_id = models.CharField(max_length=100, blank=True, verbose_name=_("Session id"))
    resume_key_hash = models.CharField(max_length=64, verbose_name=_("Resume key hash"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("Created at"))

    class Meta:
        verbose_name = _("study participant")
        verbose_name_plural = _("study participants")
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "participant_id"], name="participant_unique_per_campaign"
            )
        ]

    def __str__(self) -> str:
        return f"{self.participant_id}@{self.campaign_id}"


# The username of a study-link join that Prolific's list refused, kept as a ``FailedLogin`` row
# of the joining network (``campaigns/join_limits.py``), followed by the campaign's id. A colon
# is in no account's name. Such rows are not logins: they count against the network's share
# for ``PRB_JOIN_WINDOW_MINUTES``, and the login throttle neither prunes nor unlocks them.
PROLIFIC_REFUSAL_PREFIX = "prolific-refused:"


class FailedLogin(models.Model):
    """One failed login. Recent rows lock their username, or their client address, for a while
    (``prb_annotate.security.logins``); rows in the database are shared by every worker process.
    A row named with ``PROLIFIC_REFUSAL_PREFIX`` is a refused study-link join instead."""

    username = models.CharField(max_length=150, verbose_name=_("Username"))
    address = models.CharField(max_length=100, verbose_name=_("Address"))
    at = models.DateTimeField(default=timezone.now, verbose_name=_("At"))

    class Meta:
        verbose_name = _("failed login")
        verbose_name_plural = _("failed logins")
        indexes = [
            models.Index(fields=["username", "at"], name="failedlogin_username_at"),
            models.Index(fields=["address", "at"], name="failedlogin_address_at"),
        ]

    def __str__(self) -> str:
        return f"{self.username} from {self.address} at {self.at:%Y-%m-%d %H:%M:%S}"


class InviteJoin(models.Model):
    """An account made through a campaign's invite link, and the network it came from: counted
    per campaign, network and window by ``campaigns/join_limits.py``."""

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="invite_joins", verbose_name=_("Campaign")
    )
    user = models.ForeignKey(
        USER_MODEL, on_delete=models.CASCADE, related_name="+", verbose_name=_("User")
    )
    address = models.CharField(max_length=100, verbose_name=_("Address"))
    at = models.DateTimeField(default=timezone.now, verbose_name=_("At"))

    class Meta:
        verbose_name = _("invite-link join")
        verbose_name_plural = _("invite-link joins")
        indexes = [models.Index(fields=["campaign", "address"], name="invitejoin_address")]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.campaign_id} from {self.address}"


class KnownLogin(models.Model):
    """A username's last successful login from one address: failures from elsewhere do not lock
    the username out from here (``prb_annotate.security.logins``)."""

    username = models.CharField(max_length=150)
    address = models.CharField(max_length=100)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("known login")
        verbose_name_plural = _("known logins")
        constraints = [
            models.UniqueConstraint(fields=["username", "address"], name="knownlogin_unique")
        ]

    def __str__(self) -> str:
        return f"{self.username} from {self.address}"
