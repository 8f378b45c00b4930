"""The consent page: a member who did not accept the campaign's consent text on the join page
(added by a manager, through the sign-up invite, or before the text was set) accepts it here
before their next item (``campaigns/briefing.py``). Access as for the annotation page."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path

from prb_annotate.campaigns.briefing import needs_consent, record_consent, time_estimate
from prb_annotate.security.access import annotator_membership_or_404


@login_required
def consent(request: HttpRequest, campaign_id: int) -> HttpResponse:
    membership = annotator_membership_or_404(request.user, campaign_id)
    campaign = membership.campaign
    if not needs_consent(membership):
        return redirect("annotate", campaign.pk)
    missing = request.method == "POST" and request.POST.get("consent") != "yes"
    if request.method == "POST" and not missing:
        record_consent(membership)
        return redirect("annotate", campaign.pk)
    context = {
        "campaign": campaign,
        "estimate": time_estimate(campaign, member=membership),
        "consent_missing": missing,
    }
    return render(request, "prb_annotate/consent.html", context, status=400 if missing else 200)


urlpatterns = [
    path("c/<row_id:campaign_id>/consent/", consent, name="annotate_consent"),
]
