"""What the audit reads of model annotators: their runs and their answers beside the humans'.

A model annotator's answers are ``ModelAnswer`` rows of an ``EvaluationRun`` with mode
``annotator`` (written by ``campaigns/model_annotator.py``); no human statistic reads them.
This module reads them for the audit's own section and compares them with the annotations the
verdicts rest on (``model_agreement``, pure).
"""

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Count, Q

from prb_annotate.audit import active_sample, model_agreement, ppi, ppi_designs
from prb_annotate.models import (
    Campaign,
    CampaignItem,
    Dataset,
    EvaluationRun,
    ModelAnswer,
    Pair,
)

ANNOTATOR_MODE = "annotator"


def annotator_runs(campaign: Campaign) -> list[EvaluationRun]:
    return list(campaign.evaluation_runs.filter(mode=ANNOTATOR_MODE).order_by("-created_at"))


def comparisons(campaign: Campaign, humans: pd.DataFrame, threshold: float) -> list[dict[str, Any]]:
    """For each model-annotator run: the run, its reply counts and the comparison per question.

    ``humans`` is the frame of the annotations the verdicts rest on.
    """
    found = []
    for run in annotator_runs(campaign):
        rows = run.model_answers.values_list("pair_id", "question", "chosen_position", "answer")
        answers = model_agreement.answers_frame(list(rows))
        found.append(
            {
                "run": run.pk,
                "model": run.name or run.model_name,
                "created_at": run.created_at.isoformat(),
                "replies": run.summary.get("questions", {}),
                "questions": model_agreement.compare(humans, answers, threshold),
            }
        )
    return found


def ppi_for_campaign(campaign: Campaign, verdict_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The prediction-powered estimate (``ppi``) from the newest model-annotator run and the
    planned sample's verdicts; the run's pairs count only where they belong to the plan's
    population (gold, practice and qualification pairs are set apart, as the plan sets them)."""
    run = annotator_runs(campaign)[0]
    set_apart = set(
        campaign.items.filter(kind=CampaignItem.Kind.GOLD).values_list("pair_id", flat=True)
    )
    set_apart |= set(campaign.qualification_items.values_list("pair_id", flat=True))
    rows = run.model_answers.values_list("pair_id", "question", "chosen_position", "answer")
    verdicts = ppi.model_verdicts(model_agreement.answers_frame(list(rows)))
    categories = dict(Pair.objects.filter(pk__in=verdicts).values_list("pk", "category"))
    model = {
        pair: (categories[pair], verdict)
        for pair, verdict in verdicts.items()
        if pair not in set_apart
    }
    section = ppi.audit_section(campaign.sample_plan or {}, verdict_rows, model)
    # The run's name (never a server path; runs older than names have none).
    name = run.name or run.model_name
    found = {"run": run.pk, "model": name, "simulated": _simulated(run), **section}
    if section["covers_sample"]:
        found["recalibrated"] = _recalibrated(campaign, run, categories, set_apart, verdict_rows)
    return found


def _recalibrated(
    campaign: Campaign,
    run: EvaluationRun,
    categories: dict[int, str],
    set_apart: set[int],
    verdict_rows: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """The estimate on the model's probabilities (``ppi_designs``), where the run kept one for
    every answer it gave; None for a run that kept none (hard verdicts only)."""
    rows = run.model_answers.values_list("pair_id", "question", "chosen_position", "probability")
    probabilities = ppi_designs.pair_probabilities(rows)
    if not probabilities:
        return None
    model = {
        pair: (categories[pair], value)
        for pair, value in probabilities.items()
        if pair not in set_apart and pair in categories
    }
    return ppi_designs.audit_section(campaign.sample_plan or {}, verdict_rows, model)


def run_probabilities(run_id: int) -> dict[int, float]:
    """pair id -> the run's probability that the pair is validated
    (``ppi_designs.pair_probabilities``); empty for a run that kept none."""
    rows = ModelAnswer.objects.filter(run_id=run_id)
    return ppi_designs.pair_probabilities(
        rows.values_list("pair_id", "question", "chosen_position", "probability")
    )


# Probabilities a pair needs for ``pair_probabilities``: two questions in two orders.
ANSWERS_PER_PAIR = 4


def covering_run(
    dataset: Dataset, pairs: Collection[int]
) -> tuple[EvaluationRun, dict[int, float]] | None:
    """The newest model-annotator run, of any campaign over ``dataset`` and not removed, whose
    probabilities cover every one of ``pairs``, with its probabilities; None when no run does.
    Runs with too few probabilities to cover them are not read."""
    candidates = (
        EvaluationRun.objects.filter(
            mode=ANNOTATOR_MODE, campaign__dataset=dataset, removed_at__isnull=True
        )
        .annotate(kept=Count("model_answers", filter=Q(model_answers__probability__isnull=False)))
        .filter(kept__gte=ANSWERS_PER_PAIR * len(pairs))
        .order_by("-created_at", "-pk")
    )
    for run in candidates:
        probabilities = run_probabilities(run.pk)
        if all(pair in probabilities for pair in pairs):
            return run, probabilities
    return None


def run_name(run: EvaluationRun) -> str:
    """The run's name (never a server path; runs older than names have none)."""
    return run.name or run.model_name


def design_population(campaign: Campaign) -> dict[str, list[tuple[int, str]]]:
    """The plan's population by category: (pair id, record id) in record-id order (sorted here,
    in Python, as the draw sorted them, whatever the database's collation), without the pairs
    set apart (gold, practice and qualification)."""
    set_apart = set(
        campaign.items.filter(kind=CampaignItem.Kind.GOLD).values_list("pair_id", flat=True)
    )
    set_apart |= set(campaign.qualification_items.values_list("pair_id", flat=True))
    found: dict[str, list[tuple[int, str]]] = {}
    for pk, external_id, category in campaign.dataset.pairs.values_list(
        "pk", "external_id", "category"
    ):
        if pk not in set_apart:
            found.setdefault(category, []).append((pk, external_id))
    return {c: sorted(rows, key=lambda row: row[1]) for c, rows in found.items()}


def active_estimate(campaign: Campaign, verdict_rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The estimate of an actively drawn sample (``active_sample.audit_estimate``): the model's
    probabilities from the run the sample was drawn with, over the plan's population, and the
    inclusion probability recorded with each drawn item."""
    plan = campaign.sample_plan or {}
    run_id = int(plan["design"]["run"])
    probabilities = run_probabilities(run_id)
    populations = {}
    for category, rows in design_population(campaign).items():
        covered = [pk for pk, _ in rows if pk in probabilities]
        populations[category] = active_sample.Population(
            covered, np.array([probabilities[pk] for pk in covered], dtype=float)
        )
    items = campaign.items.filter(
        kind=CampaignItem.Kind.REGULAR, inclusion_probability__isnull=False
    ).values_list("pair_id", "inclusion_probability")
    drawn = {pair: float(pi) for pair, pi in items if pi is not None}
    return active_sample.audit_estimate(plan, populations, drawn, verdict_rows)


def _simulated(run: EvaluationRun) -> bool:
    return bool(run.settings.get("simulated"))
