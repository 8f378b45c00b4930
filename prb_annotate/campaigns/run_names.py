"""Reward-model runs' names, and removing a run from the pages without deleting it.

A run's name is what the leaderboard, the evaluations page and the paper call it. It is never
a server path: a model given as a folder is named by the folder's base name (``evaluate
--name`` chooses another), since a path names the user and the machine, which a paper under
double-blind review must not. Names are unique among a campaign's runs that are not removed:
a name asked for that is taken is refused; a default name that is taken gets a clear suffix,
"(run 2)", which cannot be read as a rank.

A removed run keeps its rows (``removed_at`` set): it leaves the leaderboard, the paper and the
run list, is listed as history, and can be put back.
"""

import json
from pathlib import Path, PurePath

from django.db import transaction
from django.utils import timezone

from prb_annotate.models import Campaign, EvaluationRun

MAX_NAME = 200
RANDOM_MARK = "random weights"


class RunNameError(ValueError):
    """A name that cannot be a run's; the message says why."""


def looks_like_path(model: str) -> bool:
    """A folder on this machine: absolute, relative to home or here, or one that exists."""
    return model.startswith(("/", "~", ".")) or "\\" in model or Path(model).exists()


def default_name(model: str) -> str:
    """The folder's base name for a local model; a hub id or a built-in as given."""
    if looks_like_path(model):
        return PurePath(model.replace("\\", "/").rstrip("/")).name or "model"
    return model


def check_name(name: str) -> str:
    """``name`` stripped, or :class:`RunNameError` saying why it cannot name a run."""
    name = " ".join(name.split())
    if not name:
        raise RunNameError("a run's name cannot be empty")
    if len(name) > MAX_NAME:
        raise RunNameError(f"a run's name has at most {MAX_NAME} characters, not {len(name)}")
    if name.startswith(("/", "~")) or "\\" in name:
        raise RunNameError(
            f"{name!r} looks like a path on the server; a run's name must not reveal one"
        )
    return name


def active_runs(campaign: Campaign) -> "list[EvaluationRun]":
    return list(campaign.evaluation_runs.filter(removed_at__isnull=True))


def _taken(campaign: Campaign, name: str, but: int | None = None) -> EvaluationRun | None:
    runs = campaign.evaluation_runs.filter(removed_at__isnull=True, name=name)
    return runs.exclude(pk=but).first() if but else runs.first()


def name_for_new_run(campaign: Campaign, model: str, asked: str | None) -> str:
    """The name a new run of ``model`` gets: ``asked`` (refused when taken), or the default,
    suffixed "(run N)" when taken."""
    if asked is not None:
        name = check_name(asked)
        clash = _taken(campaign, name)
        if clash is not None:
            raise RunNameError(
                f"campaign {campaign.pk} already has a run named {name!r} (run {clash.pk}); "
                "choose another name, or remove that run first"
            )
        return name
    wanted = check_name(default_name(model))[: MAX_NAME - 12]
    name, number = wanted, 1
    while _taken(campaign, name) is not None:
        number += 1
        name = f"{wanted} (run {number})"
    return name


def has_random_weights(model: str) -> bool:
    """A local model whose config says its weights are random (``python -m evaluation
    make-tiny-model`` writes ``prb_note``)."""
    config = Path(model).expanduser() / "config.json"
    try:
        found = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(found, dict) and "random weights" in str(found.get("prb_note", "")).lower()


def shown_name(run: EvaluationRun) -> str:
    """The run's name as the leaderboard and the paper print it, marked when its weights are
    random."""
    name = run.name or default_name(run.model_name)
    return f"{name} ({RANDOM_MARK})" if run.random_weights else name


@transaction.atomic
def rename_run(run: EvaluationRun, asked: str) -> EvaluationRun:
    name = check_name(asked)
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    clash = _taken(run.campaign, name, but=run.pk)
    if clash is not None:
        raise RunNameError(f"run {clash.pk} is already named {name!r}; choose another name")
    run.name = name
    run.save(update_fields=["name"])
    return run


def remove_run(run: EvaluationRun) -> None:
    """Out of the leaderboard, the paper and the list; its rows stay, as history."""
    EvaluationRun.objects.filter(pk=run.pk, removed_at__isnull=True).update(
        removed_at=timezone.now()
    )


@transaction.atomic
def restore_run(run: EvaluationRun) -> None:
    """Back in the list; refused while another run has taken its name."""
    run = EvaluationRun.objects.select_for_update().get(pk=run.pk)
    clash = _taken(run.campaign, run.name, but=run.pk)
    if clash is not None:
        raise RunNameError(
            f"run {clash.pk} is now named {run.name!r}: rename one of them before putting "
            f"run {run.pk} back"
        )
    run.removed_at = None
    run.save(update_fields=["removed_at"])
