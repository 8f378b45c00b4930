"""What the audit reads of model annotators: their runs and their answers beside the humans'.

A model annotator's answers are ``ModelAnswer`` rows of an ``EvaluationRun`` with mode
``annotator`` (written by ``campaigns/model_annotator.py``); no human statistic reads them.
This module reads them for the audit's own section and compares them with the annotations the
verdicts rest on (``model_agreement``, pure).
"""

from typing import Any

import pandas as pd

from prb_annotate.audit import model_agreement, ppi
from prb_annotate.models import Campaign, CampaignItem, EvaluationRun, Pair

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
                "model": run.model_name,
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
    return {"run": run.pk, "model": run.model_name, "simulated": _simulated(run), **section}


def _simulated(run: EvaluationRun) -> bool:
    return bool(run.settings.get("simulated"))
