"""API for the leaderboard of a campaign's reward models: the JSON of
``python -m evaluation compare --format json``, computed from the stored pair scores."""

import re
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from prb_annotate.api.permissions import managed_campaign
from prb_annotate.campaigns.leaderboard import (
    LeaderboardError,
    campaign_leaderboard,
)

POLICIES = ("left-out", "as-wrong")
RUN_IDS = re.compile(r"[0-9]{1,12}(,[0-9]{1,12})*")


class LeaderboardQuerySerializer(serializers.Serializer[dict[str, Any]]):
    policy = serializers.ChoiceField(
        choices=POLICIES,
        default="left-out",
        help_text="Rank by accuracy with ties left out, or with ties counted as wrong.",
    )
    runs = serializers.CharField(
        required=False,
        help_text="Run ids to compare, comma-separated (default: the newest run of each model "
        "over all pairs, or of all runs where none covers every pair).",
    )

    def validate_runs(self, value: str) -> list[int]:
        if not RUN_IDS.fullmatch(value):
            raise serializers.ValidationError("Run ids separated by commas, e.g. 3,5,8.")
        return [int(part) for part in value.split(",")]


class CampaignLeaderboard(APIView):
    """Reward models ranked on all, validated and excluded pairs and per category: Wilson
    intervals, the difference to the best with Tango's paired score interval and the exact
    McNemar p-value (Holm-adjusted), significance groups, validated against excluded per
    model, and the models that swap places between all and validated pairs. Each run's card is
    in ``runs``."""

    @extend_schema(parameters=[LeaderboardQuerySerializer], responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        query = LeaderboardQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = query.validated_data
        try:
            board = campaign_leaderboard(
                campaign,
                policy=options["policy"],
                run_ids=options.get("runs"),
            )
        except LeaderboardError as exc:
            raise serializers.ValidationError({exc.field: [str(exc)]}) from exc
        return Response(board.as_dict())
