"""One helper per kind of access. Views call these first, before anything else.

- Staff users (``is_staff``) are the managers of the whole instance: they browse datasets and
  manage every campaign.
- A campaign's managers are staff plus members with the manager role in that campaign.
- An annotator sees a campaign only through their own membership; anything else is a 404, so
  that the existence of other campaigns and assignments is not revealed.
- An account made by an invite link (a ``Participant``) reaches the campaign it joined and
  nothing else: a membership anywhere else, however it came about, opens nothing, and it never
  manages. Every helper below applies this rule in the same query as the membership.
- Manager pages answer 404 to anyone who may not manage (never 403), like everything else here.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import F, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_POST

from prb_annotate.db.plainsql import columns, fetch, instance
from prb_annotate.models import Campaign, Membership

ViewFunc = TypeVar("ViewFunc", bound=Callable[..., HttpResponse])
AnyUser = AbstractBaseUser | AnonymousUser


def is_staff(user: AnyUser) -> bool:
    return bool(user.is_authenticated and getattr(user, "is_staff", False))


def staff_required(view: ViewFunc) -> ViewFunc:
    """Login required; a logged-in non-staff user gets 404, as for a campaign they cannot manage."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_staff(request.user):
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    return cast(ViewFunc, login_required(wrapper))


def can_manage(user: AnyUser, campaign: Campaign) -> bool:
    if is_staff(user):
        return True
    if not user.is_authenticated:
        return False
    return Membership.objects.filter(
        campaign=campaign,
        user_id=user.pk,
        role=Membership.Role.MANAGER,
        user__participant__isnull=True,  # accounts made by an invite link never manage
    ).exists()


def managed_campaigns(user: AnyUser) -> QuerySet[Campaign]:
    """The campaigns ``user`` manages, as every list shows them: all for staff, those with a
    manager membership otherwise, and none for an account made by an invite link."""
    if is_staff(user):
        return Campaign.objects.all()
    if not user.is_authenticated:
        return Campaign.objects.none()
    # A subquery, not a join: counts annotated over the memberships later stay whole.
    managed = Membership.objects.filter(
        user_id=user.pk, role=Membership.Role.MANAGER, user__participant__isnull=True
    )
    return Campaign.objects.filter(pk__in=managed.values("campaign_id"))


def annotator_memberships(user: AnyUser) -> QuerySet[Membership]:
    """The user's annotator memberships that open a campaign: an account made by an invite
    link has only the one of its own campaign, whatever else the admin added."""
    if not user.is_authenticated:
        return Membership.objects.none()
    return Membership.objects.filter(
        in_participant_scope(), user_id=user.pk, role=Membership.Role.ANNOTATOR
    )


def managed_campaign_or_404(user: AnyUser, campaign_id: int) -> Campaign:
    """The campaign if ``user`` manages it; 404 for anyone else (no existence leak)."""
    campaign = get_object_or_404(Campaign.objects.select_related("dataset"), pk=campaign_id)
    if not can_manage(user, campaign):
        raise Http404("No such campaign.")
    return campaign


def manager_action(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A form a campaign's managers post: login required (outermost), POST only, and the view
    called with the campaign (``managed_campaign_or_404``) in place of ``campaign_id``."""

    @wraps(view)
    def wrapper(request: HttpRequest, campaign_id: int, **kwargs: Any) -> HttpResponse:
        return view(request, managed_campaign_or_404(request.user, campaign_id), **kwargs)

    return login_required(require_POST(wrapper))


def annotator_membership_or_404(user: AnyUser, campaign_id: int) -> Membership:
    """The user's annotator membership in the campaign; 404 when they are not in it."""
    if not user.is_authenticated:
        raise Http404("No such campaign.")
    return get_object_or_404(
        Membership.objects.select_related("campaign", "campaign__dataset").filter(
            in_participant_scope()
        ),
        campaign_id=campaign_id,
        user_id=user.pk,
        role=Membership.Role.ANNOTATOR,
    )


def in_participant_scope() -> Q:
    """Memberships an account may use: any, unless an invite link made the account for
    another campaign."""
    return Q(user__participant__isnull=True) | Q(user__participant__campaign_id=F("campaign_id"))


# The same rule in plain SQL, for a query over ``prb_annotate_membership m``.
PARTICIPANT_SCOPE_SQL = """
NOT EXISTS (SELECT 1 FROM prb_annotate_participant p
            WHERE p.user_id = m.user_id AND p.campaign_id <> m.campaign_id)
"""


ANNOTATOR_CAMPAIGN_SQL = """
SELECT {} FROM prb_annotate_membership m JOIN prb_annotate_campaign c ON c.id = m.campaign_id
WHERE m.campaign_id = %s AND m.user_id = %s AND m.role = %s AND {}
"""


def annotator_campaign_or_404(user: AnyUser, campaign_id: int) -> Campaign:
    """The campaign (without its dataset) if the user is one of its annotators; 404 otherwise.

    The API's per-item requests need only the campaign: one plain query, no ORM query building.
    """
    if not user.is_authenticated:
        raise Http404("No such campaign.")
    rows = fetch(
        ANNOTATOR_CAMPAIGN_SQL.format(columns(Campaign, "c"), PARTICIPANT_SCOPE_SQL),
        [campaign_id, user.pk, Membership.Role.ANNOTATOR.value],
    )
    if not rows:
        raise Http404("No such campaign.")
    return instance(Campaign, rows[0])
