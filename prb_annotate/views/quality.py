"""Annotator quality control from the campaign dashboard: exclude an annotator from the audit
(with a reason), bring them back, change the thresholds that leave annotators out, and reopen
a closed campaign for replacements.

Replacement slots follow every change (``audit/exclusions.py``): raised so that the pairs
whose answers left the audit can be annotated again, withdrawn where nobody filled them once
answers come back. A closed campaign gets none; its dashboard says how many pairs an exclusion
left without enough answers and offers to reopen it. Access as for the dashboard; an
annotator is named by their account's id, and an id that is none of the campaign's accounts
answers 404, naming no one (``members.campaign_account_or_404``).
"""

from typing import cast

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from prb_annotate.audit.exclusions import (
    exclude_annotator,
    lift_exclusion,
    pairs_short_of_answers,
)
from prb_annotate.campaigns.editing import after_changes
from prb_annotate.campaigns.join_limits import exclude_burst
from prb_annotate.campaigns.lifecycle import CampaignSetupError, reopen_for_replacements
from prb_annotate.campaigns.members import campaign_account_or_404
from prb_annotate.campaigns.progress import campaign_progress
from prb_annotate.models import Campaign
from prb_annotate.security.access import manager_action
from prb_annotate.web.forms import ExcludeAnnotatorForm, QualitySettingsForm, field_messages


def _pairs(count: int) -> str:
    return ngettext("%(count)d pair", "%(count)d pairs", count) % {"count": count}


def _replacements_message(request: HttpRequest, campaign: Campaign) -> None:
    """What leaving answers out did: replacement slots opened on a running campaign, pairs
    left short of answers on a closed one (with the way to reopen it) or on an imported one
    (which has no queue: more answers are imported)."""
    progress = campaign_progress(campaign, median_times=False)
    if campaign.external:
        short = pairs_short_of_answers(campaign)
        if short:
            messages.warning(
                request,
                _(
                    "The audit changed: %(pairs_short)s now lack answers, so the audit "
                    "cannot validate them. An imported campaign has no queue to ask anyone: "
                    "import more answers for them."
                )
                % {"pairs_short": _pairs(short)},
            )
    elif campaign.status == Campaign.Status.CLOSED:
        short = pairs_short_of_answers(campaign)
        if short:
            messages.warning(
                request,
                _(
                    "The audit changed: %(pairs_short)s now lack answers, so the audit "
                    "cannot validate them. The campaign is closed, so nobody is asked for "
                    "replacements; reopen it for replacements from the dashboard to have them "
                    "annotated."
                )
                % {"pairs_short": _pairs(short)},
            )
    elif progress.replacement_slots_open:
        messages.info(
            request,
            ngettext(
                "%(count)d replacement slot is open: other annotators are offered its pair.",
                "%(count)d replacement slots are open: other annotators are offered those pairs.",
                progress.replacement_slots_open,
            )
            % {"count": progress.replacement_slots_open},
        )


@manager_action
def campaign_exclude_burst(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Every account one network made through the links, left out of the audit at once."""
    network = str(request.POST.get("network", ""))
    done = exclude_burst(campaign, network, by=_user(request))
    if done:
        messages.success(
            request,
            ngettext(
                "%(count)d account from %(network)s left out of the audit.",
                "%(count)d accounts from %(network)s left out of the audit.",
                done,
            )
            % {"count": done, "network": network},
        )
        _replacements_message(request, campaign)
    else:
        messages.error(
            request, _("No account from %(network)s was left to leave out.") % {"network": network}
        )
    return redirect("campaign_detail", campaign.pk)


@manager_action
def campaign_exclude(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    form = ExcludeAnnotatorForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Say why the annotator is left out."))
        return redirect("campaign_detail", campaign.pk)
    annotator = campaign_account_or_404(campaign, form.cleaned_data["annotator"])
    try:
        exclude_annotator(campaign, annotator, form.cleaned_data["reason"], by=_user(request))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(
            request,
            _("%(username)s is left out of the audit.") % {"username": annotator.get_username()},
        )
        _replacements_message(request, campaign)
    return redirect("campaign_detail", campaign.pk)


@manager_action
def campaign_lift_exclusion(
    request: HttpRequest, campaign: Campaign, annotator_id: int
) -> HttpResponse:
    annotator = campaign_account_or_404(campaign, annotator_id)
    try:
        lift_exclusion(campaign, annotator, by=_user(request))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(
            request,
            _(
                "%(username)s is back in the audit; replacement slots nobody had filled for their "
                "answers are withdrawn."
            )
            % {"username": annotator.get_username()},
        )
    return redirect("campaign_detail", campaign.pk)


@manager_action
def campaign_quality_settings(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    form = QualitySettingsForm(request.POST, instance=campaign)
    if not form.is_valid():
        for text in field_messages(form):
            messages.error(request, text)
        return redirect("campaign_detail", campaign.pk)
    changed = list(form.changed_data)
    form.save()
    messages.success(request, _("Quality-control settings saved."))
    for note in after_changes(campaign, changed):
        messages.info(request, note)
    return redirect("campaign_detail", campaign.pk)


@manager_action
def campaign_reopen(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Reopen a closed campaign whose exclusions left pairs without enough answers."""
    try:
        raised = reopen_for_replacements(campaign)
    except CampaignSetupError as error:
        messages.error(request, _("Not reopened: %(error)s.") % {"error": error})
    else:
        messages.success(
            request,
            _(
                "The campaign is active again: %(pairs_raised)s got replacement slots. "
                "Close it again once they are answered."
            )
            % {"pairs_raised": _pairs(raised)},
        )
    return redirect("campaign_detail", campaign.pk)


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)  # login_required


urlpatterns = [
    path("<row_id:campaign_id>/exclusions/", campaign_exclude, name="campaign_exclude"),
    path(
        "<row_id:campaign_id>/exclusions/burst/",
        campaign_exclude_burst,
        name="campaign_exclude_burst",
    ),
    path("<row_id:campaign_id>/reopen/", campaign_reopen, name="campaign_reopen"),
    path(
        "<row_id:campaign_id>/exclusions/<row_id:annotator_id>/lift/",
        campaign_lift_exclusion,
        name="campaign_lift_exclusion",
    ),
    path(
        "<row_id:campaign_id>/quality-settings/",
        campaign_quality_settings,
        name="campaign_quality_settings",
    ),
]
