"""A model annotator beside the humans: how often it agrees with the human majority, and what
adding it as one more coder does to Krippendorff's alpha. Pure functions over frames.

The model's answer to a question about a pair is the one it gave in *both* A/B orders; a pair
where the two orders disagree (the model followed the position) or a reply was unparsed has no
model answer and is counted as such. The human side is the counted annotations the verdicts
rest on; the human majority is the answer given by more than ``majority_threshold`` of them,
as in the verdict rule. The human coefficients themselves are never computed with the model:
alpha "with the model" is reported beside them, for comparison only.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from prb_annotate.audit import agreement

QUESTIONS: dict[str, tuple[str, ...]] = {
    "rubric_fit": ("chosen", "rejected", "tie"),
    "differentiator": ("preference", "quality", "both", "none"),
}
LABELS = {"rubric_fit": "Rubric fit", "differentiator": "Main difference"}
MODEL_CODER = "\x00model"  # cannot collide with a username


def consistent_answers(answers: pd.DataFrame, question: str) -> pd.Series:
    """pair_id -> the model's answer when both orders were parsed and agree, else None.

    ``answers`` has columns pair_id, question, chosen_position, answer ("" when unparsed).
    """
    rows = answers[answers["question"] == question]
    result: dict[int, str | None] = {}
    for pair_id, group in rows.groupby("pair_id"):
        given = set(group["answer"])
        result[int(pair_id)] = (
            given.pop() if len(group) == 2 and len(given) == 1 and "" not in given else None
        )
    return pd.Series(result, dtype=object)


def human_majorities(humans: pd.DataFrame, question: str, threshold: float) -> pd.Series:
    """pair_id -> the answer more than ``threshold`` of the pair's annotators gave, else None."""
    result: dict[int, str | None] = {}
    for pair_id, values in humans.groupby("pair_id")[question]:
        counts = values.value_counts()
        top = counts.index[0]
        result[int(pair_id)] = str(top) if counts.iloc[0] / len(values) > threshold else None
    return pd.Series(result, dtype=object)


def _alpha(humans: pd.DataFrame, question: str, model: pd.Series | None) -> float | None:
    rows = humans[["pair_id", "annotator", question]].rename(columns={question: "value"})
    if model is not None:
        extra = model.dropna()
        rows = pd.concat(
            [
                rows,
                pd.DataFrame(
                    {"pair_id": extra.index, "annotator": MODEL_CODER, "value": extra.to_numpy()}
                ),
            ],
            ignore_index=True,
        )
    domain = QUESTIONS[question]
    coders = pd.Index(sorted(rows["annotator"].unique()))
    units = pd.Index(sorted(rows["pair_id"].unique()))
    matrix = np.full((len(coders), len(units)), np.nan)
    codes = pd.Categorical(rows["value"], categories=list(domain)).codes.astype(float)
    codes[codes < 0] = np.nan
    matrix[coders.get_indexer(rows["annotator"]), units.get_indexer(rows["pair_id"])] = codes
    value = agreement.krippendorff_alpha(matrix, "nominal", list(range(len(domain))))
    return None if np.isnan(value) else value


def compare_question(
    humans: pd.DataFrame, answers: pd.DataFrame, question: str, threshold: float
) -> dict[str, Any]:
    model = consistent_answers(answers, question)
    majority = human_majorities(humans, question, threshold)
    asked = int(answers.loc[answers["question"] == question, "pair_id"].nunique())
    both = [p for p in model.index if model[p] is not None and majority.get(p) is not None]
    agree = sum(model[p] == majority[p] for p in both)
    low, high = agreement.wilson_interval(agree, len(both)) if both else (None, None)
    return {
        "question": question,
        "label": LABELS[question],
        "pairs_asked": asked,
        "pairs_with_model_answer": int(model.notna().sum()),
        "pairs_without_model_answer": asked - int(model.notna().sum()),
        "pairs_compared": len(both),
        "agrees_with_majority": {
            "count": int(agree),
            "total": len(both),
            "share": agree / len(both) if both else None,
            "ci_low": low,
            "ci_high": high,
        },
        "alpha_humans": _alpha(humans, question, None),
        "alpha_with_model": _alpha(humans, question, model),
    }


def compare(humans: pd.DataFrame, answers: pd.DataFrame, threshold: float) -> list[dict[str, Any]]:
    """Every question: the model against the human majority, and alpha without / with it."""
    return [compare_question(humans, answers, question, threshold) for question in QUESTIONS]


def answers_frame(rows: Sequence[tuple[int, str, str, str]]) -> pd.DataFrame:
    """(pair_id, question, chosen_position, answer) rows as the frame ``compare`` takes."""
    return pd.DataFrame(rows, columns=["pair_id", "question", "chosen_position", "answer"])
