"""An external campaign's answer files uploaded on its pages (the same all-or-nothing import
as ``import_annotations``, its problems listed with line and field), and the long table of
any campaign's answers as a CSV download."""

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse

from prb_annotate.campaigns.external.importing import import_upload
from prb_annotate.campaigns.external.mapping import MappingError
from prb_annotate.datasets.importing import MAX_LISTED_PROBLEMS, ImportFailed, Problem
from prb_annotate.exports.long_table import long_table_csv
from prb_annotate.jobs import imports
from prb_annotate.jobs.running import start_answers_import
from prb_annotate.security.access import managed_campaign_or_404
from prb_annotate.views.jobs import job_url
from prb_annotate.web.forms import AnswerUploadForm


@login_required
def campaign_answers_import(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = AnswerUploadForm(request.POST or None, request.FILES or None)
    problems: dict[str, Any] | None = None
    if request.method == "POST" and campaign.external and form.is_valid():
        upload, mapping_file = form.cleaned_data["file"], form.cleaned_data["mapping"]
        try:
            if imports.in_background(upload.size):  # a large file: a worker imports it
                job = start_answers_import(campaign, cast(User, request.user), upload, mapping_file)
                return redirect(job_url(job))
            report = import_upload(campaign, upload, mapping_file, cast(User, request.user))
        except MappingError as error:
            problems = {"listed": [Problem(mapping_file.name, None, None, str(error))], "total": 1}
        except ImportFailed as failed:
            problems = {"listed": failed.problems[:MAX_LISTED_PROBLEMS], "total": failed.total}
        else:
            messages.success(request, report.summary)
            return redirect(reverse("campaign_detail", args=[campaign.pk]))
    status = 400 if request.method == "POST" else 200
    context = {"campaign": campaign, "form": form, "problems": problems}
    return render(request, "prb_annotate/answers_import.html", context, status=status)


@login_required
def campaign_long_table(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    response = HttpResponse(long_table_csv(campaign), content_type="text/csv; charset=utf-8")
    filename = f"campaign-{campaign.pk}-long.csv"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


urlpatterns = [
    path(
        "<row_id:campaign_id>/answers/import/",
        campaign_answers_import,
        name="campaign_answers_import",
    ),
    path("<row_id:campaign_id>/export/long.csv", campaign_long_table, name="campaign_long_table"),
]
