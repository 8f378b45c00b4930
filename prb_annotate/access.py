"""One helper per kind of access. Views call these first, before anything else.

- Staff users (``is_staff``) are the managers of the whole instance: they browse datasets and
  manage every campaign.
- A campaign's managers are staff plus members with the manager role in that campaign.
- An annotator sees a campaign only through their own membership; anything else is a 404, so
  that the existence of other campaigns and assignments is not revealed.
"""

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from prb_annotate.db.plainsql import columns, fetch, instance
from prb_annotate.models import Campaign, Membership

ViewFunc = TypeVar("ViewFunc", bound=Callable[..., HttpResponse])
AnyUser = AbstractBaseUser | AnonymousUser


def is_staff(user: AnyUser) -> bool:
    return bool(user.is_authenticated and getattr(user, "is_staff", False))


def staff_required(view: ViewFunc) -> ViewFunc:
    """Login required; a logged-in non-staff user gets 403."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_staff(request.user):
            raise PermissionDenied("Managers only.")
        return view(request, *args, **kwargs)

    return cast(ViewFunc, login_required(wrapper))


def can_manage(user: AnyUser, campaign: Campaign) -> bool:
    if is_staff(user):
        return True
    if not user.is_authenticated:
        return False
    return Membership.objects.filter(
        campaign=campaign, user_id=user.pk, role=Membership.Role.MANAGER
    ).exists()


def managed_campaign_or_404(user: AnyUser, campaign_id: int) -> Campaign:
    """The campaign if ``user`` manages it; 404 for anyone else (no existence leak)."""
    campaign = get_object_or_404(Campaign.objects.select_related("dataset"), pk=campaign_id)
    if not can_manage(user, campaign):
        raise Http404("No such campaign.")
    return campaign


def annotator_membership_or_404(user: AnyUser, campaign_id: int) -> Membership:
    """The user's annotator membership in the campaign; 404 when they are not in it."""
    if not user.is_authenticated:
        raise Http404("No such campaign.")
    return get_object_or_404(
        Membership.objects.select_related("campaign", "campaign__dataset"),
        campaign_id=campaign_id,
        user_id=user.pk,
        role=Membership.Role.ANNOTATOR,
    )


ANNOTATOR_CAMPAIGN_SQL = """
SELECT {} FROM prb_annotate_membership m JOIN prb_annotate_campaign c ON c.id = m.campaign_id
WHERE m.campaign_id = %s AND m.user_id = %s AND m.role = %s
"""


def annotator_campaign_or_404(user: AnyUser, campaign_id: int) -> Campaign:
    """The campaign (without its dataset) if the user is one of its annotators; 404 otherwise.

    The API's per-item requests need only the campaign: one plain query, no ORM query building.
    """
    if not user.is_authenticated:
        raise Http404("No such campaign.")
    rows = fetch(
        ANNOTATOR_CAMPAIGN_SQL.format(columns(Campaign, "c")),
        [campaign_id, user.pk, Membership.Role.ANNOTATOR.value],
    )
    if not rows:
        raise Http404("No such campaign.")
    return instance(Campaign, rows[0])
