"""Annotator quality control from the campaign dashboard: exclude an annotator from the audit
(with a reason), bring them back, and change the thresholds that leave annotators out.

Every change is followed by a request for replacement slots (``audit/exclusions.py``), so the
pairs whose answers left the audit can be annotated again. Access as for the dashboard.
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
    request_replacement_annotations,
)
from prb_annotate.forms import ExcludeAnnotatorForm, QualitySettingsForm


def _replacements_message(request: HttpRequest, raised: int) -> None:
    if raised:
        messages.info(
            request,
            f"Asked for replacement annotations on {raised} pair{'s' if raised != 1 else ''}.",
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
        messages.success(request, f"{annotator.get_username()} is back in the audit.")
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
    form.save()
    messages.success(request, "Quality-control settings saved.")
    _replacements_message(request, request_replacement_annotations(campaign))
    return redirect("campaign_detail", campaign.pk)


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)  # login_required


urlpatterns = [
    path("<row_id:campaign_id>/exclusions/", campaign_exclude, name="campaign_exclude"),
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
