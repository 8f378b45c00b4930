"""A campaign's settings page, linked from its dashboard: everything that can change once the
campaign exists, in groups, with the rules stated (``campaigns/editing.py``); and the buttons
that turn the study link or the sign-up invite off and on, or rotate it.

Access as for the dashboard (``managed_campaign_or_404``).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from prb_annotate.campaigns.editing import RULES, after_changes
from prb_annotate.campaigns.lifecycle import LINKS, rotate_link, set_link_enabled
from prb_annotate.models import Campaign
from prb_annotate.security.access import managed_campaign_or_404, manager_action
from prb_annotate.views.campaigns import STATUS_ACTIONS, campaign_links
from prb_annotate.web.forms import CampaignSettingsForm

# What each button did, whole sentences so that a translation may order them as its language does.
LINK_DONE = {
    ("study", "rotate"): gettext_lazy("The study link has a new address: the old one ends now."),
    ("signup", "rotate"): gettext_lazy(
        "The sign-up invite has a new address: the old one ends now."
    ),
    ("study", "on"): gettext_lazy("The study link is on."),
    ("study", "off"): gettext_lazy("The study link is off."),
    ("signup", "on"): gettext_lazy("The sign-up invite is on."),
    ("signup", "off"): gettext_lazy("The sign-up invite is off."),
}


@login_required
def campaign_settings(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = CampaignSettingsForm(request.POST or None, instance=campaign)
    if request.method == "POST" and form.is_valid():
        changed = list(form.changed_data)
        campaign = form.save(commit=False)
        if changed:
            # Only the fields changed: a status change another manager made meanwhile stays.
            campaign.save(update_fields=changed)
        messages.success(request, _("Settings saved.") if changed else _("Nothing changed."))
        for note in after_changes(campaign, changed):
            messages.info(request, note)
        return redirect("campaign_detail", campaign.pk)
    context = {
        "campaign": campaign,
        "form": form,
        "rules": RULES,
        "actions": STATUS_ACTIONS.get(campaign.status, []),
        **campaign_links(request, campaign),
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "prb_annotate/campaign_settings.html", context, status=status)


@manager_action
def campaign_link(request: HttpRequest, campaign: Campaign, link: str, action: str) -> HttpResponse:
    """``action`` is ``on``, ``off`` or ``rotate`` for the ``study`` or ``signup`` link."""
    if link not in LINKS or action not in {"on", "off", "rotate"}:
        raise Http404("No such link.")
    if action == "rotate":
        rotate_link(campaign, link)
    else:
        set_link_enabled(campaign, link, action == "on")
    messages.success(request, LINK_DONE[link, action])
    return redirect(reverse("campaign_detail", args=[campaign.pk]) + "#invite")


urlpatterns = [
    path("<row_id:campaign_id>/settings/", campaign_settings, name="campaign_settings"),
    path(
        "<row_id:campaign_id>/links/<str:link>/<str:action>/",
        campaign_link,
        name="campaign_link",
    ),
]
