"""REST API for managers: datasets and their pairs, campaigns, progress, audit, exports.

Thin views: a serializer checks the input, a service function does the work (the same ones the
web pages and management commands call), and the access rules are those of the web app
(``api.permissions``). The annotator work endpoints live in ``api.work``.
"""

import re
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Count, QuerySet
from django.http import FileResponse, HttpResponse, HttpResponseBase
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from prb_annotate.api import serializers as api
from prb_annotate.api.errors import error_body
from prb_annotate.api.jobs import JobSerializer, job_accepted
from prb_annotate.api.negotiation import FileNegotiation
from prb_annotate.api.parsers import JSONParser
from prb_annotate.api.permissions import IsStaff, managed_campaign
from prb_annotate.api.schema import ImportErrorSerializer
from prb_annotate.api.serializers_qualification import creation_choices
from prb_annotate.audit import decisions, listing
from prb_annotate.audit.cache import campaign_audit_cached
from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.audit.exclusions import (
    exclude_annotator,
    exclusion_history,
    lift_exclusion,
    pairs_short_of_answers,
)
from prb_annotate.audit.listing import PairRow
from prb_annotate.audit.rule import PairVerdict
from prb_annotate.campaigns.editing import after_changes
from prb_annotate.campaigns.leaderboard import LeaderboardError
from prb_annotate.campaigns.lifecycle import (
    CampaignSetupError,
    add_member,
    create_campaign,
    set_status,
)
from prb_annotate.campaigns.members import campaign_account_or_404
from prb_annotate.campaigns.places import places
from prb_annotate.campaigns.planned_sample import SamplePlanError
from prb_annotate.campaigns.progress import campaign_progress, dashboard_figures
from prb_annotate.datasets.archives import import_uploaded_file
from prb_annotate.datasets.importing import ImportFailed
from prb_annotate.exports.archive import chosen_export_zip, refusal_status
from prb_annotate.exports.slices import ExportError
from prb_annotate.jobs import imports
from prb_annotate.jobs.running import start_dataset_import
from prb_annotate.models import Adjudication, Campaign, CampaignItem, Dataset, Membership, Pair
from prb_annotate.paper.inputs import paper_zip
from prb_annotate.security.access import managed_campaigns
from prb_annotate.security.request_limits import too_large_message
from prb_annotate.web.pair_search import matching_pairs

MAX_LISTED_PROBLEMS = 100
T = TypeVar("T")


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request: Request) -> int | None:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        # DRF would quietly use the default for a bad value; say so instead.
        if not re.fullmatch(r"[0-9]{1,6}", raw) or not 1 <= int(raw) <= self.max_page_size:
            raise serializers.ValidationError(
                {"page_size": [f"A whole number from 1 to {self.max_page_size}."]}
            )
        return int(raw)

    def get_page_number(self, request: Request, paginator: Any) -> Any:
        # DRF reads an empty page as the first one; say it is wrong instead.
        if request.query_params.get(self.page_query_param) == "":
            raise serializers.ValidationError({"page": ["A whole number from 1."]})
        return super().get_page_number(request, paginator)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
            elif parameter["name"] == self.page_query_param:
                parameter["schema"]["minimum"] = 1
        return parameters


@extend_schema(exclude=True)
@api_view(["GET", "POST", "PUT", "PATCH", "DELETE"])
@permission_classes([AllowAny])
def not_found(request: Request) -> Response:
    raise NotFound("No such API endpoint.")


class ApiRoot(APIView):
    """Entry points of the API."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        names = {
            "datasets": "api_dataset_list",
            "campaigns": "api_campaign_list",
            "schema": "api_schema",
            "docs": "api_docs",
            "token": "api_token",
        }
        return Response({key: reverse(name, request=request) for key, name in names.items()})


# --- datasets and pairs --------------------------------------------------------------------


class DatasetList(generics.ListAPIView[Dataset]):
    """Datasets with their pair counts; POST a file to import it (same rules as import_pairs)."""

    permission_classes = [IsAuthenticated, IsStaff]
    serializer_class = api.DatasetSerializer
    pagination_class = Pagination
    parser_classes = [MultiPartParser]
    extra_error_codes = {"413": "The file is larger than PRB_UPLOAD_MAX_BYTES."}

    def get_queryset(self) -> QuerySet[Dataset]:
        return Dataset.objects.annotate(pair_count=Count("pairs")).order_by("name")

    @extend_schema(
        request=api.DatasetImportSerializer,
        responses={
            201: api.ImportReportSerializer,
            200: api.ImportReportSerializer,
            202: JobSerializer,
            400: ImportErrorSerializer,
        },
        description="Import an uploaded .jsonl, .json, .csv, .parquet or .arrow file, or a .zip "
        "of a Hugging Face snapshot folder, a folder save_to_disk wrote or an export, into the "
        "named dataset (created when missing), under an optional column mapping (`mapping`, "
        "JSON text; a bad one is refused with 400 naming every problem). All or nothing: a "
        "file with any bad record is refused with 400 and the "
        "list of problems (file, line, field), and nothing is written. 201 when records were "
        "created, 200 when there was nothing new. A file above PRB_BACKGROUND_IMPORT_BYTES is "
        "imported by a worker instead: 202 with the job, whose result file is this report.",
    )
    def post(self, request: Request) -> Response:
        form = api.DatasetImportSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        upload = form.validated_data["file"]
        if upload.size is not None and upload.size > settings.PRB_UPLOAD_MAX_BYTES:
            message = too_large_message()
            return Response(error_body(message, {"file": [message]}), status=413)
        if imports.in_background(upload.size):  # a large file: a worker imports it
            job = start_dataset_import(
                request.user,
                upload,
                form.validated_data["name"],
                update=form.validated_data["update"],
                mapping=str(request.data.get("mapping") or ""),
            )
            return job_accepted(request, job)
        try:
            report = import_uploaded_file(
                upload.file,
                upload.name or "",
                form.validated_data["name"],
                update=form.validated_data["update"],
                mapping=form.validated_data["mapping"],
            )
        except ImportFailed as exc:
            return Response(import_failed_body(exc), status=status.HTTP_400_BAD_REQUEST)
        code = status.HTTP_201_CREATED if report.created else status.HTTP_200_OK
        return Response(report.as_dict(), status=code)


def import_failed_body(exc: ImportFailed) -> dict[str, Any]:
    problems = exc.problems[:MAX_LISTED_PROBLEMS]
    errors: dict[str, list[str]] = {}
    for problem in problems:
        errors.setdefault(problem.field or "file", []).append(str(problem))
    detail = str(exc).splitlines()[0]
    return error_body(
        detail, errors, problems=[problem.as_dict() for problem in problems], total=exc.total
    )


class DatasetDetail(generics.RetrieveAPIView[Dataset]):
    permission_classes = [IsAuthenticated, IsStaff]
    serializer_class = api.DatasetDetailSerializer
    lookup_url_kwarg = "dataset_id"

    def get_queryset(self) -> QuerySet[Dataset]:
        return Dataset.objects.annotate(pair_count=Count("pairs"))


@extend_schema(parameters=[api.PairFilterSerializer])
class PairList(generics.ListAPIView[Pair]):
    """A dataset's pairs by record id, filtered by category and searched by text."""

    permission_classes = [IsAuthenticated, IsStaff]
    serializer_class = api.PairSerializer
    pagination_class = Pagination

    def get_queryset(self) -> QuerySet[Pair]:
        dataset = get_object_or_404(Dataset, pk=self.kwargs["dataset_id"])
        filters = api.PairFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        pairs = matching_pairs(
            dataset.pairs.only("id", "external_id", "category", "question"),
            category=filters.validated_data.get("category", ""),
            query=filters.validated_data.get("q", "").strip(),
        )
        return pairs.order_by("external_id")


class PairDetail(generics.RetrieveAPIView[Pair]):
    permission_classes = [IsAuthenticated, IsStaff]
    serializer_class = api.PairDetailSerializer
    lookup_url_kwarg = "pair_id"

    def get_queryset(self) -> QuerySet[Pair]:
        return Pair.objects.filter(dataset_id=self.kwargs["dataset_id"])


# --- campaigns -----------------------------------------------------------------------------


class CampaignList(generics.ListCreateAPIView[Campaign]):
    """Campaigns the user manages (all of them for staff); staff create new ones."""

    pagination_class = Pagination
    parser_classes = [JSONParser]

    def get_permissions(self) -> list[Any]:
        if self.request.method == "POST":
            return [IsAuthenticated(), IsStaff()]
        return [IsAuthenticated()]

    def get_serializer_class(self) -> type[api.CampaignSerializer]:
        if self.request.method == "POST":
            return api.CampaignCreateSerializer
        return api.CampaignSerializer

    def get_queryset(self) -> QuerySet[Campaign]:
        campaigns = managed_campaigns(self.request.user).select_related("created_by")
        return campaigns.order_by("-created_at", "-id")

    @extend_schema(responses={201: api.CampaignSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().post(request, *args, **kwargs)

    def perform_create(self, serializer: serializers.BaseSerializer[Campaign]) -> None:
        data = dict(serializer.validated_data)
        targets = data.pop("sample_targets", None)
        planned = None if targets is None else api.planned_sample_input(targets)
        for name in ("practice_pairs", "qualification_pairs"):
            if name in data:
                data[name] = _as_field(name, partial(creation_choices, data[name]))
        if "qualification_rule" in data:
            data["qualification_rule"] = dict(data["qualification_rule"])
        try:
            serializer.instance = create_campaign(
                data.pop("dataset"),
                data.pop("name"),
                k=data.pop("annotations_per_pair"),
                sample=data.pop("sample", None),
                sample_targets=None if planned is None else planned[0],
                sample_design=None if planned is None else planned[1],
                gold_pair_ids=data.pop("gold_pair_ids", ()),
                gold_rate=data.pop("gold_rate"),
                seed=data.pop("seed"),
                created_by=self.request.user,  # type: ignore[arg-type]
                **data,
            )
        except CampaignSetupError as exc:
            raise serializers.ValidationError(str(exc)) from exc
        except SamplePlanError as exc:
            raise serializers.ValidationError({"sample_targets": {exc.field: [str(exc)]}}) from exc

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        response = super().create(request, *args, **kwargs)
        # Answer with the campaign as it is read back, not with the creation form.
        campaign = Campaign.objects.get(pk=response.data["id"])
        response.data = api.CampaignSerializer(campaign).data
        return response


class CampaignDetail(generics.RetrieveUpdateAPIView[Campaign]):
    serializer_class = api.CampaignSerializer
    parser_classes = [JSONParser]

    def get_object(self) -> Campaign:
        return managed_campaign(self.request, self.kwargs["campaign_id"])

    def perform_update(self, serializer: serializers.BaseSerializer[Campaign]) -> None:
        campaign = serializer.save()
        # A new gold minimum or bias threshold may leave answers out or bring them back:
        # replacement slots follow (the settings page does the same).
        after_changes(campaign, list(serializer.validated_data))


class CampaignStatusChange(APIView):
    """Start (or resume), pause or close a campaign; closing is final."""

    parser_classes = [JSONParser]

    target_status = ""

    @extend_schema(request=None, responses={200: api.CampaignSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        try:
            set_status(campaign, self.target_status)
        except CampaignSetupError as exc:
            raise serializers.ValidationError({"status": [str(exc)]}) from exc
        return Response(api.CampaignSerializer(campaign).data)


class MemberList(generics.ListCreateAPIView[Membership]):
    """The campaign's members; POST adds one (or changes their role)."""

    serializer_class = api.MembershipSerializer
    pagination_class = Pagination
    parser_classes = [JSONParser]

    def get_queryset(self) -> QuerySet[Membership]:
        campaign = managed_campaign(self.request, self.kwargs["campaign_id"])
        return campaign.memberships.select_related("user").order_by("user__username")

    def perform_create(self, serializer: serializers.BaseSerializer[Membership]) -> None:
        campaign = managed_campaign(self.request, self.kwargs["campaign_id"])
        try:
            serializer.instance = add_member(
                campaign,
                serializer.validated_data["user"],
                serializer.validated_data.get("role", Membership.Role.ANNOTATOR),
            )
        except CampaignSetupError as exc:
            raise serializers.ValidationError({"username": [str(exc)]}) from exc


# --- results -------------------------------------------------------------------------------


class CampaignProgressView(APIView):
    @extend_schema(responses={200: api.ProgressSerializer})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        progress = replace(
            campaign_progress(campaign), pairs_short_of_answers=pairs_short_of_answers(campaign)
        )
        body = api.ProgressSerializer(progress).data
        return Response({**body, "places": api.PlacesSerializer(places(campaign)).data})


def audit_for(request: Request, campaign: Campaign) -> dict[str, Any]:
    query = api.AuditQuerySerializer(data=request.query_params)
    query.is_valid(raise_exception=True)
    seed = query.validated_data.get("seed", campaign.seed)
    return campaign_audit_cached(campaign, resamples=query.validated_data["resamples"], seed=seed)


class CampaignAuditView(APIView):
    """The full audit: agreement per question with bootstrap intervals, verdicts, biases."""

    @extend_schema(parameters=[api.AuditQuerySerializer], responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        return Response(audit_for(request, campaign))


class CampaignAuditPaperView(APIView):
    """The audit for a paper, as a zip: booktabs tables and their Markdown twins, the methods
    paragraph (.tex and .md) with references.bib, the figures as PDF and SVG, and
    numbers.json, the data every printed number comes from."""

    content_negotiation_class = FileNegotiation

    @extend_schema(
        parameters=[api.PaperQuerySerializer],
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
    )
    def get(self, request: Request, campaign_id: int) -> HttpResponseBase:
        campaign = managed_campaign(request, campaign_id)
        query = api.PaperQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            content, filename = paper_zip(
                campaign, audit_for(request, campaign), query.validated_data.get("run") or None
            )
        except LeaderboardError as error:
            raise serializers.ValidationError({"run": [str(error)]}) from error
        response = HttpResponse(content, content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class CampaignAgreementView(APIView):
    """Agreement per question (Krippendorff's alpha, AC1, ...) with bootstrap intervals."""

    @extend_schema(parameters=[api.AuditQuerySerializer], responses={200: api.AgreementSerializer})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        audit = audit_for(request, campaign)
        settings = audit["settings"]
        return Response(
            {
                "resamples": settings["resamples"],
                "seed": settings["seed"],
                "confidence": settings["confidence"],
                "questions": audit["agreement"],
            }
        )


class AnnotatorQualityView(APIView):
    """Per annotator: gold accuracy, agreement with the others, share of A with its p-value,
    median time, fast and straight-lined shares, outlier marks, and whether they are out of
    the audit (and why)."""

    @extend_schema(responses={200: api.AnnotatorQualitySerializer(many=True)})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        rows = dashboard_figures(campaign)["annotators"]
        return Response(api.AnnotatorQualitySerializer(rows, many=True).data)


class ExclusionList(APIView):
    """Annotators a manager left out of the audit, with history; POST excludes one."""

    parser_classes = [JSONParser]

    @extend_schema(responses={200: api.ExclusionSerializer(many=True)})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        return Response(api.ExclusionSerializer(exclusion_history(campaign), many=True).data)

    @extend_schema(request=api.ExcludeSerializer, responses={201: api.ExclusionSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        body = api.ExcludeSerializer(data=request.data, context={"campaign": campaign})
        body.is_valid(raise_exception=True)
        exclusion = _as_api_error(
            lambda: exclude_annotator(
                campaign,
                body.validated_data["annotator"],
                body.validated_data["reason"],
                by=request.user,  # type: ignore[arg-type]  # IsStaff or a manager: a User
            )
        )
        return Response(api.ExclusionSerializer(exclusion).data, status=status.HTTP_201_CREATED)


class ExclusionLift(APIView):
    """Bring an excluded annotator back into the audit (the exclusion stays as history); 404,
    naming no one, for an id that is none of the campaign's accounts."""

    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={200: api.ExclusionSerializer})
    def post(self, request: Request, campaign_id: int, annotator_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        annotator = campaign_account_or_404(campaign, annotator_id)
        exclusion = _as_api_error(
            lambda: lift_exclusion(campaign, annotator, by=request.user)  # type: ignore[arg-type]
        )
        return Response(api.ExclusionSerializer(exclusion).data)


def _as_field(field: str, action: Callable[[], T]) -> T:
    """A serializer's ValidationError, reported under ``field``."""
    try:
        return action()
    except serializers.ValidationError as exc:
        raise serializers.ValidationError({field: exc.detail}) from exc


def _as_api_error(action: Callable[[], T]) -> T:
    """The service's ValidationError (field -> messages) as the API's 400."""
    try:
        return action()
    except DjangoValidationError as exc:
        raise serializers.ValidationError(exc.message_dict) from exc


@extend_schema(parameters=[api.VerdictFilterSerializer])
class VerdictList(generics.ListAPIView[PairRow]):  # type: ignore[type-var]
    """Every regular pair's verdict and reasons, by natural record id; the filters and sorts
    of the "Pairs" page (verdict, reason, category, flagged, split, adjudicated, run,
    disagrees, sort)."""

    serializer_class = api.PairRowSerializer
    pagination_class = Pagination

    def get_queryset(self) -> list[PairRow]:  # type: ignore[override]
        campaign = managed_campaign(self.request, self.kwargs["campaign_id"])
        query = api.VerdictFilterSerializer(data=self.request.query_params)
        query.is_valid(raise_exception=True)
        try:
            filters = listing.filters_from(query.validated_data, campaign)
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from error
        return listing.select_rows(campaign, campaign_verdicts(campaign), filters)


class AdjudicationList(generics.ListCreateAPIView[Adjudication]):
    """A campaign pair's adjudications, newest first; POST records a decision (validated,
    excluded, or withdrawn to hand the pair back to the annotators' verdict)."""

    serializer_class = api.AdjudicationSerializer
    pagination_class = Pagination
    parser_classes = [JSONParser]

    def item(self) -> CampaignItem:
        campaign = managed_campaign(self.request, self.kwargs["campaign_id"])
        return get_object_or_404(CampaignItem, campaign=campaign, pair_id=self.kwargs["pair_id"])

    def get_queryset(self) -> QuerySet[Adjudication]:
        return (
            Adjudication.objects.filter(item=self.item())
            .select_related("decided_by")
            .order_by("-created_at", "-id")
        )

    def perform_create(self, serializer: serializers.BaseSerializer[Adjudication]) -> None:
        data = serializer.validated_data
        try:
            serializer.instance = decisions.adjudicate(
                self.item(),
                data["decision"],
                data["reason"],
                note=data.get("note", ""),
                by=self.request.user,  # type: ignore[arg-type]
            )
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.message_dict) from error


@extend_schema(
    parameters=[
        OpenApiParameter(
            "show",
            str,
            enum=list(decisions.QUEUE_LISTS),
            description="undecided (the default), validated, excluded or all",
        )
    ]
)
class AdjudicationQueue(generics.ListAPIView[PairVerdict]):  # type: ignore[type-var]
    """Undecided pairs nobody adjudicated, split votes with all annotations in first; with
    ``show=validated``, ``excluded`` or ``all`` those pairs instead, by record id."""

    serializer_class = api.VerdictSerializer
    pagination_class = Pagination

    def get_queryset(self) -> list[PairVerdict]:  # type: ignore[override]
        campaign = managed_campaign(self.request, self.kwargs["campaign_id"])
        shown = self.request.query_params.get("show") or "undecided"
        if shown not in decisions.QUEUE_LISTS:
            lists = ", ".join(decisions.QUEUE_LISTS)
            raise serializers.ValidationError({"show": [f"Use one of {lists}, not {shown!r}."]})
        return decisions.queue_list(campaign_verdicts(campaign).values(), shown)


class _NoFormatOverride:
    # Reads DRF's settings, except that ``?format=`` does not pick a renderer.
    URL_FORMAT_OVERRIDE = None

    def __getattr__(self, name: str) -> Any:
        return getattr(api_settings, name)


class ExportNegotiation(FileNegotiation):
    """On the export endpoint ``?format=`` is the export's file format (jsonl, parquet, csv),
    as in ``export_split --format``; the renderer (for error bodies) comes from Accept."""

    settings = _NoFormatOverride()  # type: ignore[assignment]


class CampaignExportView(APIView):
    """The export as a zip: one folder per category, annotations, manifest and dataset card."""

    content_negotiation_class = ExportNegotiation

    @extend_schema(
        parameters=[api.ExportQuerySerializer],
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
    )
    def get(self, request: Request, campaign_id: int) -> HttpResponseBase:
        campaign = managed_campaign(request, campaign_id)
        query = api.ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        try:
            archive, filename = chosen_export_zip(campaign, query.validated_data)
        except ExportError as error:
            return Response(error_body(str(error)), status=refusal_status(error))
        return FileResponse(
            archive, as_attachment=True, filename=filename, content_type="application/zip"
        )
