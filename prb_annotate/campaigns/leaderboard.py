"""The leaderboard of a campaign's reward-model runs, from their stored pair scores.

The statistics are ``evaluation.compare``'s, the same as ``python -m evaluation compare``; they
need numpy and scipy, never torch, so the page and the API compute them in the web process.
``evaluation`` is imported inside the function that builds the leaderboard, so loading the URL
map still leaves it (and torch) unloaded.

Which runs: by default the newest run of each model over all the campaign's pairs
(``subset == "all"``), so that a re-run replaces the earlier one instead of being ranked
beside it; a caller may name runs instead (``--runs``, the page's selection). A removed run
(``run_names.remove_run``) is never ranked. Runs are called by their names
(``run_names.shown_name``: never a server path, random weights marked). Runs that scored
different pairs are compared on the pairs they share, and the leaderboard says how many each
left out. A pair's category is the pair's own; its subset (validated or excluded; undecided
counts as excluded) is the verdict stored with the newest of the compared runs, and the
leaderboard says when the runs stored different verdicts for some pairs.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prb_annotate.audit.model_answers import ANNOTATOR_MODE
from prb_annotate.campaigns.run_names import default_name, shown_name
from prb_annotate.models import Campaign, EvaluationRun, PairScore

if TYPE_CHECKING:
    from evaluation.compare import Leaderboard, PairLabel


class LeaderboardError(ValueError):
    """Runs asked for that the campaign does not have; ``field`` names the parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def reward_runs(campaign: Campaign) -> list[EvaluationRun]:
    """The campaign's reward-model runs not removed, newest first (model annotators are not
    ranked)."""
    return list(
        campaign.evaluation_runs.exclude(mode=ANNOTATOR_MODE)
        .filter(removed_at__isnull=True)
        .order_by("-created_at", "-pk")
    )


def chosen_runs(campaign: Campaign, run_ids: Sequence[int] | None) -> list[EvaluationRun]:
    """The runs to rank: ``run_ids`` (each must be one of the campaign's reward runs), or by
    default those over all of its pairs (every reward run when none is)."""
    runs = reward_runs(campaign)
    if run_ids:
        known = {run.pk: run for run in runs}
        unknown = [run_id for run_id in run_ids if run_id not in known]
        if unknown:
            raise LeaderboardError(
                "runs", f"not a reward-model run of this campaign: {', '.join(map(str, unknown))}"
            )
        return [known[run_id] for run_id in dict.fromkeys(run_ids)]
    over_all = [run for run in runs if run.subset == EvaluationRun.Subset.ALL] or runs
    newest: dict[str, EvaluationRun] = {}
    for run in over_all:  # newest first: the first of each model is its newest
        newest.setdefault(run.model_name, run)
    return list(newest.values())


def run_names(runs: Sequence[EvaluationRun]) -> dict[int, str]:
    """A name per run: its own (unique among the campaign's runs not removed), with "run N"
    should two chosen runs still share one."""
    names = [shown_name(run) for run in runs]
    return {
        run.pk: name if names.count(name) == 1 else f"{name} (run {run.pk})"
        for run, name in zip(runs, names, strict=True)
    }


def run_info(run: EvaluationRun) -> dict[str, Any]:
    """What the leaderboard says of a run; the model as its name gives it, never a path."""
    summary = run.summary or {}
    card = summary.get("card")
    if isinstance(card, dict) and isinstance(card.get("model"), str):
        card = {**card, "model": default_name(card["model"])}
    return {
        "run_id": run.pk,
        "model": default_name(run.model_name),
        "random_weights": run.random_weights,
        "mode": run.mode,
        "subset": run.subset,
        "created_at": run.created_at.isoformat(),
        "card": card,
        "self_check": summary.get("self_check"),
        # A judge's accuracy with unparsed replies read as "A", the benchmark's count.
        "accuracy_paper": summary.get("accuracy_paper"),
    }


@dataclass(frozen=True)
class StoredScores:
    """What the compared runs stored: outcome per run and pair, and each pair's label."""

    outcomes: dict[int, dict[str, str]]
    labels: dict[str, "PairLabel"]
    notes: list[str]


def stored_scores(runs: Sequence[EvaluationRun]) -> StoredScores:
    from evaluation.compare import PairLabel
    from evaluation.runs import subset_of

    newest = max(runs, key=lambda run: (run.created_at, run.pk)).pk
    outcomes: dict[int, dict[str, str]] = {run.pk: {} for run in runs}
    verdicts: dict[str, dict[int, str]] = {}
    categories: dict[str, str] = {}
    rows = PairScore.objects.filter(run__in=runs).values_list(
        "run_id", "pair__external_id", "pair__category", "outcome", "verdict"
    )
    for run_id, pair_id, category, outcome, verdict in rows.iterator(chunk_size=5000):
        outcomes[run_id][pair_id] = outcome
        verdicts.setdefault(pair_id, {})[run_id] = verdict
        categories[pair_id] = category
    shared = set.intersection(*(set(scored) for scored in outcomes.values()))
    notes = _coverage_notes(runs, outcomes, shared)
    labels = {}
    changed = 0
    for pair_id in sorted(shared):
        stored = verdicts[pair_id]
        changed += len({subset_of(value) for value in stored.values()}) > 1
        labels[pair_id] = PairLabel(categories[pair_id], subset_of(stored[newest]))
    if changed:
        notes.append(
            f"{changed} pair(s) have a different verdict in different runs (the audit changed "
            f"between them); the newest run's (#{newest}) are used"
        )
    return StoredScores(outcomes, labels, notes)


def _coverage_notes(
    runs: Sequence[EvaluationRun], outcomes: dict[int, dict[str, str]], shared: set[str]
) -> list[str]:
    lost = {run.pk: len(outcomes[run.pk]) - len(shared) for run in runs}
    if not any(lost.values()):
        return []
    per_run = ", ".join(f"#{run_id} {count}" for run_id, count in lost.items())
    return [
        f"compared on the {len(shared)} pairs every run scored; pairs left out per run: {per_run}"
    ]


def campaign_leaderboard(
    campaign: Campaign,
    *,
    policy: str = "left-out",
    run_ids: Sequence[int] | None = None,
) -> "Leaderboard":
    """The leaderboard of the campaign's runs (see the module docstring for which)."""
    from evaluation.compare import RunOutcomes, Settings, build_leaderboard

    runs = chosen_runs(campaign, run_ids)
    settings = Settings(policy=policy)  # type: ignore[arg-type]  # checked by the callers' forms
    if not runs:
        return build_leaderboard([], {}, settings, notes=["no reward model has been scored yet"])
    stored = stored_scores(runs)
    names = run_names(runs)
    compared = [RunOutcomes(names[run.pk], stored.outcomes[run.pk], run_info(run)) for run in runs]
    return build_leaderboard(compared, stored.labels, settings, notes=stored.notes)
