"""Reward-model runs of a campaign: accuracy on validated vs excluded vs all pairs."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from prb_annotate.access import managed_campaign_or_404
from prb_annotate.audit.model_answers import ANNOTATOR_MODE, annotator_runs
from prb_annotate.campaigns.evaluating import accuracy_rows


def campaign_evaluations(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    # Model-annotator runs have answers, not accuracies: they are listed apart.
    reward_runs = campaign.evaluation_runs.exclude(mode=ANNOTATOR_MODE)
    runs = [(run, accuracy_rows(run)) for run in reward_runs]
    context = {"campaign": campaign, "runs": runs, "annotator_runs": annotator_runs(campaign)}
    return render(request, "prb_annotate/evaluations.html", context)


urlpatterns = [
    path("<row_id:campaign_id>/evaluations/", campaign_evaluations, name="campaign_evaluations"),
]
