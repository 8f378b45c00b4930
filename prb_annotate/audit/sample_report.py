"""A sample plan and the dataset-level estimate as people read them: the campaign form's
preview, ``create_campaign --plan-only``, the audit page and the text report share these."""

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from prb_annotate.audit import active_sample
from prb_annotate.audit.sampling import CENSUS, is_census
from prb_annotate.formats import numbers

DASH = "—"


def percent(value: float | None) -> str:
    return DASH if value is None else numbers.percent(value)


def points(value: float | None) -> str:
    """A half-width as "±4.2 points"."""
    return DASH if value is None else f"±{100 * value:.1f} points"


def money(value: float | None) -> str:
    return DASH if value is None else f"{value:,.2f}"


def interval(entry: Mapping[str, Any]) -> str:
    """ "71.3% [65.0%, 77.0%]"; a census (``sampling.census``) has no interval to show."""
    if entry.get("share") is None:
        return DASH
    if is_census(entry):
        return f"{percent(entry['share'])} ({_('every pair annotated')})"
    return f"{percent(entry['share'])} [{percent(entry['ci_low'])}, {percent(entry['ci_high'])}]"


def bounds(row: Mapping[str, Any]) -> str:
    """The range the share lies in whatever the undecided pairs turn out to be: from the
    lower bound's interval to the upper one's, or between the two shares of a census."""
    low, high = row["low"], row["high"]
    if low.get("share") is None:
        return DASH
    if not row.get("undecided"):
        return "no undecided pair"
    shares = f"{percent(low['share'])} to {percent(high['share'])}"
    if is_census(low) and is_census(high):
        return f"{shares} ({_('every pair annotated')})"
    return f"{shares} (intervals from {percent(_lowest(low))} to {percent(_highest(high))})"


def _lowest(entry: Mapping[str, Any]) -> float | None:
    """An entry's lower bound: its interval's, or a census's share (it has no interval)."""
    return entry["share"] if is_census(entry) else entry["ci_low"]


def _highest(entry: Mapping[str, Any]) -> float | None:
    return entry["share"] if is_census(entry) else entry["ci_high"]


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
        f"({numbers.level(targets['confidence'])} intervals); {plan['annotations']} annotations "
        f"(k = {plan['k']}{extra})"
    )
    if plan["cost"] is not None:
        text += f"; cost {money(plan['cost'])}"
    return text + f"; expected overall half-width {points(plan['expected_half_width'])}"


def chance(value: float) -> str:
    """A probability as "53%"; "over 99%" rather than a promise of certainty."""
    return "over 99%" if value > 0.99 else f"{100 * value:.0f}%"


def _odds_parts(plan: Mapping[str, Any], odds: Mapping[str, Any]) -> list[str]:
    targets, parts = plan["targets"], []
    if odds.get("overall") is not None:
        parts.append(f"{points(targets['half_width'])} overall: {chance(odds['overall'])}")
    per_category = odds.get("per_category")
    if per_category:
        lowest = min(per_category, key=per_category.__getitem__)
        parts.append(
            f"{points(targets['category_half_width'])} per category: from "
            f"{chance(per_category[lowest])} ({lowest or '(no category)'}) to "
            f"{chance(max(per_category.values()))}"
        )
    return parts


def plan_odds(plan: Mapping[str, Any]) -> str | None:
    """What the plan's promise is worth: the chance that it reaches its half-widths if the
    shares are as expected, and the plan at the share's bound nearest one half, with its own
    chance (``audit/plan_odds.py``); None for a plan stored without them."""
    odds, cautious = plan.get("odds"), plan.get("cautious")
    if not odds or not cautious:
        return None
    shares = sorted(set(cautious["shares"].values()))
    share_words = (
        percent(shares[0]) if len(shares) == 1 else f"{percent(shares[0])} to {percent(shares[-1])}"
    )
    text = (
        "Chance of reaching the half-width if the validated share is as expected: "
        + "; ".join(_odds_parts(plan, odds))
        + f". Planned at the share's bound nearest one half ({share_words} instead of "
        f"{percent(plan['targets']['expected_share'])}): {cautious['pairs']} pairs, "
        f"{cautious['annotations']} annotations"
    )
    if cautious.get("cost") is not None:
        text += f", cost {money(cautious['cost'])}"
    return text + "; chance " + "; ".join(_odds_parts(plan, cautious["odds"])) + "."


def design_summary(plan: Mapping[str, Any]) -> str | None:
    """An active plan's design in words: the model run it is drawn from, the floor, and the
    human pairs each design expects to need for the targets; None for a uniform plan."""
    design = plan.get("design")
    if not design:
        return None
    compared = design["compared"]
    summary = _(
        "Drawn actively from the probabilities of model annotator %(model)s (run %(run)s): "
        "each pair with its own inclusion probability, higher where the model is unsure, never "
        "below %(floor)s of the uniform one. Human pairs expected for these targets: "
        "%(active)s drawn actively, %(uniform)s on a uniform sample with the model's "
        "probabilities, %(humans)s by the humans alone (the model's probabilities taken as "
        "calibrated: an overconfident model makes these figures optimistic)."
    ) % {
        "model": design["model"],
        "run": design["run"],
        "floor": percent(design["floor"]),
        "active": compared["active"]["human_pairs"],
        "uniform": compared["uniform"]["human_pairs"],
        "humans": compared["humans_only"]["human_pairs"],
    }
    short = small_budgets(design)
    return summary if short is None else f"{summary} {short}"


def small_budgets(design: Mapping[str, Any]) -> str | None:
    """A warning when a category's active budget is below the decided pairs the active
    estimate needs to print an interval (``active_sample.SMALL_SAMPLES``); the budget is left
    as the targets need it, so the person planning chooses to tighten a target or not."""
    minimum = active_sample.SMALL_SAMPLES.minimum
    short = sorted(
        (category or _("(no category)"), budget)
        for category, budget in design["expected_pairs"].items()
        if budget < minimum
    )
    if not short:
        return None
    return _(
        "Warning: %(categories)s expect fewer than the %(minimum)s decided human pairs the "
        "active estimate needs to print a category's interval (coverage measured in "
        "docs/ppi.md); tighten the target half-width for more pairs."
    ) % {
        "categories": ", ".join(f"{category} ({budget})" for category, budget in short),
        "minimum": minimum,
    }


def plan_lines(plan: Mapping[str, Any]) -> list[str]:
    lines = [f"Sample plan: {plan_summary(plan)}"]
    odds = plan_odds(plan)
    if odds is not None:
        lines.append(f"  {odds}")
    design = design_summary(plan)
    if design is not None:
        lines.append(f"  {design}")
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
            "withheld": entry.get("withheld"),
        }

    overall = row("whole dataset", estimate["overall"])
    rows = [row(r["category"] or "(no category)", r) for r in estimate["per_category"]]
    return {
        "overall": overall,
        "rows": rows,
        "withheld": [r for r in [*rows, overall] if r["withheld"]],
        "plan_summary": plan_summary(estimate["plan"]),
        "extensions": len(estimate["plan"].get("extensions", [])),
        "active": estimate.get("design") == "active",
        "design": design_summary(estimate["plan"]),
        "method": estimate_method(estimate),
        "reason": estimate.get("reason"),
    }


def share_method_words(method: str | None) -> str:
    """The interval ``sampling._interval`` names by ``method``, in words."""
    words = {
        "wilson_cc_fpc": _(
            "a continuity-corrected Wilson interval with the finite-population correction"
        ),
        "wilson_fpc": _("a Wilson interval with the finite-population correction"),
    }
    return words.get(method or "", method or "")


def estimate_method(estimate: Mapping[str, Any]) -> str:
    """The estimate's method in words, from the method that produced it: an active sample's
    with its citations, a uniform or stratified sample's from its intervals' method (nothing
    where no interval was computed, as before the sample has any pair)."""
    if estimate.get("design") != "active":
        method = _share_method(estimate)
        if method is None:
            return ""
        if method == CENSUS:
            return _(
                "Every pair of the dataset was annotated: each share is the dataset's own, with "
                "no interval."
            )
        return _(
            "Estimated for every pair of the dataset, not only the sampled ones: per category "
            "%(words)s; overall the categories weighted by their size, at Kish's effective "
            "sample size."
        ) % {"words": share_method_words(method)}
    return _(
        "Estimated by %(words)s (%(citations)s), with the finite-population correction: each "
        "drawn pair weighted by the inverse of its inclusion probability."
    ) % {"words": estimate["method_words"], "citations": estimate["citations"]}


def estimate_lines(estimate: Mapping[str, Any]) -> list[str]:
    shown = estimate_context(estimate)
    lines = ["Validated share of the dataset (planned sample)", f"  plan: {shown['plan_summary']}"]
    lines += [f"  {text}" for text in (shown["design"], shown["method"]) if text]
    if shown["reason"]:
        lines.append("  " + _("No estimate: %(reason)s.") % {"reason": shown["reason"]})
    for row in [shown["overall"], *shown["rows"]]:
        lines.append(
            f"  {row['label']}: {row['share']} from {row['decided']} decided of "
            f"{row['sampled']} sampled of {row['population']} pairs; half-width "
            f"{row['half_width']}; target {row['target']}; with undecided pairs: {row['bounds']}"
        )
        if row["withheld"]:
            lines.append("    " + _("No interval: %(reason)s.") % {"reason": row["withheld"]})
    return lines


def _share_method(estimate: Mapping[str, Any]) -> str | None:
    """The method of the estimate's intervals. Before any sampled pair is decided the shares
    are empty, but the bounds that count the undecided ones have their intervals. A census
    (no interval) is the method only where every entry is one: a census category beside
    sampled ones leaves the others' intervals to be named, and its row says it itself."""
    intervals = [
        entry[key]
        for entry in (estimate["overall"], *estimate["per_category"])
        for key in ("share", "low", "high")
        if isinstance(entry.get(key), Mapping)
    ]
    methods = [found["method"] for found in intervals if found.get("method")]
    return next((method for method in methods if method != CENSUS), methods[0] if methods else None)
