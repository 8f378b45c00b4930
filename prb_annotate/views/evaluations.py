"""Reward-model runs of a campaign: accuracy on validated vs excluded vs all pairs."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from prb_annotate.access import managed_campaign_or_404
from prb_annotate.campaigns.evaluating import accuracy_rows


def campaign_evaluations(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    runs = [(run, accuracy_rows(run)) for run in campaign.evaluation_runs.all()]
    return render(request, "prb_annotate/evaluations.html", {"campaign": campaign, "runs": runs})


urlpatterns = [
    path("<row_id:campaign_id>/evaluations/", campaign_evaluations, name="campaign_evaluations"),
]
