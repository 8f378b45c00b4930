"""Annotator quality control from the campaign dashboard: exclude an annotator from the audit
(with a reason), bring them back, change the thresholds that leave annotators out, and reopen
a closed campaign for replacements.

Replacement slots follow every change (``audit/exclusions.py``): raised so that the pairs
whose answers left the audit can be annotated again, withdrawn where nobody filled them once
answers come back. A closed campaign gets none; its dashboard says how many pairs an exclusion
left without enough answers and offers to reopen it. Access as for the dashboard.
"""

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import path
from django.views.decorators.http import require_POST

from prb_annotate.access import managed_campaign_or_404
from prb_annotate.audit.exclusions import (
    exclude_annotator,
    lift_exclusion,
    pairs_short_of_answers,
)
from prb_annotate.campaigns.editing import after_changes
from prb_annotate.campaigns.lifecycle import CampaignSetupError, reopen_for_replacements
from prb_annotate.campaigns.progress import campaign_progress
from prb_annotate.forms import ExcludeAnnotatorForm, QualitySettingsForm
from prb_annotate.models import Campaign


def _pairs(count: int) -> str:
    return f"{count} pair{'s' if count != 1 else ''}"


def _replacements_message(request: HttpRequest, campaign: Campaign) -> None:
    """What leaving answers out did: replacement slots opened on a running campaign, pairs
    left short of answers on a closed one (with the way to reopen it)."""
    progress = campaign_progress(campaign, median_times=False)
    if campaign.status == Campaign.Status.CLOSED:
        short = pairs_short_of_answers(campaign)
        if short:
            messages.warning(
                request,
                f"The audit changed: {_pairs(short)} now lack answers, so the audit cannot "
                "validate them. The campaign is closed, so nobody is asked for replacements; "
                "reopen it for replacements from the dashboard to have them annotated.",
            )
    elif progress.replacement_slots_open:
        messages.info(
            request,
            f"{progress.replacement_slots_open} replacement slot"
            f"{'s are' if progress.replacement_slots_open != 1 else ' is'} open: other "
            "annotators are offered those pairs.",
        )


@login_required
@require_POST
def campaign_exclude(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = ExcludeAnnotatorForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Say why the annotator is left out.")
        return redirect("campaign_detail", campaign.pk)
    annotator = get_object_or_404(User, pk=form.cleaned_data["annotator"])
    try:
        exclude_annotator(campaign, annotator, form.cleaned_data["reason"], by=_user(request))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, f"{annotator.get_username()} is left out of the audit.")
        _replacements_message(request, campaign)
    return redirect("campaign_detail", campaign.pk)


@login_required
@require_POST
def campaign_lift_exclusion(
    request: HttpRequest, campaign_id: int, annotator_id: int
) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    annotator = get_object_or_404(User, pk=annotator_id)
    try:
        lift_exclusion(campaign, annotator, by=_user(request))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(
            request,
            f"{annotator.get_username()} is back in the audit; replacement slots nobody had "
            "filled for their answers are withdrawn.",
        )
    return redirect("campaign_detail", campaign.pk)


@login_required
@require_POST
def campaign_quality_settings(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = QualitySettingsForm(request.POST, instance=campaign)
    if not form.is_valid():
        for field, errors in form.errors.get_json_data().items():
            text = " ".join(error["message"] for error in errors)
            messages.error(request, f"{form.fields[field].label}: {text}")
        return redirect("campaign_detail", campaign.pk)
    changed = list(form.changed_data)
    form.save()
    messages.success(request, "Quality-control settings saved.")
    for note in after_changes(campaign, changed):
        messages.info(request, note)
    return redirect("campaign_detail", campaign.pk)


@login_required
@require_POST
def campaign_reopen(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Reopen a closed campaign whose exclusions left pairs without enough answers."""
    campaign = managed_campaign_or_404(request.user, campaign_id)
    try:
        raised = reopen_for_replacements(campaign)
    except CampaignSetupError as error:
        messages.error(request, f"Not reopened: {error}.")
    else:
        messages.success(
            request,
            f"The campaign is active again: {_pairs(raised)} got replacement slots. Close it "
            "again once they are answered.",
        )
    return redirect("campaign_detail", campaign.pk)


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)  # login_required


urlpatterns = [
    path("<row_id:campaign_id>/exclusions/", campaign_exclude, name="campaign_exclude"),
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
