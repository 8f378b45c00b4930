"""The annotator's pages: one item at a time, its revision, the guidelines, the completion page
(the invite link that brings annotators in is ``join.py``).

Every view starts with ``annotator_membership_or_404``: an annotator sees only campaigns they
are in and only their own assignments. The page shows the two answers as "A" and "B" in the
order of ``assignment.chosen_position`` and never says which one the dataset chose.
"""

import uuid
from collections.abc import Mapping
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from prb_annotate.access import annotator_membership_or_404
from prb_annotate.campaigns.annotating import (
    SubmitError,
    current_annotation,
    form_values,
    parse_submission,
    skip,
    submit,
)
from prb_annotate.campaigns.assignment import next_assignment, responses_ab
from prb_annotate.campaigns.lifecycle import quota_done
from prb_annotate.campaigns.progress import annotator_progress
from prb_annotate.forms import choice_questions, question_names, rating_questions
from prb_annotate.models import Assignment, Campaign

SKIP_REASONS = [
    "I cannot judge this topic",
    "The question or a response is unreadable or broken",
    "The content is offensive or unsafe",
    "Something else",
]
RECENT_ANSWERS_SHOWN = 10
PROLIFIC_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


def _user(request: HttpRequest) -> User:
    # Only called behind login_required (or after checking is_authenticated).
    return cast(User, request.user)


def _own_assignment_or_404(
    request: HttpRequest, campaign: Campaign, assignment_id: int
) -> Assignment:
    return get_object_or_404(
        Assignment.objects.select_related("campaign", "item__pair"),
        pk=assignment_id,
        campaign=campaign,
        annotator_id=request.user.pk,
    )


def _render_item(
    request: HttpRequest,
    campaign: Campaign,
    assignment: Assignment,
    *,
    values: Mapping[str, str],
    errors: Mapping[str, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    errors = errors or {}
    text_a, text_b = responses_ab(assignment)
    done, quota = annotator_progress(campaign, _user(request))
    known = question_names(campaign)
    general_errors = [message for field, message in errors.items() if field not in known]
    recent = (
        Assignment.objects.filter(
            campaign=campaign, annotator_id=request.user.pk, status=Assignment.Status.SUBMITTED
        )
        .select_related("item__pair")
        .order_by("-submitted_at")[:RECENT_ANSWERS_SHOWN]
    )
    context: dict[str, Any] = {
        "campaign": campaign,
        "assignment": assignment,
        "pair": assignment.item.pair,
        "responses": [
            ("A", text_a, rating_questions(campaign, "A", values, errors)),
            ("B", text_b, rating_questions(campaign, "B", values, errors)),
        ],
        "choices": choice_questions(values, errors),
        "comment": values.get("comment", ""),
        "comment_error": errors.get("comment", ""),
        "flagged": values.get("flagged", "") not in ("", "off", "false", "0"),
        "error_count": len(errors),
        "general_errors": general_errors,
        # A fresh token per page: a double click or a resent POST carries the same one and is
        # stored once; a new page is a new submit.
        "client_token": uuid.uuid4().hex,
        "is_revision": assignment.status == Assignment.Status.SUBMITTED,
        "done": done,
        "quota": quota,
        "scale_low": 1,
        "scale_high": campaign.rating_scale_max,
        "skip_reasons": SKIP_REASONS,
        "recent": recent,
    }
    return render(request, "prb_annotate/annotate.html", context, status=status)


@login_required
def annotate(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The current reservation, or the next item reserved now."""
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    if not campaign.is_active:
        return render(request, "prb_annotate/annotate_unavailable.html", {"campaign": campaign})
    user = _user(request)
    if quota_done(campaign, user):
        return redirect("annotate_done", campaign.pk)
    assignment = next_assignment(campaign, user)
    if assignment is None:
        return redirect("annotate_done", campaign.pk)
    return _render_item(request, campaign, assignment, values={})


@login_required
def annotate_assignment(request: HttpRequest, campaign_id: int, assignment_id: int) -> HttpResponse:
    """One of the annotator's own items; a submitted one comes back with its answers filled in."""
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    assignment = _own_assignment_or_404(request, campaign, assignment_id)
    if assignment.status == Assignment.Status.RESERVED:
        return _render_item(request, campaign, assignment, values={})
    annotation = current_annotation(assignment)
    if assignment.status != Assignment.Status.SUBMITTED or annotation is None:
        messages.info(request, "That item is no longer yours to answer.")
        return redirect("annotate", campaign.pk)
    return _render_item(request, campaign, assignment, values=form_values(annotation, assignment))


@login_required
@require_POST
def annotate_submit(request: HttpRequest, campaign_id: int, assignment_id: int) -> HttpResponse:
    """Store the answers and go on to the next item, or show the form again with its errors."""
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    assignment = _own_assignment_or_404(request, campaign, assignment_id)
    try:
        submission = parse_submission(request.POST, assignment=assignment)
        result = submit(
            assignment.pk,
            _user(request),
            submission.answers,
            client_token=submission.client_token,
            time_on_task_ms=submission.time_on_task_ms,
        )
    except SubmitError as error:
        if error.code != "invalid":
            # The pair filled up or the campaign stopped meanwhile: nothing to correct here.
            messages.error(request, error.message)
            return redirect("annotate", campaign.pk)
        values = {key: request.POST.get(key, "") for key in request.POST}
        errors = error.field_errors or {"__all__": error.message}
        return _render_item(request, campaign, assignment, values=values, errors=errors, status=400)
    messages.success(request, result.message)
    return redirect("annotate", campaign.pk)


@login_required
@require_POST
def annotate_skip(request: HttpRequest, campaign_id: int, assignment_id: int) -> HttpResponse:
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    assignment = _own_assignment_or_404(request, campaign, assignment_id)
    reason = request.POST.get("reason", "").strip()
    if not reason:
        messages.error(request, "Choose a reason to skip the item.")
        return redirect("annotate", campaign.pk)
    try:
        skip(assignment.pk, _user(request), reason=reason)
    except SubmitError as error:
        messages.error(request, error.message)
    else:
        messages.info(request, "Item skipped.")
    return redirect("annotate", campaign.pk)


@login_required
def annotate_guidelines(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    context = {"campaign": campaign, "scale_high": campaign.rating_scale_max}
    return render(request, "prb_annotate/annotate_guidelines.html", context)


@login_required
def annotate_done(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Completion: the quota is done (then on to ``completion_url``), or nothing is left now."""
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    user = _user(request)
    done, quota = annotator_progress(campaign, user)
    finished = quota_done(campaign, user)
    context = {
        "campaign": campaign,
        "done": done,
        "quota": quota,
        "finished": finished,
        # Without a quota, an empty queue is the only end there is: offer the link, but do
        # not send the annotator away on their own since items may come back.
        "completion_url": campaign.completion_url if finished or quota is None else "",
        "redirect_now": bool(campaign.completion_url) and finished,
    }
    return render(request, "prb_annotate/done.html", context)


urlpatterns = [
    path("c/<row_id:campaign_id>/", annotate, name="annotate"),
    path("c/<row_id:campaign_id>/guidelines/", annotate_guidelines, name="annotate_guidelines"),
    path("c/<row_id:campaign_id>/done/", annotate_done, name="annotate_done"),
    path(
        "c/<row_id:campaign_id>/a/<row_id:assignment_id>/",
        annotate_assignment,
        name="annotate_assignment",
    ),
    path(
        "c/<row_id:campaign_id>/a/<row_id:assignment_id>/submit/",
        annotate_submit,
        name="annotate_submit",
    ),
    path(
        "c/<row_id:campaign_id>/a/<row_id:assignment_id>/skip/", annotate_skip, name="annotate_skip"
    ),
]
