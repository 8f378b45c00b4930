"""The campaign audit for managers: agreement, verdicts, biases, annotators."""

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from prb_annotate.audit import report as audit_report
from prb_annotate.audit.cache import campaign_audit_cached, forget_audits
from prb_annotate.audit.campaign_audit import request_extra_annotations
from prb_annotate.campaigns.leaderboard import LeaderboardError
from prb_annotate.campaigns.planned_sample import (
    SamplePlanError,
    describe_extension,
    extend_sample,
)
from prb_annotate.formats.strictjson import STRICT, finite
from prb_annotate.jobs.audits import background_report, in_background
from prb_annotate.jobs.progress import ACTIVE
from prb_annotate.jobs.running import recover_stale_jobs, start_job
from prb_annotate.models import Campaign
from prb_annotate.paper.inputs import paper_zip
from prb_annotate.security.access import managed_campaign_or_404
from prb_annotate.views.jobs import RELOAD_S


def _resamples(request: HttpRequest) -> int:
    """``?resamples=`` for a quicker look at a big campaign; 1,000 by default, at most 10,000."""
    try:
        return min(max(int(request.GET.get("resamples", 1000)), 0), 10_000)
    except ValueError:
        return 1000


def kept_report(campaign: Campaign, resamples: int) -> dict[str, Any] | None:
    """The audit report: computed here for a campaign of ordinary size; for a large one, the
    newest audit job's while it is current (None: there is none)."""
    if in_background(campaign):
        return background_report(campaign, resamples)
    return campaign_audit_cached(campaign, resamples=resamples)


@login_required
def campaign_audit_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    resamples = _resamples(request)
    report = kept_report(campaign, resamples)
    if report is None:
        return audit_pending(request, campaign, resamples)
    split_votes = sum("undecided_split_vote" in row["reasons"] for row in report["verdicts"])
    context = {
        **audit_report.context(report),
        "campaign": campaign,
        "split_votes": split_votes,
        "resamples": resamples,
        "pair_links": True,
        "background": in_background(campaign),
    }
    return render(request, "prb_annotate/audit.html", context)


def audit_pending(request: HttpRequest, campaign: Campaign, resamples: int) -> HttpResponse:
    """A large campaign with no current audit: the job computing it, or a button to start one."""
    recover_stale_jobs()
    active = campaign.jobs.filter(kind="audit", status__in=ACTIVE).first()
    context = {
        "campaign": campaign,
        "pairs": campaign.items.count(),
        "threshold": settings.PRB_BACKGROUND_AUDIT_PAIRS,
        "job": active,
        "resamples": resamples,
        "reload_s": RELOAD_S if active else None,
    }
    return render(request, "prb_annotate/audit_pending.html", context)


@login_required
def campaign_audit_json(request: HttpRequest, campaign_id: int) -> JsonResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    resamples = _resamples(request)
    report = kept_report(campaign, resamples)
    if report is None:  # a download may wait: computed here, as the command does
        report = campaign_audit_cached(campaign, resamples=resamples)
    return JsonResponse(finite(report), json_dumps_params=STRICT)


@login_required
def campaign_audit_paper(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The "for a paper" zip: tables, methods paragraph, references and figures."""
    campaign = managed_campaign_or_404(request.user, campaign_id)
    # The runs chosen on the evaluations page (``?run=3&run=5``); none: its default.
    try:
        run_ids = [int(value) for value in request.GET.getlist("run")]
        content, filename = paper_zip(
            campaign, campaign_audit_cached(campaign, resamples=_resamples(request)), run_ids
        )
    except (ValueError, LeaderboardError) as error:
        return HttpResponseBadRequest(f"run: {error}", content_type="text/plain")
    response = HttpResponse(content, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_POST
@login_required
def campaign_audit_recompute(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Drop the kept results, for changes the change stamp cannot see (edits in the admin)."""
    campaign = managed_campaign_or_404(request.user, campaign_id)
    forget_audits(campaign)
    if in_background(campaign):  # a large campaign's audit is recomputed by a worker
        active = campaign.jobs.filter(kind="audit", status__in=ACTIVE).first()
        resamples = _resamples(request)  # the page's, so that its report is the one made
        job = active or start_job(campaign, request.user, "audit", {"resamples": resamples})
        return redirect("campaign_job", campaign_id=campaign.pk, job_id=job.pk)
    page = reverse("campaign_audit", args=[campaign.pk])
    return redirect(f"{page}?{urlencode({'resamples': _resamples(request)})}")


@require_POST
@login_required
def campaign_audit_request_extra(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    if campaign.external:
        messages.error(
            request,
            _(
                "An imported campaign has no queue to send a pair to another annotator: import "
                "more answers, or decide the split votes in the adjudication queue."
            ),
        )
        return redirect("campaign_audit", campaign_id=campaign.pk)
    if campaign.status == Campaign.Status.CLOSED:
        messages.error(
            request,
            _(
                "The campaign is closed, so no annotator can be asked for another answer: "
                "decide the split votes in the adjudication queue."
            ),
        )
        return redirect("campaign_audit", campaign_id=campaign.pk)
    raised = request_extra_annotations(campaign)
    messages.success(
        request,
        _("Asked one more annotator for %(raised)s split-vote pair(s).") % {"raised": raised},
    )
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
