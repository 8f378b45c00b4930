"""The prediction-powered estimate (``ppi``) as the audit page and the text report show it."""

from collections.abc import Mapping
from typing import Any

from prb_annotate.audit import ppi_designs
from prb_annotate.audit.sample_report import DASH, interval, percent, points
from prb_annotate.formats import numbers


def _pairs(value: float | None) -> str:
    return DASH if value is None else f"{value:,.0f}"


def _row(label: str, entry: Mapping[str, Any], sample: int) -> dict[str, Any]:
    return {
        "label": label,
        "population": entry["population"],
        "model_pairs": entry["model_pairs"],
        "sample": sample,
        "agreement": percent(entry["agreement"]),
        "ppi": interval(entry["ppi"]),
        "ppi_half_width": points(entry["ppi"]["half_width"]),
        "humans_only": interval(entry["humans_only"]),
        "humans_half_width": points(entry["humans_only"]["half_width"]),
        "model_only": percent(entry["model_only"]["share"]),
        "worth": _pairs(entry["worth"]),
    }


def planning_rows(planning: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    if not planning:
        return []
    return [
        {
            "label": row["category"] or "(no category)",
            "population": row["population"],
            "humans_only": _pairs(row["humans_only"]),
            "with_model": _pairs(row["with_model"]),
        }
        for row in planning["per_category"]
    ]


def recalibrated_context(entry: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The estimate on the model's probabilities, its method named from the entry; None where
    the run kept no probabilities."""
    if not entry:
        return None
    if not entry["available"]:
        return {"available": False, "reason": entry["reason"]}
    method = ppi_designs.METHODS[entry["method"]]

    def row(label: str, estimate: Mapping[str, Any], sample: int) -> dict[str, Any]:
        return {
            "label": label,
            "sample": sample,
            "estimate": interval(estimate),
            "half_width": points(estimate["half_width"]),
        }

    overall = entry["overall"]
    return {
        "available": True,
        "method": method.words,
        "citations": method.citations,
        "overall": row("whole dataset", overall["estimate"], overall["sample_pairs"]),
        "rows": [
            row(item["category"] or "(no category)", item["estimate"], item["sample_pairs"])
            for item in entry["per_category"]
        ],
        "planning": design_planning(entry.get("planning")),
    }


def design_planning(planning: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The human pairs each design expects for the plan's targets, as rows to show."""
    if not planning:
        return None
    rows = [
        {"label": row["category"] or "(no category)", **_designs(row)}
        for row in planning.get("per_category", [])
    ]
    if "overall" in planning:
        rows.append({"label": "whole dataset", **_designs(planning["overall"])})
    return {
        "category_half_width": points(planning.get("category_half_width")),
        "half_width": points(planning.get("half_width")),
        "rows": rows,
    }


def _designs(row: Mapping[str, Any]) -> dict[str, str]:
    return {name: _pairs(row[name]) for name in ppi_designs.DESIGNS}


def context(report: Mapping[str, Any]) -> dict[str, Any] | None:
    section = report.get("ppi")
    if not section:
        return None
    found: dict[str, Any] = {
        "run": section["run"],
        "model": section["model"],
        "simulated": section["simulated"],
        "covers_sample": section["covers_sample"],
        "missing": section["sample_pairs_without_model"],
    }
    if not section["covers_sample"]:
        return found
    overall = section["overall"]
    planning = section.get("planning")
    return {
        **found,
        "confidence": numbers.level(section["confidence"]),
        "overall": _row("whole dataset", overall, overall["sample_pairs"]),
        "rows": [
            _row(row["category"] or "(no category)", row, row["sample"]["pairs"])
            for row in section["per_category"]
        ],
        "planning": planning_rows(planning),
        "recalibrated": recalibrated_context(section.get("recalibrated")),
        "planning_half_width": points(planning["half_width"]) if planning else DASH,
        "planning_totals": (
            {"humans_only": planning["humans_only"], "with_model": planning["with_model"]}
            if planning
            else None
        ),
    }


def lines(report: Mapping[str, Any]) -> list[str]:
    shown = context(report)
    if shown is None:
        return []
    marked = " (simulated)" if shown["simulated"] else ""
    found = [f"Prediction-powered estimate with {shown['model']}{marked} (run {shown['run']})"]
    if not shown["covers_sample"]:
        return [
            *found,
            f"  none: {shown['missing']} decided sampled pairs have no answer of the model "
            "(run it with --whole-dataset)",
        ]
    for row in [shown["overall"], *shown["rows"]]:
        found.append(
            f"  {row['label']}: PPI {row['ppi']} (half-width {row['ppi_half_width']}); humans "
            f"only {row['humans_only']} ({row['humans_half_width']}); model only "
            f"{row['model_only']} (biased); model on {row['model_pairs']} of "
            f"{row['population']} pairs, agrees on {row['agreement']} of {row['sample']} "
            f"sampled; worth {row['worth']} human pairs"
        )
    found += _recalibrated_lines(shown["recalibrated"])
    if shown["planning_totals"]:
        totals = shown["planning_totals"]
        found.append(
            f"  planning at {shown['planning_half_width']} per category: "
            f"{totals['with_model']} human pairs with the model, {totals['humans_only']} without"
        )
    return found


def _recalibrated_lines(shown: Mapping[str, Any] | None) -> list[str]:
    if shown is None:
        return []
    if not shown["available"]:
        return [f"  on the model's probabilities: none ({shown['reason']})"]
    found = [f"  on the model's probabilities: {shown['method']} ({shown['citations']})"]
    for row in [shown["overall"], *shown["rows"]]:
        found.append(f"    {row['label']}: {row['estimate']} (half-width {row['half_width']})")
    planning = shown["planning"]
    if planning:
        found.append(
            f"  human pairs expected (per category at {planning['category_half_width']}, "
            f"overall at {planning['half_width']}), the probabilities recalibrated on this pilot:"
        )
        found += [
            f"    {row['label']}: humans only {row['humans_only']}, recalibrated "
            f"{row[ppi_designs.UNIFORM]}, active {row[ppi_designs.ACTIVE]}"
            for row in planning["rows"]
        ]
    return found
