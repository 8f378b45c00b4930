"""Importing a dataset from the datasets page: any import format (a record file, or a .zip of
a snapshot folder or an export), the same all-or-nothing import as ``import_pairs``, its
problems listed on the page with file, line and field, and then the way on: a link to create
a campaign on the dataset. With *preview* ticked, the first rows are shown as they would be
imported under the column mapping, and nothing is written.

The page's script (``upload.js``) sends the file itself to show the upload's progress; it
asks for JSON (``Accept: application/json``) and gets where to go, or the page with the
problems, instead of a redirect.
"""

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.translation import gettext as _

from prb_annotate.datasets.archives import import_uploaded_file
from prb_annotate.datasets.importing import MAX_LISTED_PROBLEMS, ImportFailed
from prb_annotate.datasets.preview import Preview, preview_upload
from prb_annotate.formats.strictjson import STRICT
from prb_annotate.jobs import imports
from prb_annotate.jobs.running import start_dataset_import
from prb_annotate.security.access import staff_required
from prb_annotate.views.jobs import job_url
from prb_annotate.web.forms import UploadForm


@staff_required
def dataset_upload(request: HttpRequest) -> HttpResponse:
    form = UploadForm(request.POST or None, request.FILES or None)
    problems: dict[str, Any] | None = None
    preview: Preview | None = None
    if request.method == "POST" and form.is_valid() and form.cleaned_data["preview"]:
        upload = form.cleaned_data["file"]
        preview = preview_upload(upload.file, upload.name or "", form.cleaned_data["mapping"])
        shown = {"form": form, "problems": None, "preview": preview}
        return render(request, "prb_annotate/dataset_upload.html", shown)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        if imports.in_background(upload.size):  # a large file: a worker imports it
            return import_in_background(request, form)
        try:
            report = import_uploaded_file(
                upload.file,
                upload.name or "",
                form.dataset_name(),
                update=form.cleaned_data["update"],
                mapping=form.cleaned_data["mapping"],
            )
        except ImportFailed as failed:
            problems = {
                "listed": failed.problems[:MAX_LISTED_PROBLEMS],
                "total": failed.total,
            }
        else:
            messages.success(
                request,
                _("Imported %(upload_name)s: %(report_summary)s.")
                % {"upload_name": upload.name, "report_summary": report.summary},
            )
            target = reverse("dataset_detail", args=[report.dataset.pk])
            if _wants_json(request):
                return JsonResponse(
                    {"location": target, "summary": report.summary}, json_dumps_params=STRICT
                )
            return redirect(target)
    status = 400 if request.method == "POST" else 200
    context: dict[str, Any] = {"form": form, "problems": problems}
    return render(request, "prb_annotate/dataset_upload.html", context, status=status)


def import_in_background(request: HttpRequest, form: UploadForm) -> HttpResponse:
    """The upload kept and imported by a worker; its job's page shows the progress."""
    upload = form.cleaned_data["file"]
    job = start_dataset_import(
        request.user,
        upload,
        form.dataset_name(),
        update=form.cleaned_data["update"],
        mapping=form.data.get("mapping") or "",
    )
    summary = _("%(file)s is imported in the background (job %(job)d).") % {
        "file": upload.name,
        "job": job.pk,
    }
    messages.success(request, summary)
    if _wants_json(request):
        return JsonResponse(
            {"location": job_url(job), "summary": summary}, json_dumps_params=STRICT
        )
    return redirect(job_url(job))


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


urlpatterns = [
    path("upload/", dataset_upload, name="dataset_upload"),
]
