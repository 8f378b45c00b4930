"""The campaign audit for managers: agreement, verdicts, biases, annotators."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from prb_annotate.access import managed_campaign_or_404
from prb_annotate.audit import report as audit_report
from prb_annotate.audit.cache import campaign_audit_cached, forget_audits
from prb_annotate.audit.campaign_audit import request_extra_annotations
from prb_annotate.campaigns.planned_sample import (
    SamplePlanError,
    describe_extension,
    extend_sample,
)
from prb_annotate.paper.inputs import paper_zip
from prb_annotate.strictjson import STRICT, finite


def _resamples(request: HttpRequest) -> int:
    """``?resamples=`` for a quicker look at a big campaign; 1,000 by default, at most 10,000."""
    try:
        return min(max(int(request.GET.get("resamples", 1000)), 0), 10_000)
    except ValueError:
        return 1000


@login_required
def campaign_audit_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    report = campaign_audit_cached(campaign, resamples=_resamples(request))
    split_votes = sum("undecided_split_vote" in row["reasons"] for row in report["verdicts"])
    context = {
        **audit_report.context(report),
        "campaign": campaign,
        "split_votes": split_votes,
        "pair_links": True,
    }
    return render(request, "prb_annotate/audit.html", context)


@login_required
def campaign_audit_json(request: HttpRequest, campaign_id: int) -> JsonResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    report = campaign_audit_cached(campaign, resamples=_resamples(request))
    return JsonResponse(finite(report), json_dumps_params=STRICT)


@login_required
def campaign_audit_paper(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The "for a paper" zip: tables, methods paragraph, references and figures."""
    campaign = managed_campaign_or_404(request.user, campaign_id)
    content, filename = paper_zip(
        campaign, campaign_audit_cached(campaign, resamples=_resamples(request))
    )
    response = HttpResponse(content, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_POST
@login_required
def campaign_audit_recompute(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Drop the kept results, for changes the change stamp cannot see (edits in the admin)."""
    campaign = managed_campaign_or_404(request.user, campaign_id)
    forget_audits(campaign)
    return redirect("campaign_audit", campaign_id=campaign.pk)


@require_POST
@login_required
def campaign_audit_request_extra(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    raised = request_extra_annotations(campaign)
    messages.success(request, f"Asked one more annotator for {raised} split-vote pair(s).")
    return redirect("campaign_audit", campaign_id=campaign.pk)


@require_POST
@login_required
def campaign_audit_extend_sample(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    try:
        added = extend_sample(campaign)
    except SamplePlanError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, describe_extension(added))
    return redirect("campaign_audit", campaign_id=campaign.pk)


urlpatterns = [
    path(
        "<row_id:campaign_id>/audit/recompute/",
        campaign_audit_recompute,
        name="campaign_audit_recompute",
    ),
    path("<row_id:campaign_id>/audit/", campaign_audit_page, name="campaign_audit"),
    path("<row_id:campaign_id>/audit.json", campaign_audit_json, name="campaign_audit_json"),
    path("<row_id:campaign_id>/audit/paper.zip", campaign_audit_paper, name="campaign_audit_paper"),
    path(
        "<row_id:campaign_id>/audit/request-extra/",
        campaign_audit_request_extra,
        name="campaign_audit_request_extra",
    ),
    path(
        "<row_id:campaign_id>/audit/extend-sample/",
        campaign_audit_extend_sample,
        name="campaign_audit_extend_sample",
    ),
]
