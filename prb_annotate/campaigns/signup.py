"""The sign-up invite: a link a manager shares with people who have no account yet.

``/signup/<signup_token>/`` shows a form (username, password); signing up makes an annotator
account for this campaign alone, as the study link does for Prolific participants: a
``Participant`` row ties it to the campaign, so ``security.access`` lets it reach nothing
else and it never manages. Unlike a participant's, the account has a password and logs in on
the login page like any other.

The link can be turned off and rotated (``lifecycle.set_link_enabled`` / ``rotate_link``); a
turned-off or old link answers as if it never existed. A closed campaign takes no sign-ups.
Like the study link, a sign-up counts against its client network's share of the campaign's
slots (``join_limits``): a flood of made-up accounts from one network cannot hold the queue.
"""

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from prb_annotate.campaigns.join_limits import admit_new_account, record_new_account
from prb_annotate.campaigns.lifecycle import (
    PROLIFIC_USERNAME_PREFIX,
    InvalidInvite,
    InviteClosed,
    open_link_campaign,
)
from prb_annotate.campaigns.places import check_places
from prb_annotate.models import Campaign, Membership, Participant
from prb_annotate.models.access import SIGNUP_PARTICIPANT_PREFIX

# Names the app gives accounts of its own kinds: nobody may take one by signing up.
RESERVED_PREFIXES = (PROLIFIC_USERNAME_PREFIX, "simulated-")


def campaign_for_signup(token: str) -> Campaign:
    """The campaign whose sign-up invite carries ``token``; InvalidInvite when none does or the
    invite is turned off, InviteClosed when the campaign is closed."""
    campaign = open_link_campaign("signup", token)
    if campaign is None:
        raise InvalidInvite(_("No such invite."))
    if campaign.status == Campaign.Status.CLOSED:
        raise InviteClosed(_("This campaign is closed."))
    return campaign


def check_username(username: str) -> None:
    """ValidationError (on ``username``) for a name the app keeps for its own accounts."""
    if username.lower().startswith(RESERVED_PREFIXES):
        raise ValidationError(
            {"username": _("Names starting with “prolific-” or “simulated-” are reserved.")}
        )


def sign_up(
    token: str, username: str, password: str, *, address: str, email: str = ""
) -> Membership:
    """Make an annotator account for the invite's campaign alone, and its membership.

    ``password`` has been checked by the form (Django's password validators); ``address`` is
    the client's network (``addresses.client_network``). Raises InvalidInvite, InviteClosed,
    TooManyJoins (this network's accounts hold their share of the slots), or ValidationError
    on ``username`` (reserved, or taken); nothing is written when it raises.
    """
    campaign = campaign_for_signup(token)
    check_username(username)
    if User.objects.filter(username__iexact=username).exists():
        # A look-alike ("Manager" beside "manager") is as taken as the name itself.
        raise ValidationError({"username": _("This username is taken.")})
    try:
        with transaction.atomic():
            admit_new_account(campaign, address)
            check_places(campaign)  # under the campaign lock admit_new_account took
            user = User.objects.create_user(username, email=email, password=password)
            Participant.objects.create(
                user=user,
                campaign=campaign,
                participant_id=f"{SIGNUP_PARTICIPANT_PREFIX}{user.pk}",
                resume_key_hash="",
            )
            membership = Membership.objects.create(
                campaign=campaign, user=user, role=Membership.Role.ANNOTATOR
            )
            record_new_account(campaign, user, address)
    except IntegrityError as error:
        # Two people (or one double click) taking the same name: the unique username decides.
        raise ValidationError({"username": _("This username is taken.")}) from error
    return membership
