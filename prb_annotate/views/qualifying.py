"""The annotator's practice and qualification pages, before the queue (``annotate.py``).

The queue sends a member who is not cleared here (``QualificationFirst``); this page shows the
step ``qualification.flow.next_step`` names: a practice item (then its feedback, with a retry),
a qualification item (after the first attempt, its result and feedback), or the screen-out
page. Items are shown with the annotation page's own template and form, so that practice is
the real task. Access as for every annotator page: ``annotator_membership_or_404`` first.
"""

import uuid
from collections.abc import Mapping
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from prb_annotate.campaigns.annotating import SubmitError
from prb_annotate.campaigns.progress import member_standing
from prb_annotate.campaigns.prolific import completion_code
from prb_annotate.campaigns.qualification import flow, rules
from prb_annotate.models import Campaign, QualificationItem, QualificationRecord
from prb_annotate.security.access import annotator_membership_or_404
from prb_annotate.views.annotate import ready_member
from prb_annotate.web.question_layout import question_context

Stage = flow.Stage


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)  # login_required


@login_required
def qualification_page(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The member's current practice or qualification item, or where they go instead."""
    campaign = ready_member(request, campaign_id)
    if isinstance(campaign, HttpResponse):
        return campaign
    step = flow.next_step(campaign, _user(request))
    if step.stage == Stage.SCREENED_OUT:
        return redirect("qualification_screened_out", campaign.pk)
    if step.task is None:
        return redirect("annotate", campaign.pk)
    return _render_task(request, campaign, step.task, values={})


@login_required
def qualification_item(request: HttpRequest, campaign_id: int, item_id: int) -> HttpResponse:
    """A given item: a practice item to answer again, or the current qualification item."""
    campaign = ready_member(request, campaign_id)
    if isinstance(campaign, HttpResponse):
        return campaign
    task = flow.task_for(campaign, _user(request), item_id)
    if task is None:
        return redirect("qualification", campaign.pk)
    return _render_task(request, campaign, task, values={})


@login_required
@require_POST
def qualification_submit(request: HttpRequest, campaign_id: int, item_id: int) -> HttpResponse:
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    try:
        stored = flow.submit(campaign.pk, _user(request), item_id, request.POST)
    except QualificationItem.DoesNotExist as error:
        raise Http404("No such item.") from error
    except SubmitError as error:
        task = flow.task_for(campaign, _user(request), item_id)
        if error.code != "invalid" or task is None:
            messages.error(request, error.message)
            return redirect("qualification", campaign.pk)
        values = {key: request.POST.get(key, "") for key in request.POST}
        errors = error.field_errors or {"__all__": error.message}
        return _render_task(request, campaign, task, values=values, errors=errors, status=400)
    if stored.feedback is not None:
        return redirect("qualification_feedback", campaign.pk, item_id)
    if stored.result is not None:
        return redirect("qualification_result", campaign.pk)
    return redirect("qualification", campaign.pk)


@login_required
def qualification_feedback(request: HttpRequest, campaign_id: int, item_id: int) -> HttpResponse:
    """What was expected of the member's latest answer to a practice item, and why."""
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    item = QualificationItem.objects.filter(
        pk=item_id, campaign=campaign, phase=QualificationItem.Phase.PRACTICE
    ).first()
    feedback = None if item is None else flow.latest_practice_feedback(item, _user(request))
    if feedback is None:
        return redirect("qualification", campaign.pk)
    context = {"campaign": campaign, "feedback": feedback, "item_id": item_id}
    return render(request, "prb_annotate/qualification_feedback.html", context)


@login_required
def qualification_result(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The last finished attempt: passed (on to the queue), or failed with feedback on every
    item before the second attempt; a member screened out goes to that page."""
    membership = annotator_membership_or_404(request.user, campaign_id)
    campaign = membership.campaign
    record = QualificationRecord.objects.filter(membership=membership).first()
    if record is None or not record.attempts:
        return redirect("qualification", campaign.pk)
    if record.outcome == QualificationRecord.Outcome.FAILED:
        return redirect("qualification_screened_out", campaign.pk)
    last = record.attempts[-1]
    context: dict[str, Any] = {
        "campaign": campaign,
        "record": record,
        "last": last,
        "rule": rules.PassRule.from_json(campaign.qualification_rule).describe(last["total"]),
        "feedback": []
        if last["passed"]
        else flow.attempt_feedback(campaign, _user(request), last["attempt"]),
        "attempts_left": rules.ATTEMPTS - len(record.attempts),
        # What the queue holds for them now: a pass with nothing left says so.
        "standing": member_standing(campaign, _user(request)) if last["passed"] else None,
    }
    return render(request, "prb_annotate/qualification_result.html", context)


@login_required
def qualification_screened_out(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The end for a member who failed: a study participant is sent on to the campaign's
    screen-out URL; anyone else (or without a URL) reads here that they did not pass."""
    membership = annotator_membership_or_404(request.user, campaign_id)
    record = QualificationRecord.objects.filter(membership=membership).first()
    if record is None or record.outcome != QualificationRecord.Outcome.FAILED:
        return redirect("annotate", membership.campaign_id)
    context = {
        "campaign": membership.campaign,
        "record": record,
        "screen_out_url": flow.screen_out_url(membership),
        "screen_out_code": completion_code(flow.screen_out_url(membership)),
        "participant": bool(membership.participant_id),
    }
    return render(request, "prb_annotate/qualification_screened_out.html", context)


def _render_task(
    request: HttpRequest,
    campaign: Campaign,
    task: flow.Task,
    *,
    values: Mapping[str, str],
    errors: Mapping[str, str] | None = None,
    status: int = 200,
) -> HttpResponse:
    """The item on the annotation page's template, with the practice or qualification note."""
    errors = errors or {}
    practice = task.phase == QualificationItem.Phase.PRACTICE
    context: dict[str, Any] = {
        "campaign": campaign,
        "pair": task.item.pair,
        **question_context(campaign, task.responses(), values, errors),
        "client_token": uuid.uuid4().hex,
        "is_revision": False,
        "scale_low": 1,
        "scale_high": campaign.rating_scale_max,
        "recent": [],
        "previous": None,
        "screening": {
            "task": task,
            "practice": practice,
            "submit_url": reverse("qualification_submit", args=[campaign.pk, task.item.pk]),
            "submit_label": _("Submit and see the feedback") if practice else _("Submit"),
            "attempts": rules.ATTEMPTS,
        },
    }
    return render(request, "prb_annotate/annotate.html", context, status=status)


urlpatterns = [
    path("c/<row_id:campaign_id>/qualification/", qualification_page, name="qualification"),
    path(
        "c/<row_id:campaign_id>/qualification/result/",
        qualification_result,
        name="qualification_result",
    ),
    path(
        "c/<row_id:campaign_id>/qualification/screened-out/",
        qualification_screened_out,
        name="qualification_screened_out",
    ),
    path(
        "c/<row_id:campaign_id>/qualification/<row_id:item_id>/",
        qualification_item,
        name="qualification_item",
    ),
    path(
        "c/<row_id:campaign_id>/qualification/<row_id:item_id>/submit/",
        qualification_submit,
        name="qualification_submit",
    ),
    path(
        "c/<row_id:campaign_id>/qualification/<row_id:item_id>/feedback/",
        qualification_feedback,
        name="qualification_feedback",
    ),
]
