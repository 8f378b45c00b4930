"""Each annotator's standing: gold accuracy, the annotator table and Dawid-Skene accuracy.

Pure functions over the annotations frame; ``quality`` turns these figures into marks and
exclusions.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

import numpy as np
import pandas as pd

from prb_annotate.audit import agreement, dawid_skene
from prb_annotate.audit.questions import NOMINAL_QUESTIONS, question_domain, ratings_matrix
from prb_annotate.audit.rule import PairVerdict, Thresholds, counted_annotations
from prb_annotate.audit.summaries import position_bias


def gold_results(frame: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Per annotator: gold items answered, answered correctly, and the share.

    An answer to a gold item is correct when every expected answer in ``gold_answers`` matches
    the annotation's column of that name (e.g. ``{"rubric_fit": "chosen"}``); keys that are not
    columns of the frame are ignored.
    """
    gold = items[(items["item_kind"] == "gold") & items["gold_answers"].notna()]
    expected = dict(zip(gold["pair_id"], gold["gold_answers"], strict=True))
    rows = frame[frame["pair_id"].isin(list(expected))]
    correct = [
        all(
            key not in rows.columns or row[key] == value
            for key, value in (expected[row["pair_id"]] or {}).items()
        )
        for _, row in rows.iterrows()
    ]
    table = pd.DataFrame({"annotator": rows["annotator"].to_numpy(), "correct": correct})
    grouped = table.groupby("annotator")["correct"].agg(["size", "sum"])
    result = pd.DataFrame(
        {"gold_answered": grouped["size"].astype(int), "gold_correct": grouped["sum"].astype(int)}
    )
    result["gold_accuracy"] = result["gold_correct"] / result["gold_answered"]
    return result


def annotators_below_gold(
    frame: pd.DataFrame, items: pd.DataFrame, min_gold_accuracy: float | None
) -> set[str]:
    """Annotators whose gold accuracy is below the minimum (those with no gold answer stay)."""
    if min_gold_accuracy is None:
        return set()
    results = gold_results(frame, items)
    return set(results.index[results["gold_accuracy"] < min_gold_accuracy])


def annotator_table(
    frame: pd.DataFrame,
    items: pd.DataFrame,
    thresholds: Thresholds,
    excluded: Collection[str],
    flags: pd.DataFrame,
) -> list[dict[str, Any]]:
    """One row per annotator, over their answers to regular items (all annotators, excluded too).

    Leave-one-out agreement: share of answers matching the unique majority of the *other*
    annotators of the pair. Kappa: Cohen's kappa against each co-annotator (rubric fit and
    differentiator, unweighted). Position bias: share of "A" among non-tie rubric-fit answers.
    """
    rows = counted_annotations(frame, items)
    annotators = pd.Index(sorted(frame["annotator"].unique()))
    units = pd.Index(sorted(rows["pair_id"].unique()))
    gold = gold_results(frame, items)
    nominal = NOMINAL_QUESTIONS
    loo: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    kappas: dict[str, agreement.PairwiseKappa] = {}
    for question in nominal:
        matrix = ratings_matrix(rows, question, annotators, units)
        loo[question.name] = agreement.leave_one_out_agreement(matrix, question_domain(question))
        kappas[question.name] = agreement.pairwise_cohen_kappa(matrix, question_domain(question))
    flag_counts = flags.groupby("annotator").size() if len(flags) else pd.Series(dtype=int)

    table = []
    for index, name in enumerate(annotators):
        own = rows[rows["annotator"] == name]
        entry: dict[str, Any] = {
            "annotator": name,
            "annotations": len(own),
            "excluded": name in excluded,
        }
        gold_row = gold.loc[name] if name in gold.index else None
        entry["gold_answered"] = int(gold_row["gold_answered"]) if gold_row is not None else 0
        entry["gold_correct"] = int(gold_row["gold_correct"]) if gold_row is not None else 0
        entry["gold_accuracy"] = float(gold_row["gold_accuracy"]) if gold_row is not None else None
        for question in nominal:
            share, counted = loo[question.name]
            entry[f"loo_{question.name}"] = _finite(share[index])
            entry[f"loo_{question.name}_units"] = int(counted[index])
            row = kappas[question.name].kappa[index]
            common = kappas[question.name].common_units[index]
            per_peer = {
                annotators[peer]: _finite(row[peer])
                for peer in range(len(annotators))
                if peer != index and common[peer] > 0
            }
            entry[f"kappa_{question.name}"] = per_peer
            finite = [value for value in per_peer.values() if value is not None]
            entry[f"mean_kappa_{question.name}"] = float(np.mean(finite)) if finite else None
        bias = position_bias(own)
        entry["share_a"] = bias["share_a"]["share"]
        entry["ab_answers"] = bias["share_a"]["total"]
        entry["position_p_value"] = _finite(bias["p_value"])
        entry["chose_chosen"] = float((own["rubric_fit"] == "chosen").mean()) if len(own) else None
        times = pd.to_numeric(own["time_on_task_ms"], errors="coerce").dropna()
        entry["median_time_ms"] = float(times.median()) if len(times) else None
        entry["consistency_flags"] = int(flag_counts.get(name, 0))
        table.append(entry)
    return table


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


# --------------------------------------------------------------------------------------------
# Dawid-Skene


def dawid_skene_summary(counted: pd.DataFrame, verdicts: Mapping[int, PairVerdict]) -> dict:
    """Dawid-Skene labels for the two choices, compared with the verdicts' majority (a pair
    without one differs from any label)."""
    annotators = pd.Index(sorted(counted["annotator"].unique()))
    units = pd.Index(sorted(counted["pair_id"].unique()))
    summary: dict[str, Any] = {}
    for question in NOMINAL_QUESTIONS:
        matrix = ratings_matrix(counted, question, annotators, units)
        if not len(units):
            summary[question.name] = {"differs_from_majority": [], "annotator_accuracy": {}}
            continue
        model = dawid_skene.dawid_skene(matrix, len(question.domain))
        labels = [question.domain[code] for code in model.labels()]
        differs = [
            {
                "pair_id": int(pair_id),
                "external_id": verdicts[pair_id].external_id,
                "majority": verdicts[pair_id].majority.get(question.name),
                "dawid_skene": label,
                "posterior": float(model.posterior[index].max()),
            }
            for index, (pair_id, label) in enumerate(zip(units, labels, strict=True))
            if pair_id in verdicts and verdicts[pair_id].majority.get(question.name) != label
        ]
        summary[question.name] = {
            "iterations": model.iterations,
            "converged": model.converged,
            "priors": dict(zip(question.domain, map(float, model.priors), strict=True)),
            "annotator_accuracy": dict(
                zip(annotators, map(float, model.annotator_accuracy()), strict=True)
            ),
            "differs_from_majority": differs,
        }
    return summary
