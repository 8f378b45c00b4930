"""API for audits by planned sample: preview a plan for a dataset, and extend a campaign's
sample after a pilot. The plan itself is created with the campaign (``sample_targets`` on
``POST /api/campaigns/``) and read back as its ``sample_plan``."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import get_object_or_404
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from prb_annotate.api import serializers as api
from prb_annotate.api.parsers import JSONParser
from prb_annotate.api.permissions import IsStaff, managed_campaign
from prb_annotate.audit import plan_odds, ppi
from prb_annotate.audit.sampling import PlanError
from prb_annotate.campaigns.planned_sample import (
    SamplePlanError,
    describe_extension,
    extend_sample,
    plan_for_dataset,
)
from prb_annotate.models import Dataset


class DatasetSamplePlan(APIView):
    """The sample a set of targets needs: pairs per category, annotations and cost, the chance
    that it reaches its half-widths if the shares are as expected (``odds``) and the plan at
    the share's bound nearest one half (``cautious``). Nothing is written; create the campaign
    with the same targets to draw it."""

    permission_classes = [IsAuthenticated, IsStaff]
    parser_classes = [JSONParser]

    @extend_schema(request=api.SamplePlanRequestSerializer, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, dataset_id: int) -> Response:
        dataset = get_object_or_404(Dataset, pk=dataset_id)
        form = api.SamplePlanRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            plan = plan_for_dataset(
                dataset,
                form.targets(),
                form.validated_data["annotations_per_pair"],
                leave_out=form.validated_data.get("gold_pair_ids", ()),
                design=form.design_chosen(),
            )
        except SamplePlanError as exc:
            raise serializers.ValidationError({exc.field: [str(exc)]}) from exc
        # An active plan's odds are not a uniform draw's: it says what each design expects.
        found = plan.as_json() if plan.design else plan_odds.with_odds(plan)
        agreement = form.validated_data.get("model_agreement")
        if agreement is not None:
            populations = {row.category: row.population for row in plan.categories}
            try:
                found["with_model"] = ppi.plan_for_targets(
                    populations, plan.targets, plan.k, agreement
                )
            except PlanError as exc:
                raise serializers.ValidationError({exc.field: [exc.message]}) from exc
        return Response(found)


class CampaignExtendSample(APIView):
    """Add just enough pairs per category to reach the plan's targets at the validated shares
    seen so far (seeded: the same pairs a plan for the new sizes would draw)."""

    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        try:
            added = extend_sample(campaign)
        except SamplePlanError as exc:
            raise serializers.ValidationError({exc.field: [str(exc)]}) from exc
        return Response(
            {
                "added": added,
                "detail": describe_extension(added),
                "sample_plan": campaign.sample_plan,
            }
        )
