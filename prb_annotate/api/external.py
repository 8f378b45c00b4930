"""External campaigns in the API: an answer file uploaded (``import_annotations``'s import,
all or nothing, its problems with line and field) and the long table of any campaign's
answers as CSV."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from prb_annotate.api.errors import error_body
from prb_annotate.api.jobs import JobSerializer, job_accepted
from prb_annotate.api.permissions import managed_campaign
from prb_annotate.api.views import ExportNegotiation, import_failed_body
from prb_annotate.campaigns.external.importing import check_importable, import_upload
from prb_annotate.campaigns.external.mapping import MappingError
from prb_annotate.datasets.importing import ImportFailed
from prb_annotate.exports.long_table import long_table_csv
from prb_annotate.jobs import imports
from prb_annotate.jobs.running import start_answers_import


class CampaignAnswersImportView(APIView):
    """Import an answer file (``file``, and optionally ``mapping``) into an external campaign."""

    parser_classes = [MultiPartParser]

    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={201: OpenApiTypes.OBJECT, 202: JobSerializer},
        description="201 with the import's figures; a file above PRB_BACKGROUND_IMPORT_BYTES is "
        "imported by a worker instead: 202 with the job (docs/api.md, background jobs). A "
        "campaign that is not external, or a file type not read, is a 400 whatever the size.",
    )
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        upload = request.FILES.get("file")
        if upload is None:
            return Response(
                error_body("No file.", {"file": ["An answer file is required."]}),
                status=status.HTTP_400_BAD_REQUEST,
            )
        mapping_file = request.FILES.get("mapping")
        try:
            # Refused before any job is made: a worker would only fail on it later.
            check_importable(campaign, upload.name or "")
            if imports.in_background(upload.size):  # a large file: a worker imports it
                job = start_answers_import(campaign, request.user, upload, mapping_file)
                return job_accepted(request, job)
            report = import_upload(
                campaign,
                upload,
                mapping_file,
                request.user,  # type: ignore[arg-type]
            )
        except MappingError as error:
            return Response(
                error_body(str(error), {"mapping": [str(error)]}),
                status=status.HTTP_400_BAD_REQUEST,
            )
        except ImportFailed as error:
            return Response(import_failed_body(error), status=status.HTTP_400_BAD_REQUEST)
        return Response(report.as_dict(), status=status.HTTP_201_CREATED)


class CampaignLongTableView(APIView):
    """The ``rater, unit, question, value`` table of the answers the agreement reads (CSV)."""

    content_negotiation_class = ExportNegotiation

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.BINARY})
    def get(self, request: Request, campaign_id: int) -> HttpResponse:
        campaign = managed_campaign(request, campaign_id)
        response = HttpResponse(long_table_csv(campaign), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="campaign-{campaign.pk}-long.csv"'
        return response
