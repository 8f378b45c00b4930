"""Annotator-work JSON API: the same service calls as the annotator page, as JSON.

POST /api/campaigns/<id>/next/          the current reservation (200) or 204 when none is left;
                                        practice and qualification items first (``kind``)
POST /api/assignments/<id>/submit/      201 saved, 200 replay of the same client token
POST /api/assignments/<id>/skip/        the skipped assignment
GET  /api/campaigns/<id>/my-progress/   items done, available, the quota, finished or waiting

Errors are 4xx with the API's error body (``{"detail": ..., "errors": {field: [messages]}}``),
never 500: 400 for a bad form, 409 when the pair is full, the campaign is not active or the
pair was submitted already (skip), 404 for anything not the caller's.

``next`` and ``submit`` are the annotators' work cycle, the busiest requests of a campaign:
each calls one service that checks access on the way (no read of its own first), answers in
JSON only, and on PostgreSQL runs as one transaction, authentication included.
"""

import functools
from collections.abc import Callable, Iterable
from typing import Any, TypeAlias, cast

from django.contrib.auth.models import User
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import (  # type: ignore[attr-defined]  # not in the stubs yet
    api_view,
    content_negotiation_class,
    renderer_classes,
)
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

from prb_annotate.api import qualification
from prb_annotate.api import serializers_work as shapes
from prb_annotate.api.errors import error_body
from prb_annotate.api.schema import ErrorSerializer
from prb_annotate.campaigns.annotating import SubmitError, skip, submit_form
from prb_annotate.campaigns.assignment import (
    QualificationFirst,
    next_assignment_by_id,
    responses_ab,
)
from prb_annotate.campaigns.briefing import (
    CONSENT_FIRST,
    ConsentFirst,
    needs_consent,
    record_consent,
)
from prb_annotate.campaigns.progress import member_standing
from prb_annotate.campaigns.qualification.flow import outcome_of
from prb_annotate.db.plainsql import whole_request_transaction
from prb_annotate.models import Assignment, Membership
from prb_annotate.security.access import annotator_membership_or_404

ERROR_STATUS = {
    "invalid": 400,
    "full": 409,
    "inactive": 409,
    "submitted": 409,
    "qualification": 403,
    "consent": 403,
}
CONFLICT = "The pair has enough annotations, or the campaign does not take answers now."
CAMPAIGN_ID = OpenApiParameter("campaign_id", OpenApiTypes.INT, OpenApiParameter.PATH)
ASSIGNMENT_ID = OpenApiParameter("assignment_id", OpenApiTypes.INT, OpenApiParameter.PATH)
AssignmentView: TypeAlias = Callable[[Request, int], Response]


class JSONOnly(DefaultContentNegotiation):
    """Answers in the view's one renderer (JSON) without reading the Accept header."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


def reservation_data(assignment: Assignment, request: Request) -> dict[str, Any]:
    """What the annotator sees: the pair as A and B, never which side is the chosen answer;
    ``submit_url`` is absolute, as a practice or qualification item's."""
    item = assignment.item
    pair = item.pair
    campaign = assignment.campaign
    return {
        # Gold items are regular to the annotator: nothing tells them apart.
        "kind": "regular",
        "assignment": assignment.pk,
        "item": None,
        "attempt": None,
        "number": None,
        "total": None,
        "campaign": campaign.pk,
        "question": pair.question,
        # A chat record's turns before its question (datasets/shapes.py); empty otherwise.
        "context_turns": pair.extra.get("context_turns", []),
        **qualification.shown_pair(campaign, pair, responses_ab(assignment)),
        "expires_at": assignment.expires_at.isoformat(),
        "submit_url": reverse("api_submit", args=[assignment.pk], request=request),
    }


def _error(error: SubmitError) -> Response:
    return qualification.submit_error(error, ERROR_STATUS)


def _refusals_answered(view: AssignmentView) -> AssignmentView:
    """Submit and skip answer a refusal alike: the API's error body for what the service
    refused, and 404 for an assignment that is not the caller's, or no longer (the caller was
    removed from its campaign)."""

    @functools.wraps(view)
    def answered(request: Request, assignment_id: int) -> Response:
        try:
            return view(request, assignment_id)
        except SubmitError as error:
            return _error(error)
        except Assignment.DoesNotExist as error:
            raise Http404("No such assignment.") from error

    return answered


@extend_schema(
    parameters=[CAMPAIGN_ID],
    request=None,
    responses={
        200: shapes.ReservationSerializer,
        204: OpenApiResponse(description="Nothing left for this annotator now."),
    },
)
@whole_request_transaction
@api_view(["POST"])
@renderer_classes([JSONRenderer])
@content_negotiation_class(JSONOnly)
def next_item(request: Request, campaign_id: int) -> Response:
    try:
        # The consent is read in the queue's own statement, not by a query of its own first.
        assignment = next_assignment_by_id(campaign_id, _user(request), consent_first=True)
    except Membership.DoesNotExist as error:  # not one of its annotators
        raise Http404("No such campaign.") from error
    except ConsentFirst as owed:
        return _consent_first(campaign_id, owed)
    except QualificationFirst:
        # Practice or qualification before the queue (or 403 once screened out).
        step = qualification.step_response(request, campaign_id)
        if step is not None:
            return step
        assignment = None
    if assignment is None:
        return Response(status=status.HTTP_204_NO_CONTENT)
    return Response(reservation_data(assignment, request))


@extend_schema(
    parameters=[ASSIGNMENT_ID],
    request=shapes.SubmitRequestSerializer,
    responses={
        200: shapes.SubmitResultSerializer,
        201: shapes.SubmitResultSerializer,
        409: OpenApiResponse(ErrorSerializer, description=CONFLICT),
    },
)
@whole_request_transaction
@api_view(["POST"])
@renderer_classes([JSONRenderer])
@content_negotiation_class(JSONOnly)
@_refusals_answered
def submit_answers(request: Request, assignment_id: int) -> Response:
    data = request.data if isinstance(request.data, dict) else {}
    result = submit_form(assignment_id, _user(request), data)
    return Response(
        shapes.SubmitResultSerializer(result).data,
        status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK,
    )


@extend_schema(
    parameters=[ASSIGNMENT_ID],
    request=shapes.SkipRequestSerializer,
    responses={
        200: shapes.SkipResultSerializer,
        409: OpenApiResponse(ErrorSerializer, description="The pair was submitted already."),
    },
)
@api_view(["POST"])
@_refusals_answered
def skip_item(request: Request, assignment_id: int) -> Response:
    data = request.data if isinstance(request.data, dict) else {}
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        return Response(
            error_body("Please correct the marked fields.", {"reason": ["Text only."]}), status=400
        )
    skipped = skip(assignment_id, _user(request), reason=reason)
    return Response(shapes.SkipResultSerializer(skipped).data)


@extend_schema(parameters=[CAMPAIGN_ID], responses={200: shapes.MyProgressSerializer})
@api_view(["GET"])
def my_progress(request: Request, campaign_id: int) -> Response:
    membership = annotator_membership_or_404(request.user, campaign_id)
    campaign = membership.campaign
    standing = member_standing(campaign, _user(request))
    quota_done = standing.quota_reached
    return Response(
        {
            "campaign": campaign.pk,
            "status": campaign.status,
            "done": standing.done,
            "quota": standing.quota,
            "quota_done": quota_done,
            "completion_url": campaign.completion_url if quota_done else "",
            "available": standing.available,
            "finished": standing.finished,
            "waiting": standing.waiting,
            "held": standing.held or "",
            "qualification": outcome_of(campaign, _user(request)),
            "consent_required": needs_consent(membership),
            "consent_given_at": membership.consent_given_at,
        }
    )


def _consent_first(campaign_id: int, owed: ConsentFirst) -> Response:
    """403 for a member who has not accepted the campaign's consent text, with the text."""
    body = error_body(
        CONSENT_FIRST,
        {"consent": [CONSENT_FIRST]},
        consent_text=owed.consent_text,
        consent_url=f"/api/campaigns/{campaign_id}/consent/",
    )
    return Response(body, status=status.HTTP_403_FORBIDDEN)


@extend_schema(
    parameters=[CAMPAIGN_ID],
    request=shapes.ConsentRequestSerializer,
    responses={200: shapes.ConsentResultSerializer, 400: ErrorSerializer},
)
@api_view(["GET", "POST"])
def consent(request: Request, campaign_id: int) -> Response:
    """The campaign's consent text (GET), accepted with ``{"accept": true}`` (POST); the time
    of the first acceptance is kept."""
    membership = annotator_membership_or_404(request.user, campaign_id)
    if request.method == "POST":
        data = request.data if isinstance(request.data, dict) else {}
        if data.get("accept") is not True:
            errors = {"accept": ["Send true to accept the consent text."]}
            return Response(error_body("Consent not given.", errors), status=400)
        if membership.campaign.consent_text.strip():
            record_consent(membership)
    return Response(
        {
            "campaign": campaign_id,
            "consent_text": membership.campaign.consent_text,
            "consent_given_at": membership.consent_given_at,
        }
    )


def _user(request: Request) -> User:
    return cast(User, request.user)
