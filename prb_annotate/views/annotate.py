"""The annotator's pages: one item at a time, its revision, the guidelines, the completion page
(the invite link that brings annotators in is ``join.py``).

Every view starts with ``annotator_membership_or_404``: an annotator sees only campaigns they
are in and only their own assignments. The page shows the two answers as "A" and "B" in the
order of ``assignment.chosen_position`` and never says which one the dataset chose.
"""

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db.models import FilteredRelation, Q
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from django.views.decorators.http import require_POST

from prb_annotate.campaigns.annotating import (
    SubmitError,
    current_annotation,
    form_values,
    parse_submission,
    skip,
    submit,
)
from prb_annotate.campaigns.assignment import QualificationFirst, next_assignment, responses_ab
from prb_annotate.campaigns.briefing import needs_consent
from prb_annotate.campaigns.drafts import DraftError, draft_values, drop_draft, save_draft
from prb_annotate.campaigns.progress import (
    CAMPAIGN_CLOSED,
    AnnotatorStanding,
    annotator_standing,
    member_standing,
)
from prb_annotate.campaigns.prolific import completion_code
from prb_annotate.campaigns.qualification.gate import is_cleared
from prb_annotate.formats.strictjson import STRICT
from prb_annotate.models import Annotation, Assignment, Campaign
from prb_annotate.security.access import annotator_membership_or_404
from prb_annotate.web.question_layout import answer_summary, choice_keys, question_context

# Stored as written here (English, whatever the page's language); the page shows each in the
# reader's language.
SKIP_REASONS = [
    gettext_noop("I cannot judge this topic"),
    gettext_noop("The question or a response is unreadable or broken"),
    gettext_noop("The content is offensive or unsafe"),
    gettext_noop("Something else"),
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
    # The page may show others' progress a few seconds late: see annotator_standing.
    standing = annotator_standing(campaign, _user(request), fresh=False)
    recent = _recent_answers(campaign, _user(request))
    context: dict[str, Any] = {
        "campaign": campaign,
        "assignment": assignment,
        "pair": assignment.item.pair,
        **question_context(campaign, responses_ab(assignment), values, errors),
        # A fresh token per page: a double click or a resent POST carries the same one and is
        # stored once; a new page is a new submit.
        "client_token": uuid.uuid4().hex,
        "is_revision": assignment.status == Assignment.Status.SUBMITTED,
        "standing": standing,
        "done": standing.done,
        "quota": standing.quota,
        "scale_low": 1,
        "scale_high": campaign.rating_scale_max,
        "skip_reasons": SKIP_REASONS,
        "recent": recent,
        "previous": _previous_item(campaign, _user(request), assignment, recent),
    }
    return render(request, "prb_annotate/annotate.html", context, status=status)


@dataclass(frozen=True)
class RecentAnswer:
    """A submitted item as the recent list shows it: its answers as the annotator saw them."""

    assignment_id: int
    external_id: str
    question: str
    submitted_at: Any
    summary: str


def _recent_answers(campaign: Campaign, user: User) -> list[RecentAnswer]:
    """The annotator's last submitted items, newest first, with their current answers: one
    query, through the annotator's own rows (an index range), reading only the columns the list
    shows (never the two long answers)."""
    current = FilteredRelation("annotations", condition=Q(annotations__is_current=True))
    rows = (
        Assignment.objects.filter(
            campaign=campaign, annotator=user, status=Assignment.Status.SUBMITTED
        )
        .annotate(current=current)
        .order_by("-submitted_at", "-pk")
        .values(*RECENT_COLUMNS)[:RECENT_ANSWERS_SHOWN]
    )
    recent = []
    for row in rows:
        annotation = Annotation(
            quality_chosen=row["current__quality_chosen"] or {},
            quality_rejected=row["current__quality_rejected"] or {},
            rubric_fit=row["current__rubric_fit"] or "",
            differentiator=row["current__differentiator"] or "",
            confidence=row["current__confidence"] or "",
            comment=row["current__comment"] or "",
            flagged=bool(row["current__flagged"]),
        )
        seen = Assignment(chosen_position=row["chosen_position"])
        recent.append(
            RecentAnswer(
                assignment_id=row["pk"],
                external_id=row["item__pair__external_id"],
                question=row["item__pair__question"],
                submitted_at=row["submitted_at"],
                summary=answer_summary(campaign, form_values(annotation, seen)),
            )
        )
    return recent


RECENT_COLUMNS = (
    "pk",
    "chosen_position",
    "submitted_at",
    "item__pair__external_id",
    "item__pair__question",
    "current__quality_chosen",
    "current__quality_rejected",
    "current__rubric_fit",
    "current__differentiator",
    "current__confidence",
    "current__comment",
    "current__flagged",
)


def _previous_item(
    campaign: Campaign, user: User, shown: Assignment, recent: list[RecentAnswer]
) -> int | None:
    """The item submitted just before the one shown (the newest one when the shown item is
    new): what "go back" reopens. Revisions keep their first submit time, so going back and
    forth walks one fixed order."""
    if shown.status != Assignment.Status.SUBMITTED:
        return recent[0].assignment_id if recent else None
    ids = [row.assignment_id for row in recent]
    if shown.pk in ids[:-1]:
        return ids[ids.index(shown.pk) + 1]
    earlier = (
        Assignment.objects.filter(
            campaign=campaign, annotator=user, status=Assignment.Status.SUBMITTED
        )
        .filter(
            Q(submitted_at__lt=shown.submitted_at)
            | Q(submitted_at=shown.submitted_at, pk__lt=shown.pk)
        )
        .order_by("-submitted_at", "-pk")
        .values_list("pk", flat=True)
        .first()
    )
    return earlier


def _unavailable(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """The page of a campaign that is not active, as its member reads it. The invite links
    show the same page to visitors, who have no guidelines to read and no work to thank for:
    without ``member`` it speaks to them."""
    answered = Assignment.objects.filter(
        campaign=campaign, annotator=_user(request), status=Assignment.Status.SUBMITTED
    ).exists()
    context = {"campaign": campaign, "member": True, "answered": answered}
    return render(request, "prb_annotate/annotate_unavailable.html", context)


def ready_member(request: HttpRequest, campaign_id: int) -> Campaign | HttpResponse:
    """The member's campaign, or the page they see first: the campaign is not running, or
    they have not accepted its consent text yet (the item and qualification pages ask this)."""
    membership = annotator_membership_or_404(request.user, campaign_id)
    campaign = membership.campaign
    if not campaign.is_active:
        return _unavailable(request, campaign)
    if needs_consent(membership):
        return redirect("annotate_consent", campaign.pk)
    return campaign


@login_required
def annotate(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The current reservation, or the next item reserved now."""
    campaign = ready_member(request, campaign_id)
    if not isinstance(campaign, Campaign):
        return campaign
    # next_assignment answers None once the quota is reached, so no count is needed here.
    try:
        assignment = next_assignment(campaign, _user(request))
    except QualificationFirst:
        return redirect("qualification", campaign.pk)
    if assignment is None:
        return redirect("annotate_done", campaign.pk)
    return _render_item(request, campaign, assignment, values=draft_values(assignment))


@login_required
def annotate_assignment(request: HttpRequest, campaign_id: int, assignment_id: int) -> HttpResponse:
    """One of the annotator's own items; a submitted one comes back with its answers filled in."""
    membership = annotator_membership_or_404(request.user, campaign_id)
    campaign = membership.campaign
    assignment = _own_assignment_or_404(request, campaign, assignment_id)
    if needs_consent(membership):
        return redirect("annotate_consent", campaign.pk)
    if not is_cleared(campaign.pk, _user(request).pk):
        return redirect("qualification", campaign.pk)
    if assignment.status == Assignment.Status.RESERVED:
        return _render_item(request, campaign, assignment, values=draft_values(assignment))
    annotation = current_annotation(assignment)
    if assignment.status != Assignment.Status.SUBMITTED or annotation is None:
        messages.info(request, _("That item is no longer yours to answer."))
        return redirect("annotate", campaign.pk)
    return _render_item(request, campaign, assignment, values=form_values(annotation, assignment))


@login_required
@require_POST
def annotate_draft(request: HttpRequest, campaign_id: int, assignment_id: int) -> HttpResponse:
    """Keep the form's unsaved answers as the item's draft (the page sends them as they
    change); 204, or 409 with the reason when the item is no longer the annotator's."""
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    assignment = _own_assignment_or_404(request, campaign, assignment_id)
    try:
        save_draft(assignment, _user(request), {k: request.POST.get(k, "") for k in request.POST})
    except DraftError as error:
        return JsonResponse(
            {"detail": str(error), "errors": {}}, status=409, json_dumps_params=STRICT
        )
    return HttpResponse(status=204)


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
    except Assignment.DoesNotExist as error:
        # Removed from the campaign since the membership was read: as if not in it.
        raise Http404("No such assignment.") from error
    except SubmitError as error:
        if error.code != "invalid":
            # The pair filled up or the campaign stopped meanwhile: nothing to correct here.
            messages.error(request, error.message)
            return redirect("annotate", campaign.pk)
        values = {key: request.POST.get(key, "") for key in request.POST}
        errors = error.field_errors or {"__all__": error.message}
        return _render_item(request, campaign, assignment, values=values, errors=errors, status=400)
    drop_draft(assignment.pk)
    messages.success(request, result.message)
    return redirect("annotate", campaign.pk)


@login_required
@require_POST
def annotate_skip(request: HttpRequest, campaign_id: int, assignment_id: int) -> HttpResponse:
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    assignment = _own_assignment_or_404(request, campaign, assignment_id)
    reason = request.POST.get("reason", "").strip()
    if not reason:
        messages.error(request, _("Choose a reason to skip the item."))
        return redirect("annotate", campaign.pk)
    try:
        skip(assignment.pk, _user(request), reason=reason)
    except Assignment.DoesNotExist as error:
        raise Http404("No such assignment.") from error
    except SubmitError as error:
        messages.error(request, error.message)
    else:
        messages.info(request, _("Item skipped."))
    return redirect("annotate", campaign.pk)


@login_required
def annotate_guidelines(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = annotator_membership_or_404(request.user, campaign_id).campaign
    context = {
        "campaign": campaign,
        "scale_high": campaign.rating_scale_max,
        "keys": choice_keys(),
    }
    return render(request, "prb_annotate/annotate_guidelines.html", context)


@login_required
def annotate_done(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Nothing to annotate now: finished (quota reached, or every pair is done by this annotator
    or complete with others' answers), waiting for the last pairs others hold, or held back by
    a rule of the queue about this member (``assignment.held_back``)."""
    membership = annotator_membership_or_404(request.user, campaign_id)
    campaign = membership.campaign
    if not is_cleared(campaign.pk, _user(request).pk):
        return redirect("qualification", campaign.pk)
    # Items the queue keeps from them are not available to them, and not "open again".
    standing = member_standing(campaign, _user(request))
    # The completion URL belongs to the study: only a member who came by the study link (with
    # a Prolific id) is sent there; an invited annotator finishes on this page.
    study_url = campaign.completion_url if membership.participant_id else ""
    context = {
        "campaign": campaign,
        "standing": standing,
        # Without a quota, the end of the queue is the only end there is: offer the link, but
        # send the annotator on by themselves only when the quota is reached. A campaign closed
        # before a participant did anything gives them no code to submit (their approval
        # would pay for no work): they return the study.
        "completion_url": study_url if _may_complete(standing) else "",
        "completion_code": completion_code(study_url),
        "redirect_now": bool(study_url) and standing.quota_reached,
    }
    return render(request, "prb_annotate/done.html", context)


def _may_complete(standing: AnnotatorStanding) -> bool:
    if standing.held == CAMPAIGN_CLOSED and not standing.done:
        return False
    return standing.finished or standing.quota is None


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
        "c/<row_id:campaign_id>/a/<row_id:assignment_id>/draft/",
        annotate_draft,
        name="annotate_draft",
    ),
    path(
        "c/<row_id:campaign_id>/a/<row_id:assignment_id>/skip/", annotate_skip, name="annotate_skip"
    ),
]
