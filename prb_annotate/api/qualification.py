"""Practice, qualification and Prolific in the API: the managers' choices and outcomes, the
Prolific CSVs, and the annotators' side (``next`` hands practice and qualification items
first, answers go to ``/api/qualification-items/{id}/submit/``).

The services are ``campaigns/qualification/`` and ``campaigns/prolific.py``; access is the web
app's (``managed_campaign`` for managers, the membership for annotators, 404 otherwise).
"""

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any, cast

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from prb_annotate.api import serializers_qualification as shapes
from prb_annotate.api.errors import error_body
from prb_annotate.api.negotiation import FileNegotiation
from prb_annotate.api.parsers import JSONParser
from prb_annotate.api.permissions import managed_campaign
from prb_annotate.api.schema import ErrorSerializer
from prb_annotate.api.serializers_work import SubmitRequestSerializer
from prb_annotate.campaigns import prolific, prolific_api
from prb_annotate.campaigns.annotating import SubmitError
from prb_annotate.campaigns.members import campaign_account_or_404
from prb_annotate.campaigns.qualification import flow, rules, setup
from prb_annotate.models import Campaign, Membership, Pair, QualificationItem
from prb_annotate.security.access import annotator_campaign_or_404

ERROR_STATUS = {"invalid": 400, "inactive": 409, "order": 409, "screened_out": 403}
ITEM_ID = OpenApiParameter("item_id", OpenApiTypes.INT, OpenApiParameter.PATH)
CSV = (200, "text/csv")


def _user(request: Request) -> User:
    return cast(User, request.user)


def _service(action: Any) -> Any:
    """A service's ValidationError (field -> message) as the API's 400."""
    try:
        return action()
    except DjangoValidationError as error:
        raise serializers.ValidationError(error.message_dict) from error


# --- the annotator's side ---------------------------------------------------------------


def submit_error(error: SubmitError, statuses: Mapping[str, int]) -> Response:
    """A refused submit: its message, each field's, and the status ``statuses`` gives its code
    (400 for a code it does not name)."""
    errors = {field: [message] for field, message in error.field_errors.items()}
    return Response(error_body(error.message, errors), status=statuses.get(error.code, 400))


def shown_pair(campaign: Campaign, pair: Pair, responses: tuple[str, str]) -> dict[str, Any]:
    """The fields of an item that show the pair, its two responses as A and B and the rating
    scale: the same for a regular item (``work.py``) as for a practice or qualification one."""
    response_a, response_b = responses
    return {
        "profile": pair.profile,
        "rubric_aspects": pair.rubric_aspects,
        "narrative": pair.narrative,
        "response_a": response_a,
        "response_b": response_b,
        "criteria": list(campaign.quality_criteria),
        "scale": {"min": 1, "max": campaign.rating_scale_max},
    }


def task_data(campaign: Campaign, task: flow.Task, request: Request) -> dict[str, Any]:
    """A practice or qualification item as ``next`` hands it: the fields of a regular item, with
    its kind, its place in the attempt and its own submit URL."""
    pair = task.item.pair
    return {
        "kind": task.phase,
        "assignment": None,
        "item": task.item.pk,
        "attempt": task.attempt,
        "number": task.number,
        "total": task.total,
        "campaign": campaign.pk,
        "question": pair.question,
        # A chat record's turns before its question, as a regular item has them.
        "context_turns": pair.extra.get("context_turns", []),
        **shown_pair(campaign, pair, task.responses()),
        "expires_at": None,
        "submit_url": reverse("api_qualification_submit", args=[task.item.pk], request=request),
    }


def step_response(request: Request, campaign_id: int) -> Response | None:
    """What ``next`` answers to a member the queue refused: their practice or qualification
    item, or 403 with the screen-out URL; None when they are cleared by now."""
    user = _user(request)
    membership = flow.member(campaign_id, user)
    step = flow.next_step(membership.campaign, user)
    if step.stage == flow.Stage.SCREENED_OUT:
        body = error_body(flow.SCREENED_OUT_MESSAGE, screen_out_url=flow.screen_out_url(membership))
        return Response(body, status=status.HTTP_403_FORBIDDEN)
    if step.task is None:
        return None
    return Response(task_data(membership.campaign, step.task, request))


@extend_schema(
    parameters=[ITEM_ID],
    request=SubmitRequestSerializer,
    responses={
        200: shapes.QualificationSubmitResultSerializer,
        201: shapes.QualificationSubmitResultSerializer,
        409: OpenApiResponse(
            ErrorSerializer, description="Not this item now, or the campaign is not active."
        ),
    },
    description="An answer to a practice or qualification item, with the fields of a regular "
    "submit. Practice answers come back with feedback (what was expected and why); a "
    "qualification answer that ends an attempt comes back with its result, and after a failed "
    "first attempt with feedback on every item. 403 for a member screened out.",
)
@api_view(["POST"])
def submit_qualification_answer(request: Request, item_id: int) -> Response:
    data = request.data if isinstance(request.data, dict) else {}
    campaign_id = QualificationItem.objects.filter(pk=item_id).values_list("campaign_id").first()
    if campaign_id is None:
        raise Http404("No such item.")
    try:
        stored = flow.submit(campaign_id[0], _user(request), item_id, data)
    except (Membership.DoesNotExist, QualificationItem.DoesNotExist) as error:
        raise Http404("No such item.") from error
    except SubmitError as error:
        return submit_error(error, ERROR_STATUS)
    return Response(
        _submit_body(campaign_id[0], request, stored),
        status=status.HTTP_201_CREATED if stored.created else status.HTTP_200_OK,
    )


def _submit_body(campaign_id: int, request: Request, stored: flow.QualificationSubmit) -> dict:
    answer, result = stored.answer, stored.result
    membership = flow.member(campaign_id, _user(request))
    attempt_feedback: list[Any] = []
    screen_out = ""
    if result is not None and result.outcome == setup.Outcome.IN_PROGRESS:
        attempt_feedback = flow.attempt_feedback(
            membership.campaign, _user(request), result.attempt
        )
    if result is not None and result.outcome == setup.Outcome.FAILED:
        screen_out = flow.screen_out_url(membership)
    message = "Your answer was saved." if stored.created else "Your answer was already saved."
    return {
        "answer": answer.pk,
        "item": answer.item_id,
        "kind": answer.item.phase,
        "attempt": answer.attempt,
        "created": stored.created,
        "message": message,
        "feedback": None if stored.feedback is None else _plain(stored.feedback),
        "attempt_result": None if result is None else _plain(result),
        "attempt_feedback": [_plain(item) for item in attempt_feedback],
        "screen_out_url": screen_out,
    }


def _plain(value: Any) -> Any:
    return asdict(value)


@extend_schema(responses={200: shapes.MyQualificationSerializer})
@api_view(["GET"])
def my_qualification(request: Request, campaign_id: int) -> Response:
    """Where the caller stands: practising, qualifying, screened out, or on to the queue; the
    attempts so far and, after a failed first attempt, what each item expected and why."""
    campaign = annotator_campaign_or_404(request.user, campaign_id)
    user = _user(request)
    membership = flow.member(campaign.pk, user)
    step = flow.next_step(campaign, user)
    record = step.record
    attempts = list(record.attempts) if record else []
    failed_first = [a["attempt"] for a in attempts if not a["passed"]][:1]
    feedback = [flow.attempt_feedback(campaign, user, a) for a in failed_first]
    return Response(
        {
            "campaign": campaign.pk,
            "stage": str(step.stage),
            "outcome": record.outcome if record else "",
            "attempt": record.attempt if record else None,
            "attempts": attempts,
            "feedback": [_plain(item) for items in feedback for item in items],
            "screen_out_url": flow.screen_out_url(membership)
            if step.stage == flow.Stage.SCREENED_OUT
            else "",
        }
    )


# --- the managers' side -----------------------------------------------------------------


def _overview(campaign: Campaign) -> dict[str, Any]:
    phases = {
        phase: list(setup.items_of(campaign, phase).annotate(answer_count=Count("answers")))
        for phase in QualificationItem.Phase.values
    }
    rule = rules.PassRule.from_json(campaign.qualification_rule)
    qualification = phases[QualificationItem.Phase.QUALIFICATION]
    counts = setup.outcome_counts(setup.member_qualifications(campaign))
    return {
        "rule": rule.as_json(),
        "rule_text": rule.describe(len(qualification)),
        "fixed": setup.qualification_answered(campaign),
        "screen_out_url": campaign.screen_out_url,
        "practice": phases[QualificationItem.Phase.PRACTICE],
        "qualification": qualification,
        "counts": asdict(counts),
    }


class QualificationView(APIView):
    """The campaign's practice and qualification items, pass rule, screen-out URL and how many
    annotators passed, failed or are in progress; PATCH changes the rule and the URL."""

    parser_classes = [JSONParser]

    @extend_schema(responses={200: shapes.QualificationSerializer})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        return Response(shapes.QualificationSerializer(_overview(campaign)).data)

    @extend_schema(
        request=shapes.QualificationSettingsSerializer,
        responses={200: shapes.QualificationSerializer},
    )
    def patch(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        body = shapes.QualificationSettingsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        if "screen_out_url" in data:
            _service(lambda: setup.set_screen_out_url(campaign, data["screen_out_url"]))
        if {"min_correct", "required_questions"} & set(data):
            current = rules.PassRule.from_json(campaign.qualification_rule)
            _service(
                lambda: setup.set_rule(
                    campaign,
                    min_correct=data.get("min_correct", current.min_correct),
                    required_questions=data.get(
                        "required_questions", list(current.required_questions)
                    ),
                )
            )
        return Response(shapes.QualificationSerializer(_overview(campaign)).data)


class QualificationItemView(APIView):
    """PUT makes a pair of the campaign's dataset (by its id, as on the pair endpoints) a
    practice or qualification item, or changes it; DELETE stops using it."""

    parser_classes = [JSONParser]

    def pair(self, request: Request, campaign_id: int, pair_id: int) -> tuple[Campaign, Pair]:
        campaign = managed_campaign(request, campaign_id)
        return campaign, get_object_or_404(Pair, pk=pair_id, dataset_id=campaign.dataset_id)

    @extend_schema(
        request=shapes.ItemChoiceSerializer, responses={200: shapes.QualificationItemSerializer}
    )
    def put(self, request: Request, campaign_id: int, pair_id: int) -> Response:
        campaign, pair = self.pair(request, campaign_id, pair_id)
        body = shapes.ItemChoiceSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        item = _service(
            lambda: setup.choose_item(
                campaign,
                pair,
                data.get("phase", ""),
                dict(data["expected_answers"]),
                dict(data.get("explanations") or {}),
            )
        )
        item.answer_count = item.answers.count()
        return Response(shapes.QualificationItemSerializer(item).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request, campaign_id: int, pair_id: int) -> Response:
        campaign, pair = self.pair(request, campaign_id, pair_id)
        _service(lambda: setup.remove_item(campaign, pair))
        return Response(status=status.HTTP_204_NO_CONTENT)


class QualificationMembers(APIView):
    """Each annotator's practice and qualification: outcome, attempts, times, and who let them
    in and why."""

    @extend_schema(responses={200: shapes.MemberQualificationSerializer(many=True)})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        rows = list(setup.member_qualifications(campaign).values())
        return Response(shapes.MemberQualificationSerializer(rows, many=True).data)


class QualificationAdmit(APIView):
    """Let an annotator who failed the qualification in, with a reason (kept with who and
    when)."""

    parser_classes = [JSONParser]

    @extend_schema(
        request=shapes.AdmitSerializer, responses={200: shapes.MemberQualificationSerializer}
    )
    def post(self, request: Request, campaign_id: int, annotator_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        # Any other id answers 404 naming no one, whether or not an account holds it.
        annotator = campaign_account_or_404(campaign, annotator_id)
        body = shapes.AdmitSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        reason = body.validated_data["reason"]
        _service(lambda: setup.admit(campaign, annotator, reason, by=_user(request)))
        row = setup.member_qualifications(campaign)[annotator.pk]
        return Response(shapes.MemberQualificationSerializer(row).data)


class BonusRuleView(APIView):
    """The rule of the Prolific bonus list: an amount per item beyond a number of items, and
    an amount for gold accuracy at or above a threshold. PUT replaces it (null: none)."""

    parser_classes = [JSONParser]

    def _read(self, campaign: Campaign) -> dict[str, Any]:
        rule = prolific.BonusRule.from_json(campaign.bonus_rule)
        return {**rule.as_json(), "text": rule.describe(campaign)}

    @extend_schema(responses={200: shapes.BonusRuleReadSerializer})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        return Response(shapes.BonusRuleReadSerializer(self._read(campaign)).data)

    @extend_schema(
        request=shapes.BonusRuleSerializer, responses={200: shapes.BonusRuleReadSerializer}
    )
    def put(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        body = shapes.BonusRuleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        rule = _service(lambda: prolific.checked_bonus_rule(dict(body.validated_data)))
        prolific.set_bonus_rule(campaign, rule)
        return Response(shapes.BonusRuleReadSerializer(self._read(campaign)).data)


class BonusPayments(APIView):
    """The bonus shares paid through Prolific's API, newest first; ``unconfirmed`` ones were
    sent but Prolific's answer was lost (see ``settle``)."""

    @extend_schema(responses={200: shapes.BonusPaymentSerializer(many=True)})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        payments = campaign.bonus_payments.select_related("paid_by").order_by("-paid_at", "-pk")
        return Response(shapes.BonusPaymentSerializer(payments, many=True).data)


class BonusPaymentSettle(APIView):
    """A manager's word on an unconfirmed bulk bonus after looking it up on Prolific: paid
    (its shares recorded as paid) or not (withdrawn, owed again). 404 when none of its shares
    is unconfirmed, or its press may still be waiting for Prolific."""

    parser_classes = [JSONParser]

    @extend_schema(
        request=shapes.SettleSerializer,
        responses={200: shapes.SettledSerializer, 404: ErrorSerializer},
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        body = shapes.SettleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        payment_id, paid = body.validated_data["prolific_payment_id"], body.validated_data["paid"]
        settled = prolific_api.settle(campaign, payment_id, paid=paid)
        if not settled:
            raise Http404("No share of this bulk bonus is unconfirmed and settleable now.")
        return Response({"settled": settled})


def _csv_response(campaign: Campaign, kind: str, text: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    filename = prolific.csv_filename(campaign, kind)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class ProlificApprovals(APIView):
    """Prolific's approval list as CSV: ``participant_id,decision,reason`` (approve, reject,
    screened_out), Prolific members only."""

    content_negotiation_class = FileNegotiation

    @extend_schema(responses={CSV: OpenApiTypes.STR})
    def get(self, request: Request, campaign_id: int) -> HttpResponse:
        campaign = managed_campaign(request, campaign_id)
        return _csv_response(campaign, "approvals", prolific.approvals_csv(campaign))


class ProlificBonuses(APIView):
    """Prolific's bulk bonus list as CSV: ``participant_id,amount`` lines, no header."""

    content_negotiation_class = FileNegotiation

    @extend_schema(responses={CSV: OpenApiTypes.STR})
    def get(self, request: Request, campaign_id: int) -> HttpResponse:
        campaign = managed_campaign(request, campaign_id)
        return _csv_response(campaign, "bonuses", prolific.bonuses_csv(campaign))
