"""Reward-model runs of a campaign: the leaderboard (which model is better, on all, validated
and excluded pairs and per category, with paired tests), then each run's card, where a run is
renamed or removed (kept as history, and put back from there)."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.audit.model_answers import annotator_runs
from prb_annotate.campaigns.evaluating import accuracy_rows, run_notes
from prb_annotate.campaigns.leaderboard import campaign_leaderboard, reward_runs
from prb_annotate.campaigns.run_names import RunNameError, remove_run, rename_run, restore_run
from prb_annotate.models import Campaign, EvaluationRun
from prb_annotate.security.access import managed_campaign_or_404
from prb_annotate.views.jobs import model_choices
from prb_annotate.web.forms import LeaderboardForm

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
        "paper_url": reverse("campaign_audit_paper", args=[campaign.pk])
        + ("?" + urlencode([("run", run_id) for run_id in run_ids]) if run_ids else ""),
        "removed_runs": campaign.evaluation_runs.filter(removed_at__isnull=False).order_by(
            "-removed_at"
        ),
        # Model-annotator runs have answers, not accuracies: they are listed apart.
        "runs": [(run, accuracy_rows(run), run_notes(run, verdicts)) for run in runs],
        "annotator_runs": annotator_runs(campaign),
        "model_choices": model_choices(),
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


def _run_of(request: HttpRequest, campaign_id: int, run_id: int) -> tuple[Campaign, EvaluationRun]:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    return campaign, get_object_or_404(EvaluationRun, pk=run_id, campaign=campaign)


def _back(campaign: Campaign, run: EvaluationRun) -> HttpResponse:
    return redirect(reverse("campaign_evaluations", args=[campaign.pk]) + f"#run-{run.pk}")


@require_POST
@login_required
def run_rename(request: HttpRequest, campaign_id: int, run_id: int) -> HttpResponse:
    campaign, run = _run_of(request, campaign_id, run_id)
    try:
        run = rename_run(run, request.POST.get("name", ""))
    except RunNameError as error:
        messages.error(
            request,
            _("Run %(run_pk)s keeps its name: %(error)s.") % {"run_pk": run.pk, "error": error},
        )
    else:
        messages.success(
            request,
            _("Run %(run_pk)s is now named %(run_name)s.")
            % {"run_pk": run.pk, "run_name": repr(run.name)},
        )
    return _back(campaign, run)


@require_POST
@login_required
def run_remove(request: HttpRequest, campaign_id: int, run_id: int) -> HttpResponse:
    campaign, run = _run_of(request, campaign_id, run_id)
    remove_run(run)
    messages.success(
        request,
        _(
            "Run %(run_pk)s (%(run_name)s) is removed from the leaderboard and the paper; it is "
            "kept under Removed runs."
        )
        % {"run_pk": run.pk, "run_name": run.name},
    )
    return _back(campaign, run)


@require_POST
@login_required
def run_restore(request: HttpRequest, campaign_id: int, run_id: int) -> HttpResponse:
    campaign, run = _run_of(request, campaign_id, run_id)
    try:
        restore_run(run)
    except RunNameError as error:
        messages.error(
            request,
            _("Run %(run_pk)s stays removed: %(error)s.") % {"run_pk": run.pk, "error": error},
        )
    else:
        messages.success(
            request,
            _("Run %(run_pk)s (%(run_name)s) is back.") % {"run_pk": run.pk, "run_name": run.name},
        )
    return _back(campaign, run)


urlpatterns = [
    path("<row_id:campaign_id>/evaluations/", campaign_evaluations, name="campaign_evaluations"),
    path(
        "<row_id:campaign_id>/evaluations/runs/<row_id:run_id>/name/",
        run_rename,
        name="evaluation_run_rename",
    ),
    path(
        "<row_id:campaign_id>/evaluations/runs/<row_id:run_id>/remove/",
        run_remove,
        name="evaluation_run_remove",
    ),
    path(
        "<row_id:campaign_id>/evaluations/runs/<row_id:run_id>/restore/",
        run_restore,
        name="evaluation_run_restore",
    ),
]
