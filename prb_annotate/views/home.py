"""The home page (each annotator's work, a manager's datasets and campaigns) and the app's own
completion page."""

from typing import cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from prb_annotate.campaigns.progress import member_standing
from prb_annotate.models import Dataset
from prb_annotate.security.access import annotator_memberships, is_staff, managed_campaigns


@login_required
def home(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)  # login_required
    # A campaign not started yet is listed too: the sign-up invite makes accounts for it, and
    # its members would otherwise be told they belong to none.
    memberships = annotator_memberships(user).select_related("campaign").order_by("campaign__name")
    staff = is_staff(user)
    managed = managed_campaigns(user)
    context = {
        # Each annotator sees how far they are in each campaign: one statement per campaign.
        "memberships": [(m, member_standing(m.campaign, user)) for m in memberships],
        "datasets": Dataset.objects.all() if staff else [],
        "campaigns": managed,
    }
    return render(request, "prb_annotate/home.html", context)


def completed(request: HttpRequest) -> HttpResponse:
    """A completion page of the app's own: where a campaign's completion URL can point when
    no crowd platform takes the participants back (the demo's campaign does)."""
    return render(request, "prb_annotate/completed.html")
