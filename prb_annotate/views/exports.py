"""Export page for a campaign's managers: pick a subset and a format, download a zip."""

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponseBase
from django.shortcuts import render
from django.urls import path

from prb_annotate.access import managed_campaign_or_404
from prb_annotate.exports.archive import export_zip
from prb_annotate.exports.export import ExportWriteError
from prb_annotate.exports.slices import ExportError


class ExportForm(forms.Form):
    subset = forms.ChoiceField(
        choices=[
            ("validated", "Validated pairs"),
            ("excluded", "Excluded pairs (failed or still undecided)"),
            ("all", "All pairs"),
        ],
        initial="validated",
    )
    format = forms.ChoiceField(
        choices=[("jsonl", "JSON Lines"), ("parquet", "Parquet"), ("csv", "CSV")],
        initial="jsonl",
    )
    with_validation = forms.BooleanField(
        required=False,
        initial=True,
        label="Add a validation object to each record",
        help_text="Number of annotations, majority answers, quality medians, verdict, reasons.",
    )


@login_required
def campaign_export(request: HttpRequest, campaign_id: int) -> HttpResponseBase:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    # A GET form: the download is a read, so its link can be bookmarked or shared with a
    # colleague who manages the campaign too.
    form = ExportForm(request.GET if "subset" in request.GET else None)
    failure, status = "", 200
    if form.is_valid():
        try:
            archive, filename = export_zip(
                campaign,
                subset=form.cleaned_data["subset"],
                fmt=form.cleaned_data["format"],
                with_validation=form.cleaned_data["with_validation"],
            )
        except ExportError as error:
            failure = str(error)
            status = 503 if isinstance(error, ExportWriteError) else 409
        else:
            return FileResponse(
                archive, as_attachment=True, filename=filename, content_type="application/zip"
            )
    # No verdict counts here: they take the whole audit, which the download runs anyway (and
    # the audit page shows them).
    context = {"campaign": campaign, "form": form, "failure": failure}
    return render(request, "prb_annotate/export.html", context, status=status)


urlpatterns = [
    path("<row_id:campaign_id>/export/", campaign_export, name="campaign_export"),
]
