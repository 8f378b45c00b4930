"""API of background jobs: start one for a campaign (202 with the job's URL), follow its
progress, cancel it, download its result file, remove it. Managers of the campaign only."""

from pathlib import Path
from typing import Any

from django.http import FileResponse, Http404
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.utils.translation import gettext
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from prb_annotate.api.parsers import JSONParser
from prb_annotate.api.permissions import managed_campaign
from prb_annotate.jobs.progress import STOPPING_WORDS, still_stopping
from prb_annotate.jobs.running import (
    JOB_KINDS,
    JOB_STATUSES,
    STARTABLE_KINDS,
    JobRefused,
    cancel_job,
    recover_stale_jobs,
    remove_job,
    start_job,
)
from prb_annotate.models import Job
from prb_annotate.security.access import can_manage, is_staff


class JobStartSerializer(serializers.Serializer[dict[str, Any]]):
    kind = serializers.ChoiceField(choices=STARTABLE_KINDS)
    options = serializers.DictField(required=False, default=dict)

    def validate_options(self, options: dict[str, Any]) -> dict[str, Any]:
        # An export's with_validation must be a JSON boolean: the text "false" is truthy.
        flag = options.get("with_validation", False)
        if self.initial_data.get("kind") == "export" and not isinstance(flag, bool):
            message = gettext("Expected true or false, not %(value)s.") % {"value": repr(flag)}
            raise serializers.ValidationError({"with_validation": [message]})
        return options


class JobSerializer(serializers.Serializer[dict[str, Any]]):
    """A job as every answer here gives it (``job_body``)."""

    id = serializers.IntegerField()
    url = serializers.URLField()
    campaign = serializers.IntegerField(allow_null=True, help_text="None: a dataset import.")
    kind = serializers.ChoiceField(choices=JOB_KINDS)
    options = serializers.DictField()
    status = serializers.ChoiceField(choices=JOB_STATUSES)
    done = serializers.IntegerField(help_text="Steps of the work done so far.")
    total = serializers.IntegerField(help_text="Steps of the whole work.")
    error = serializers.CharField(allow_blank=True)
    log = serializers.CharField(allow_blank=True)
    file = serializers.URLField(allow_null=True, help_text="The result file, once done.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


def job_body(request: Request, job: Job) -> dict[str, Any]:
    url = request.build_absolute_uri(reverse("api_job", args=[job.pk]))
    return {
        "id": job.pk,
        "url": url,
        "campaign": job.campaign_id,
        "kind": job.kind,
        "options": job.options,
        "status": job.status,
        "done": job.done,
        "total": job.total,
        "error": job.error,
        "log": job.log,
        "file": f"{url}file/" if job.status == Job.Status.DONE and job.result_file else None,
        "created_at": job.created_at,
        "finished_at": job.finished_at,
    }


def job_accepted(request: Request, job: Job) -> Response:
    """202 with the job, its URL in ``Location`` too."""
    answer = job_body(request, job)
    return Response(answer, status=status.HTTP_202_ACCEPTED, headers={"Location": answer["url"]})


def managed_job(request: Request, job_id: int) -> Job:
    """The job when the user manages its campaign (a dataset import's, without one: staff);
    404 otherwise. Dead workers' jobs are retried or marked failed first, so no answer says
    "running" for a job no worker runs."""
    recover_stale_jobs()
    job = Job.objects.select_related("campaign").filter(pk=job_id).first()
    if job is None:
        raise Http404("No such job.")
    allowed = (
        is_staff(request.user) if job.campaign is None else can_manage(request.user, job.campaign)
    )
    if not allowed:
        raise Http404("No such job.")
    return job


class CampaignJobs(APIView):
    """A campaign's jobs (GET), or a new one started (POST: 202 with its URL)."""

    parser_classes = [JSONParser]

    @extend_schema(responses={200: JobSerializer(many=True)})
    def get(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        recover_stale_jobs()
        return Response([job_body(request, job) for job in campaign.jobs.all()[:100]])

    @extend_schema(request=JobStartSerializer, responses={202: JobSerializer})
    def post(self, request: Request, campaign_id: int) -> Response:
        campaign = managed_campaign(request, campaign_id)
        body = JobStartSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            job = start_job(
                campaign, request.user, body.validated_data["kind"], body.validated_data["options"]
            )
        except JobRefused as error:
            raise serializers.ValidationError({"kind": [str(error)]}) from error
        except ValueError as error:
            raise serializers.ValidationError({"options": [str(error)]}) from error
        return job_accepted(request, job)


class JobDetail(APIView):
    """One job: its status and progress (GET), or removed with its file (DELETE, once over)."""

    @extend_schema(responses={200: JobSerializer})
    def get(self, request: Request, job_id: int) -> Response:
        return Response(job_body(request, managed_job(request, job_id)))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, job_id: int) -> Response:
        job = managed_job(request, job_id)
        if job.status in (Job.Status.QUEUED, Job.Status.RUNNING):
            raise serializers.ValidationError({"status": ["Cancel the job before removing it."]})
        if still_stopping(job):
            raise serializers.ValidationError({"status": [str(STOPPING_WORDS)]})
        remove_job(job)
        return Response(status=status.HTTP_204_NO_CONTENT)


class JobCancel(APIView):
    """Cancel a queued or running job; a running one stops at its next step (a scoring job at
    its model pass's next batch, storing nothing), and an import whose data is already committed is
    done and cannot be cancelled (400)."""

    parser_classes = [JSONParser]

    @extend_schema(request=None, responses={200: JobSerializer})
    def post(self, request: Request, job_id: int) -> Response:
        job = managed_job(request, job_id)
        if not cancel_job(job):
            raise serializers.ValidationError({"status": [f"The job is {job.status} already."]})
        job.refresh_from_db()
        return Response(job_body(request, job))


class JobFile(APIView):
    """A finished job's result file, downloadable until the job is removed."""

    @extend_schema(
        responses={
            # Export and paper jobs write a zip; audit, score and import jobs a JSON report.
            (200, "application/zip"): OpenApiResponse(
                OpenApiTypes.BINARY,
                description="The result file: a zip for an export or paper job, a JSON report "
                "for an audit, score or import job.",
            ),
            (200, "application/json"): OpenApiTypes.OBJECT,
        }
    )
    def get(self, request: Request, job_id: int) -> HttpResponseBase:
        job = managed_job(request, job_id)
        path = Path(job.result_file)
        if job.status != Job.Status.DONE or not path.is_file():
            raise Http404("This job has no result file.")
        return FileResponse(path.open("rb"), as_attachment=True, filename=path.name)
