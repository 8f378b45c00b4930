"""Annotators added from the campaign dashboard, one or many (pasted, or a CSV file): the
accounts that do not exist yet are made, and the page that answers shows each new account's
one-time "set your password" link, once (``prb_annotate.campaigns.accounts``).

Access as for the dashboard: a manager adds annotators only to campaigns they manage, and the
form takes names; no page lists other accounts' usernames.
"""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_POST

from prb_annotate.access import managed_campaign_or_404
from prb_annotate.campaigns.accounts import AnnotatorListError, add_annotators
from prb_annotate.forms import AddAnnotatorsForm
from prb_annotate.views.campaigns import render_dashboard


@login_required
@require_POST
def campaign_add_annotators(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = AddAnnotatorsForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            added = add_annotators(
                campaign, form.cleaned_data["entries"], site=request.build_absolute_uri("/")
            )
        except AnnotatorListError as error:
            form.add_error(None, error.problems)
        else:
            context = {
                "campaign": campaign,
                "added": added,
                "new_accounts": [row for row in added if row.created],
                "link_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400),
            }
            # Shown on this answer only, never stored: the links are the accounts' keys.
            response = render(request, "prb_annotate/annotators_added.html", context)
            response["Cache-Control"] = "no-store"
            return response
    return render_dashboard(request, campaign, annotators_form=form, status=400)


urlpatterns = [
    path(
        "<row_id:campaign_id>/annotators/",
        campaign_add_annotators,
        name="campaign_add_annotators",
    ),
]
