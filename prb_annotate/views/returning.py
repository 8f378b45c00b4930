"""A study participant returns the study (Prolific's "return"): a link on every page they see
asks once, then frees the items they hold at once and ends their membership; what they
submitted stays. Their account is logged out, since it has no password and no campaign now."""

from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import path

from prb_annotate.campaigns.members import return_study, study_participant
from prb_annotate.models import Campaign


@login_required
def return_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    user = request.user
    if not isinstance(user, User) or not study_participant(campaign, user):
        raise Http404("No study of yours to return.")
    if request.method != "POST":
        return render(request, "prb_annotate/return_study.html", {"campaign": campaign})
    returned = return_study(campaign, user)
    logout(request)
    context = {"campaign": campaign, "returned": returned}
    return render(request, "prb_annotate/return_study.html", context)


urlpatterns = [
    path("c/<row_id:campaign_id>/return/", return_page, name="return_study"),
]
