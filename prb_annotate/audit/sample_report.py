"""A sample plan and the dataset-level estimate as people read them: the campaign form's
preview, ``create_campaign --plan-only``, the audit page and the text report share these."""

from collections.abc import Mapping
from typing import Any

from prb_annotate import formatting

DASH = "—"


def percent(value: float | None) -> str:
    return DASH if value is None else formatting.percent(value)


def points(value: float | None) -> str:
    """A half-width as "±4.2 points"."""
    return DASH if value is None else f"±{100 * value:.1f} points"


def money(value: float | None) -> str:
    return DASH if value is None else f"{value:,.2f}"


def interval(entry: Mapping[str, Any]) -> str:
    """ "71.3% [65.0%, 77.0%]"; a census has no interval to show."""
    if entry.get("share") is None:
        return DASH
    if entry["ci_low"] == entry["ci_high"]:
        return f"{percent(entry['share'])} (every pair annotated)"
    return f"{percent(entry['share'])} [{percent(entry['ci_low'])}, {percent(entry['ci_high'])}]"


def bounds(row: Mapping[str, Any]) -> str:
    """The range the share lies in whatever the undecided pairs turn out to be."""
    low, high = row["low"], row["high"]
    if low.get("share") is None:
        return DASH
    if not row.get("undecided"):
        return "no undecided pair"
    return (
        f"{percent(low['share'])} to {percent(high['share'])} "
        f"(intervals from {percent(low['ci_low'])} to {percent(high['ci_high'])})"
    )


def reached(row: Mapping[str, Any]) -> str:
    target = row.get("target_half_width")
    if target is None:
        return DASH
    status = {True: "reached", False: "not yet", None: "no estimate yet"}[row["target_reached"]]
    return f"{points(target)}: {status}"


def plan_rows(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "category": row["category"] or "(no category)",
            "population": row["population"],
            "pairs": row["pairs"],
            "expected_share": percent(row["expected_share"]),
            "expected_half_width": points(row["expected_half_width"]),
        }
        for row in plan["categories"]
    ]


def plan_summary(plan: Mapping[str, Any]) -> str:
    targets = plan["targets"]
    wanted = []
    if targets["half_width"] is not None:
        wanted.append(f"{points(targets['half_width'])} overall")
    if targets["category_half_width"] is not None:
        wanted.append(f"{points(targets['category_half_width'])} per category")
    extra = (
        f", plus {percent(targets['split_share'])} for split votes"
        if targets["split_share"]
        else ""
    )
    text = (
        f"{plan['pairs']} of {plan['population']} pairs for {' and '.join(wanted)} "
        f"({targets['confidence']:.0%} intervals); {plan['annotations']} annotations "
        f"(k = {plan['k']}{extra})"
    )
    if plan["cost"] is not None:
        text += f"; cost {money(plan['cost'])}"
    return text + f"; expected overall half-width {points(plan['expected_half_width'])}"


def plan_lines(plan: Mapping[str, Any]) -> list[str]:
    lines = [f"Sample plan: {plan_summary(plan)}"]
    for row in plan_rows(plan):
        lines.append(
            f"  {row['category']}: {row['pairs']} of {row['population']} pairs "
            f"(expected share {row['expected_share']}, half-width {row['expected_half_width']})"
        )
    for number, extension in enumerate(plan.get("extensions", []), start=1):
        added = ", ".join(f"{c or '(no category)'} +{n}" for c, n in extension["added"].items())
        lines.append(f"  extension {number}: {added}")
    return lines


def estimate_context(estimate: Mapping[str, Any]) -> dict[str, Any]:
    """Rows for the audit page's "validated share of the dataset" table."""

    def row(label: str, entry: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "label": label,
            "population": entry["population"],
            "sampled": entry["sampled"],
            "decided": entry["decided"],
            "undecided": entry["undecided"],
            "share": interval(entry["share"]),
            "half_width": points(entry["share"]["half_width"]),
            "target": reached(entry),
            "bounds": bounds(entry),
        }

    return {
        "overall": row("whole dataset", estimate["overall"]),
        "rows": [row(r["category"] or "(no category)", r) for r in estimate["per_category"]],
        "plan_summary": plan_summary(estimate["plan"]),
        "extensions": len(estimate["plan"].get("extensions", [])),
    }


def estimate_lines(estimate: Mapping[str, Any]) -> list[str]:
    shown = estimate_context(estimate)
    lines = ["Validated share of the dataset (planned sample)", f"  plan: {shown['plan_summary']}"]
    for row in [shown["overall"], *shown["rows"]]:
        lines.append(
            f"  {row['label']}: {row['share']} from {row['decided']} decided of "
            f"{row['sampled']} sampled of {row['population']} pairs; half-width "
            f"{row['half_width']}; target {row['target']}; with undecided pairs: {row['bounds']}"
        )
    return lines
