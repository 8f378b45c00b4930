from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from prb_annotate.models import Campaign, Dataset, Membership


@login_required
def home(request: HttpRequest) -> HttpResponse:
    memberships = (
        Membership.objects.filter(user=request.user, role=Membership.Role.ANNOTATOR)
        .exclude(campaign__status=Campaign.Status.DRAFT)
        .select_related("campaign")
        .order_by("campaign__name")
    )
    context = {
        "memberships": memberships,
        "datasets": Dataset.objects.all() if request.user.is_staff else [],
        "campaigns": Campaign.objects.all() if request.user.is_staff else [],
    }
    return render(request, "prb_annotate/home.html", context)
