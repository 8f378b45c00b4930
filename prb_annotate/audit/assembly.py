"""The whole audit assembled as plain JSON-ready data.

The flow runs one way: ``frames`` reads the campaign into frames, ``rule`` gives every pair its
verdict, ``summaries``, ``questions`` and ``annotators`` compute what the report shows, this
module puts them together, and ``report`` words the result for people.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from prb_annotate.audit import agreement
from prb_annotate.audit.annotators import (
    annotator_table,
    annotators_below_gold,
    dawid_skene_summary,
)
from prb_annotate.audit.questions import agreement_by_question
from prb_annotate.audit.rule import (
    Adjudicated,
    PairVerdict,
    Thresholds,
    apply_adjudications,
    counted_annotations,
    exclusion_effect,
    pair_verdicts,
)
from prb_annotate.audit.summaries import (
    CONSISTENCY_CHECKS,
    consistency_flags,
    label_agreement,
    length_bias,
    position_bias,
    validity_summary,
    verdict_counts,
)


def audit_report(
    frame: pd.DataFrame,
    items: pd.DataFrame,
    thresholds: Thresholds,
    *,
    resamples: int = agreement.DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
    dawid_skene: bool = True,
    adjudications: Mapping[int, Adjudicated] | None = None,
    excluded_annotators: Collection[str] | None = None,
) -> dict[str, Any]:
    """The full audit as plain JSON-ready data: the page, the CLI and exports render this.

    Verdicts are the final ones (a manager's adjudication where there is one); the counts
    give the annotators' verdicts beside them, and agreement is the annotators' alone.
    ``excluded_annotators``: who is out of the audit, when the caller knows more reasons than
    gold accuracy (``exclusions.left_out_annotators``); by default those below the gold minimum.
    """
    excluded = (
        set(excluded_annotators)
        if excluded_annotators is not None
        else annotators_below_gold(frame, items, thresholds.min_gold_accuracy)
    )
    verdicts = apply_adjudications(
        pair_verdicts(frame, thresholds, items=items, excluded_annotators=excluded),
        adjudications or {},
    )
    counted = counted_annotations(frame, items, excluded)
    flags = consistency_flags(counted_annotations(frame, items), thresholds.quality_criteria)
    report: dict[str, Any] = {
        "settings": _settings(thresholds, resamples, seed, confidence),
        "counts": _counts(frame, items, counted, verdicts),
        "excluded_annotators": sorted(excluded),
        "agreement": agreement_by_question(
            counted, thresholds, resamples=resamples, seed=seed, confidence=confidence
        ),
        "validity": {
            **validity_summary(verdicts, confidence),
            "label_agreement": label_agreement(verdicts, counted, confidence),
        },
        "bias": {
            "position": position_bias(counted, confidence),
            "length": length_bias(items, counted, confidence),
        },
        "annotators": annotator_table(frame, items, thresholds, excluded, flags),
        "consistency": _consistency(flags),
        "verdicts": _verdict_rows(verdicts),
    }
    if excluded:
        # The same rule over every answer, the excluded annotators' too: what leaving them out
        # changed, for the paper's methods paragraph.
        everyone = apply_adjudications(
            pair_verdicts(frame, thresholds, items=items), adjudications or {}
        )
        report["exclusion_effect"] = exclusion_effect(verdicts, everyone)
    if dawid_skene:
        summary = dawid_skene_summary(counted, verdicts)
        report["dawid_skene"] = summary
        for row in report["annotators"]:
            for question, result in summary.items():
                row[f"ds_accuracy_{question}"] = result["annotator_accuracy"].get(row["annotator"])
    return jsonable(report)


def _settings(
    thresholds: Thresholds, resamples: int, seed: int | None, confidence: float
) -> dict[str, Any]:
    return {
        "resamples": resamples,
        "seed": seed,
        "confidence": confidence,
        "thresholds": {**asdict(thresholds), "quality_criteria": list(thresholds.quality_criteria)},
        "length_unit": "characters",
    }


def _counts(
    frame: pd.DataFrame,
    items: pd.DataFrame,
    counted: pd.DataFrame,
    verdicts: Mapping[int, PairVerdict],
) -> dict[str, Any]:
    return {
        "pairs": len(verdicts),
        "gold_items": int((items["item_kind"] == "gold").sum()),
        "annotations": len(frame),
        "counted_annotations": len(counted),
        "annotators": int(frame["annotator"].nunique()),
        **verdict_counts(verdicts.values()),
        "adjudicated": sum(v.adjudicated for v in verdicts.values()),
        "by_annotators": verdict_counts(verdicts.values(), by_annotators=True),
    }


def _consistency(flags: pd.DataFrame) -> dict[str, Any]:
    return {
        "checks": [
            {"code": code, "label": label, "annotations": int((flags["code"] == code).sum())}
            for code, label in CONSISTENCY_CHECKS.items()
        ],
        "flags": flags.to_dict(orient="records"),
    }


def _verdict_rows(verdicts: Mapping[int, PairVerdict]) -> list[dict[str, Any]]:
    return [
        {
            "pair_id": v.pair_id,
            "external_id": v.external_id,
            "category": v.category,
            "verdict": v.verdict,
            "reasons": list(v.reasons),
            "n_annotations": v.n_annotations,
            "adjudicated": v.adjudicated,
            "annotators_verdict": v.by_annotators()[0],
            "annotators_reasons": list(v.by_annotators()[1]),
        }
        for v in sorted(verdicts.values(), key=lambda v: (v.external_id, v.pair_id))
    ]


def jsonable(value: Any) -> Any:
    """Plain Python types only, NaN as None: what ``json.dumps`` writes without complaint."""
    if value is None or type(value) in (str, int, bool):
        return value
    if isinstance(value, Mapping):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
