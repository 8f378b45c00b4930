"""The figures of a benchmark's human-evaluation tables: the humans' agreement with the
dataset's label per category (the audit's own, read from its report), what separates the
answers, mean ratings of the chosen against the rejected answer, kappa, and a pseudonymised
annotator table.

Read from the counted answers (regular pairs, annotators not left out), the same answers the
audit reads; each share carries its interval and ``method`` like the audit's, each mean its t
interval, so that the tables and the paragraph word them alike.
"""

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from django.contrib.auth.models import User
from scipy import stats

from prb_annotate.audit.frames import annotations_frame, items_frame, thresholds_for
from prb_annotate.audit.questions import agreement_by_question
from prb_annotate.audit.rule import counted_annotations
from prb_annotate.audit.summaries import share_with_interval
from prb_annotate.exports.pseudonyms import pseudonym
from prb_annotate.models import Annotation, Campaign

T_MEAN = "t_mean"
# How many characters of the exports' pseudonym the annotator table prints.
PSEUDONYM_CHARACTERS = 8


def human_figures(campaign: Campaign, audit: Mapping[str, Any]) -> dict[str, Any]:
    confidence = float(audit["settings"]["confidence"])
    items = items_frame(campaign, lengths=False)
    frame = counted_annotations(
        annotations_frame(campaign, items), items, audit.get("excluded_annotators", [])
    )
    criteria = list(audit["settings"]["thresholds"]["quality_criteria"])
    return {
        "label_agreement": label_agreement(audit),
        "differentiator": differentiator_shares(frame, confidence),
        "ratings": mean_ratings(frame, criteria, confidence),
        "annotators": annotator_rows(campaign, audit, confidence),
        "kappa": kappa_rows(audit),
        "category_agreement": category_agreement(campaign, frame, audit),
    }


# The questions the per-category agreement table shows: the two choices the verdict rests on.
KEY_QUESTIONS = ("rubric_fit", "differentiator")


def category_agreement(
    campaign: Campaign, frame: pd.DataFrame, audit: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Agreement on the key questions within each category, computed as the audit computes it
    (same coefficients, resamples, seed and interval method) on that category's answers."""
    settings = audit["settings"]
    thresholds = thresholds_for(campaign)
    rows = []
    for category, answers in frame.groupby("category", sort=True):
        found = agreement_by_question(
            answers,
            thresholds,
            resamples=int(settings["resamples"]),
            seed=settings["seed"],
            confidence=float(settings["confidence"]),
        )
        rows += [
            {
                "category": category,
                "question": question["question"],
                "label": question["label"],
                "kind": question["kind"],
                "units": question["units"],
                "units_rated_twice": question["units_rated_twice"],
                "coefficients": question["coefficients"],
            }
            for question in found
            if question["question"] in KEY_QUESTIONS
        ]
    return rows


def kappa_rows(audit: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per question, Cohen's kappa between each two annotators: mean, range, the number of
    annotator pairs and the weights it was computed with (``pairwise_weights``: identity,
    unweighted, for the choices; quadratic for the ratings). Fleiss' kappa is the audit's,
    read there."""
    rows = []
    for question in audit["agreement"]:
        kappas = [
            float(row["kappa"])
            for row in question.get("pairwise_kappa", [])
            if row.get("kappa") is not None and np.isfinite(float(row["kappa"]))
        ]
        rows.append(
            {
                "question": question["question"],
                "label": question["label"],
                "kind": question["kind"],
                "units": question["units"],
                "weights": question["pairwise_weights"],
                "pairwise": {
                    "mean": float(np.mean(kappas)) if kappas else None,
                    "min": min(kappas) if kappas else None,
                    "max": max(kappas) if kappas else None,
                    "pairs": len(kappas),
                },
            }
        )
    return rows


def label_agreement(audit: Mapping[str, Any]) -> dict[str, Any]:
    """Pairs whose majority prefers the dataset's chosen answer, overall and per category: the
    audit's own figures (``summaries.majority_chosen``: a share of the answers above the
    campaign's ``majority_threshold``, over the pairs with such a majority), with that
    threshold, so that the page and the paper count the same pairs."""
    found = audit["validity"]["label_agreement"]
    return {
        "overall": found["pairs_majority_chosen"],
        "per_category": found["per_category"],
        "majority_threshold": audit["settings"]["thresholds"]["majority_threshold"],
    }


def differentiator_shares(frame: pd.DataFrame, confidence: float) -> list[dict[str, Any]]:
    """Each answer to "what mainly separates the two", as a share of the answers."""
    counts = frame["differentiator"].value_counts()
    total = int(counts.sum())
    return [
        {
            "answer": str(value),
            "label": str(label),
            **share_with_interval(int(counts.get(value, 0)), total, confidence),
        }
        for value, label in Annotation.Differentiator.choices
    ]


def mean_of(values: pd.Series, confidence: float) -> dict[str, Any]:
    """A mean with its Student's t interval (``method`` ``t_mean``); none below two values."""
    found = values.dropna().astype(float).to_numpy()
    n = len(found)
    mean = float(found.mean()) if n else None
    low = high = None
    if n >= 2:
        spread = float(found.std(ddof=1)) / math.sqrt(n)
        half = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * spread
        low, high = mean - half, mean + half  # type: ignore[operator]
    return {"value": mean, "ci_low": low, "ci_high": high, "n": n, "method": T_MEAN}


def mean_ratings(
    frame: pd.DataFrame, criteria: list[str], confidence: float
) -> list[dict[str, Any]]:
    """Per criterion, the mean rating of the chosen and of the rejected answer, and their
    difference within each answer."""
    rows = []
    for criterion in criteria:
        chosen = frame.get(f"quality_chosen_{criterion}", pd.Series(dtype=float))
        rejected = frame.get(f"quality_rejected_{criterion}", pd.Series(dtype=float))
        rows.append(
            {
                "criterion": criterion,
                "chosen": mean_of(chosen, confidence),
                "rejected": mean_of(rejected, confidence),
                "difference": mean_of(chosen - rejected, confidence),
            }
        )
    return rows


def annotator_rows(
    campaign: Campaign, audit: Mapping[str, Any], confidence: float
) -> list[dict[str, Any]]:
    """The audit's annotator table under the exports' pseudonyms (never a username)."""
    ids = dict(
        User.objects.filter(
            username__in=[row["annotator"] for row in audit["annotators"]]
        ).values_list("username", "pk")
    )
    rows = []
    for row in audit["annotators"]:
        units = int(row.get("loo_rubric_fit_units") or 0)
        loo = row.get("loo_rubric_fit")
        agreeing = 0 if loo is None or not units else round(float(loo) * units)
        rows.append(
            {
                "annotator": pseudonym(campaign.pk, ids[row["annotator"]])[:PSEUDONYM_CHARACTERS],
                "answers": int(row["annotations"]),
                "left_out": bool(row.get("excluded")),
                "gold": share_with_interval(
                    int(row.get("gold_correct") or 0),
                    int(row.get("gold_answered") or 0),
                    confidence,
                ),
                "majority_agreement": share_with_interval(agreeing, units, confidence),
                "mean_kappa": _finite(row.get("mean_kappa_rubric_fit")),
            }
        )
    return sorted(rows, key=lambda row: row["annotator"])


def _finite(value: Any) -> float | None:
    return None if value is None or not np.isfinite(float(value)) else float(value)
