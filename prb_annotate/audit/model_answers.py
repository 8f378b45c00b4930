"""What the audit reads of model annotators: their runs and their answers beside the humans'.

A model annotator's answers are ``ModelAnswer`` rows of an ``EvaluationRun`` with mode
``annotator`` (written by ``campaigns/model_annotator.py``); no human statistic reads them.
This module reads them for the audit's own section and compares them with the annotations the
verdicts rest on (``model_agreement``, pure).
"""

from typing import Any

import pandas as pd

from prb_annotate.audit import model_agreement
from prb_annotate.models import Campaign, EvaluationRun

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
