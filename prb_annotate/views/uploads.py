"""Importing a dataset from the datasets page: any import format (a record file, or a .zip of
a snapshot folder or an export), the same all-or-nothing import as ``import_pairs``, its
problems listed on the page with file, line and field, and then the way on: a link to create
a campaign on the dataset.

The page's script (``upload.js``) sends the file itself to show the upload's progress; it
asks for JSON (``Accept: application/json``) and gets where to go, or the page with the
problems, instead of a redirect.
"""

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse

from prb_annotate.access import staff_required
from prb_annotate.datasets.archives import import_uploaded_file
from prb_annotate.datasets.importing import MAX_LISTED_PROBLEMS, ImportFailed
from prb_annotate.forms import UploadForm
from prb_annotate.strictjson import STRICT


@staff_required
def dataset_upload(request: HttpRequest) -> HttpResponse:
    form = UploadForm(request.POST or None, request.FILES or None)
    problems: dict[str, Any] | None = None
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            report = import_uploaded_file(
                upload.file,
                upload.name or "",
                form.dataset_name(),
                update=form.cleaned_data["update"],
            )
        except ImportFailed as failed:
            problems = {
                "listed": failed.problems[:MAX_LISTED_PROBLEMS],
                "total": failed.total,
            }
        else:
            messages.success(request, f"Imported {upload.name}: {report.summary}.")
            target = reverse("dataset_detail", args=[report.dataset.pk])
            if _wants_json(request):
                return JsonResponse(
                    {"location": target, "summary": report.summary}, json_dumps_params=STRICT
                )
            return redirect(target)
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "problems": problems}
    return render(request, "prb_annotate/dataset_upload.html", context, status=status)


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


urlpatterns = [
    path("upload/", dataset_upload, name="dataset_upload"),
]
