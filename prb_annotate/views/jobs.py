"""Background jobs from the pages: started from the export page, the audit page's paper link and
the evaluations page; each job's page shows its progress and log (reloading itself while the
job is at work), cancels it, downloads its result file and removes it."""

from pathlib import Path
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from prb_annotate.jobs.progress import ACTIVE, STOPPING_WORDS, still_stopping
from prb_annotate.jobs.running import (
    JobRefused,
    cancel_job,
    recover_stale_jobs,
    remove_job,
    start_job,
    worker_command,
)
from prb_annotate.jobs.scoring import SCORE_OPTIONS, builtin_models, model_roots
from prb_annotate.models import Campaign, Job
from prb_annotate.security.access import is_staff, managed_campaign_or_404, manager_action
from prb_annotate.web.status_words import status_word

# Seconds between reloads of a job's page while the job is queued or running.
RELOAD_S = 2


def model_choices() -> list[str]:
    """What the evaluations page offers to score: the baselines and the folders in the roots."""
    folders = [
        str(folder)
        for root in model_roots()
        if root.is_dir()
        for folder in sorted(root.iterdir())
        if folder.is_dir()
    ]
    return builtin_models() + folders


def options_from(request: HttpRequest, kind: str) -> dict[str, Any]:
    """A job's options from the page's form fields (the export form's names)."""
    post = request.POST
    if kind == "export":
        return {
            "subset": post.get("subset", "validated"),
            "fmt": post.get("format", "jsonl"),
            "with_validation": post.get("with_validation") in ("on", "true", "1"),
        }
    if kind == "score":
        return score_options_from(request)
    if kind == "audit":
        try:
            return {"resamples": int(post.get("resamples", "1000"))}
        except ValueError as error:
            raise ValueError("resamples must be a whole number.") from error
    return {}


def score_options_from(request: HttpRequest) -> dict[str, Any]:
    """A scoring job's options from the evaluations page's form: the fields left empty take the
    command's defaults; a Hub id typed in takes the place of the model chosen in the list."""
    options: dict[str, Any] = {}
    for name, option in SCORE_OPTIONS.items():
        text = request.POST.get(name, "").strip()
        if option.kind is bool:
            if text in ("on", "true", "1"):
                options[name] = True
        elif text:
            try:
                options[name] = option.kind(text)
            except ValueError as error:
                raise ValueError(f"{name} must be {option.kind.__name__}, not {text!r}.") from error
    hub_id = request.POST.get("hub_model", "").strip()
    if hub_id:
        options["model"] = hub_id
    return options


@manager_action
def job_start(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    kind = request.POST.get("kind", "")
    try:
        job = start_job(campaign, request.user, kind, options_from(request, kind))
    except (JobRefused, ValueError) as error:
        messages.error(request, str(error))
        return redirect("campaign_jobs", campaign_id=campaign.pk)
    return redirect("campaign_job", campaign_id=campaign.pk, job_id=job.pk)


@login_required
def campaign_jobs(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    recover_stale_jobs()
    context = {
        "campaign": campaign,
        "jobs": campaign.jobs.all()[:100],
        "worker_command": worker_command(),
    }
    return render(request, "prb_annotate/jobs.html", context)


def campaign_job_or_404(request: HttpRequest, campaign_id: int | None, job_id: int) -> Job:
    """A campaign's job for its managers; without a campaign, a dataset import's, for staff."""
    recover_stale_jobs()
    if campaign_id is None:
        if not is_staff(request.user):
            raise Http404("No such job.")
        job = Job.objects.filter(pk=job_id, campaign__isnull=True).first()
    else:
        job = managed_campaign_or_404(request.user, campaign_id).jobs.filter(pk=job_id).first()
    if job is None:
        raise Http404("No such job.")
    return job


def job_url(job: Job, name: str = "") -> str:
    """The job's page (``name``: one of its actions, ``cancel``, ``remove``, ``file``)."""
    if job.campaign_id is None:
        return reverse(f"dataset_job{'_' + name if name else ''}", args=[job.pk])
    return reverse(f"{'job_' + name if name else 'campaign_job'}", args=[job.campaign_id, job.pk])


@login_required
def campaign_job(request: HttpRequest, job_id: int, campaign_id: int | None = None) -> HttpResponse:
    job = campaign_job_or_404(request, campaign_id, job_id)
    stopping = still_stopping(job)
    active = job.status in ACTIVE or stopping
    context = {
        "stopping": stopping,
        "campaign": job.campaign,
        "job": job,
        "active": active,
        "reload_s": RELOAD_S if active else None,
        "file_name": Path(job.result_file).name if job.result_file else "",
        "urls": {name: job_url(job, name) for name in ("cancel", "remove", "file")},
    }
    return render(request, "prb_annotate/job.html", context)


@login_required
@require_POST
def job_cancel(request: HttpRequest, job_id: int, campaign_id: int | None = None) -> HttpResponse:
    job = campaign_job_or_404(request, campaign_id, job_id)
    if not cancel_job(job):
        messages.error(
            request,
            _("The job is %(job_status)s already.") % {"job_status": status_word(job.status)},
        )
    return redirect(job_url(job))


@login_required
@require_POST
def job_remove(request: HttpRequest, job_id: int, campaign_id: int | None = None) -> HttpResponse:
    job = campaign_job_or_404(request, campaign_id, job_id)
    if job.status in ACTIVE:
        messages.error(request, _("Cancel the job before removing it."))
        return redirect(job_url(job))
    if still_stopping(job):
        messages.error(request, STOPPING_WORDS)
        return redirect(job_url(job))
    remove_job(job)
    if campaign_id is None:
        return redirect("dataset_list")
    return redirect("campaign_jobs", campaign_id=campaign_id)


@login_required
def job_file(request: HttpRequest, job_id: int, campaign_id: int | None = None) -> FileResponse:
    job = campaign_job_or_404(request, campaign_id, job_id)
    result = Path(job.result_file)
    if job.status != Job.Status.DONE or not result.is_file():
        raise Http404("This job has no result file.")
    return FileResponse(result.open("rb"), as_attachment=True, filename=result.name)


urlpatterns = [
    path("<row_id:campaign_id>/jobs/", campaign_jobs, name="campaign_jobs"),
    path("<row_id:campaign_id>/jobs/start/", job_start, name="campaign_job_start"),
    path("<row_id:campaign_id>/jobs/<row_id:job_id>/", campaign_job, name="campaign_job"),
    path("<row_id:campaign_id>/jobs/<row_id:job_id>/cancel/", job_cancel, name="job_cancel"),
    path("<row_id:campaign_id>/jobs/<row_id:job_id>/remove/", job_remove, name="job_remove"),
    path("<row_id:campaign_id>/jobs/<row_id:job_id>/file/", job_file, name="job_file"),
]
