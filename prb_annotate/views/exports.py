"""Export page for a campaign's managers: pick a subset and a format, download a zip."""

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponseBase
from django.shortcuts import render
from django.urls import path

from prb_annotate.exports.archive import chosen_export_zip, refusal_status
from prb_annotate.exports.slices import ExportError
from prb_annotate.security.access import managed_campaign_or_404
from prb_annotate.web.forms import ExportForm


@login_required
def campaign_export(request: HttpRequest, campaign_id: int) -> HttpResponseBase:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    # A GET form: the download is a read, so its link can be bookmarked or shared with a
    # colleague who manages the campaign too.
    form = ExportForm(request.GET if "subset" in request.GET else None)
    failure, status = "", 200
    if form.is_valid():
        try:
            archive, filename = chosen_export_zip(campaign, form.cleaned_data)
        except ExportError as error:
            failure, status = str(error), refusal_status(error)
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
