"""Reward-model runs of a campaign: the leaderboard (which model is better, on all, validated
and excluded pairs and per category, with paired tests), then each run's card."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path, reverse

from prb_annotate.access import managed_campaign_or_404
from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.audit.model_answers import annotator_runs
from prb_annotate.campaigns.evaluating import accuracy_rows, run_notes
from prb_annotate.campaigns.leaderboard import campaign_leaderboard, reward_runs
from prb_annotate.forms import LeaderboardForm

if TYPE_CHECKING:  # evaluation is imported only when a leaderboard is built
    from evaluation.compare import SubsetBoard


def campaign_evaluations(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    runs = reward_runs(campaign)
    form = LeaderboardForm(request.GET or None, runs=runs)
    chosen = form.cleaned_data if form.is_valid() else {}
    policy = chosen.get("policy") or "left-out"
    run_ids = chosen.get("run") or []
    board = campaign_leaderboard(campaign, policy=policy, run_ids=run_ids)
    current = board.subset(chosen.get("subset") or "all") or board.subsets[0]
    shown = board.as_dict()
    verdicts = campaign_verdicts(campaign)
    context = {
        "campaign": campaign,
        "form": form,
        "board": shown,
        "current": next(item for item in shown["subsets"] if item["key"] == current.key),
        "tabs": subset_tabs(board.subsets, current.key, policy=policy, run_ids=run_ids),
        "api_url": api_url(campaign.pk, policy, run_ids),
        # Model-annotator runs have answers, not accuracies: they are listed apart.
        "runs": [(run, accuracy_rows(run), run_notes(run, verdicts)) for run in runs],
        "annotator_runs": annotator_runs(campaign),
    }
    return render(request, "prb_annotate/evaluations.html", context)


def api_url(campaign_id: int, policy: str, run_ids: list[int]) -> str:
    """The API's URL for the same leaderboard."""
    params = [("policy", policy)]
    if run_ids:
        params.append(("runs", ",".join(str(run_id) for run_id in run_ids)))
    return reverse("api_campaign_leaderboard", args=[campaign_id]) + "?" + urlencode(params)


def subset_tabs(
    subsets: "Sequence[SubsetBoard]", current: str, *, policy: str, run_ids: list[int]
) -> list[dict[str, Any]]:
    """One link per subset, keeping the runs and the policy chosen."""
    tabs = []
    for board in subsets:
        params = [("subset", board.key), ("policy", policy), *(("run", i) for i in run_ids)]
        tabs.append(
            {
                "key": board.key,
                "label": board.name,
                "kind": board.kind,
                "pairs": board.pairs,
                "href": "?" + urlencode(params),
                "current": board.key == current,
            }
        )
    return tabs


urlpatterns = [
    path("<row_id:campaign_id>/evaluations/", campaign_evaluations, name="campaign_evaluations"),
]
