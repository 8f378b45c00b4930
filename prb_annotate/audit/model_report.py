"""Model annotators beside the humans, as the audit page and the text report show them."""

from collections.abc import Mapping
from typing import Any

from prb_annotate.formats import numbers

DASH = "—"


def _alpha(value: float | None) -> str:
    return DASH if value is None else f"{round(value, 3) + 0.0:.3f}"


def rows(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per question, cells formatted."""
    return [
        {
            "question": question["question"],
            "label": question["label"],
            "asked": question["pairs_asked"],
            "without_answer": question["pairs_without_model_answer"],
            "unparsed": run["replies"].get(question["question"], {}).get("unparsed", 0),
            "agreement": numbers.share(question["agrees_with_majority"]),
            "alpha_humans": _alpha(question["alpha_humans"]),
            "alpha_with_model": _alpha(question["alpha_with_model"]),
        }
        for question in run["questions"]
    ]


def context(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{**run, "rows": rows(run)} for run in report.get("model_annotators", [])]


def lines(report: Mapping[str, Any]) -> list[str]:
    found = []
    for run in context(report):
        found.append(
            f"Model annotator {run['model']} (run {run['run']}; left out of the agreement, "
            "verdicts and annotators above)"
        )
        for row in run["rows"]:
            found.append(
                f"  {row['question']}: agrees with the human majority {row['agreement']}; "
                f"alpha humans {row['alpha_humans']}, with the model {row['alpha_with_model']}; "
                f"{row['without_answer']} of {row['asked']} pairs without a consistent answer "
                f"({row['unparsed']} unparsed replies)"
            )
    return found
