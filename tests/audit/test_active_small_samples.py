"""The active estimate's small-sample rule (audit/active_sample.py ``SMALL_SAMPLES``): a
category with too few decided drawn pairs, or with one kind of verdict only, prints no
interval and says why; the overall needs every category's. Pure: no database."""

import numpy as np

from bench import ppi_designs_bench, ppi_small_bench
from prb_annotate.audit import active_sample, rule
from prb_annotate.audit.active_sample import SMALL_SAMPLES, ModelRun, SampleDesign
from prb_annotate.audit.sampling import PlanTargets

MINIMUM = SMALL_SAMPLES.minimum


def test_too_few_or_one_kind_withholds_and_says_why() -> None:
    few = SMALL_SAMPLES.reason(MINIMUM - 1, 5)
    assert few is not None
    assert f"{MINIMUM - 1} decided, at least {MINIMUM} needed" in few
    assert f"{SMALL_SAMPLES.below:.2f}" in few
    validated = SMALL_SAMPLES.reason(MINIMUM + 5, MINIMUM + 5)
    assert validated is not None
    assert f"all {MINIMUM + 5} decided human pairs" in validated
    assert "are validated" in validated
    excluded = SMALL_SAMPLES.reason(MINIMUM, 0)
    assert excluded is not None
    assert "are excluded" in excluded
    assert SMALL_SAMPLES.reason(MINIMUM, 1) is None
    found = active_sample.withheld({"a": (MINIMUM, MINIMUM), "b": (2 * MINIMUM, MINIMUM)})
    assert found["b"] is None
    assert found["a"] is not None
    assert found[active_sample.OVERALL] == "no interval for category a"
    both = active_sample.withheld({"a": (MINIMUM, 3), "b": (MINIMUM, 4)})
    assert both == {"a": None, "b": None, active_sample.OVERALL: None}


def _estimate(verdict: dict[str, list[str]]) -> dict:
    """An active plan over two categories of 400 pairs, drawn at a budget of about 60 each,
    every drawn pair given the verdicts in ``verdict`` in turn."""
    rng = np.random.default_rng(3)
    scores = {c: rng.uniform(0.05, 0.95, 400) for c in ("a", "b")}
    ids = {c: [str(1000 * n + i) for i in range(400)] for n, c in enumerate(scores, start=1)}
    plan = active_sample.active_plan(
        scores, PlanTargets(category_half_width=0.12), 1, SampleDesign("active"), ModelRun(1, "m")
    )
    drawn, plan = active_sample.draw(plan, ids, scores, seed=4)
    populations = {c: active_sample.Population([int(i) for i in ids[c]], scores[c]) for c in scores}
    rows = []
    for category in scores:
        chosen = [int(i) for i in ids[category] if i in drawn]
        for number, pair in enumerate(chosen):
            kinds = verdict[category]
            rows.append(
                {"pair_id": pair, "category": category, "verdict": kinds[number % len(kinds)]}
            )
    return active_sample.audit_estimate(
        plan.as_json(), populations, {int(i): pi for i, pi in drawn.items()}, rows
    )


def test_a_draw_of_validated_pairs_only_gets_no_interval_and_the_reason() -> None:
    mixed = [rule.VALIDATED, rule.VALIDATED, rule.EXCLUDED]
    estimate = _estimate({"a": [rule.VALIDATED], "b": mixed})
    a, b = estimate["per_category"]
    assert a["decided"] >= MINIMUM
    assert a["validated"] == a["decided"]
    assert a["share"] == {
        "share": None,
        "ci_low": None,
        "ci_high": None,
        "half_width": None,
        "method": "active_ppi_wilson_cc",
    }
    assert a["low"]["ci_low"] is None
    assert a["high"]["ci_high"] is None
    assert a["target_reached"] is None
    assert "are validated" in a["withheld"]
    # Enough pairs of both kinds: an interval, and nothing withheld.
    assert b["decided"] >= MINIMUM
    assert b["withheld"] is None
    assert 0 < b["share"]["ci_low"] < b["share"]["share"] < b["share"]["ci_high"] < 1
    # The overall adds up both categories' variances: withheld with a's.
    overall = estimate["overall"]
    assert overall["share"]["share"] is None
    assert overall["withheld"] == "no interval for category a"
    # Both categories mixed: every row prints its interval.
    both = _estimate({"a": mixed, "b": mixed})
    assert [row["withheld"] for row in both["per_category"]] == [None, None]
    assert both["overall"]["withheld"] is None
    assert both["overall"]["share"]["ci_low"] < both["overall"]["share"]["ci_high"]


def test_undecided_pairs_do_not_count_towards_the_minimum() -> None:
    kinds = [rule.VALIDATED, rule.EXCLUDED] + [rule.UNDECIDED] * 8
    estimate = _estimate({"a": kinds, "b": kinds})
    for row in estimate["per_category"]:
        assert row["sampled"] >= MINIMUM > row["decided"]
        assert f"{row['decided']} decided, at least {MINIMUM} needed" in row["withheld"]
        assert row["share"]["ci_low"] is None


def test_a_cheap_version_of_the_small_budget_table() -> None:
    """bench/ppi_coverage.py --small at two budgets, 60 replicates: below the minimum nearly
    every interval is withheld; at twice the budget every one is printed and most cover."""
    world = ppi_designs_bench.population_at_agreement(31)
    small = ppi_small_bench.run_budget(world, 15, 60, 31)
    assert small.shown["overall"] == 0
    assert small.shown["c"] <= 3
    large = ppi_small_bench.run_budget(world, 2 * MINIMUM, 60, 32)
    assert large.shown == dict.fromkeys(large.shown, 60)
    assert all(large.shown_covered[name] >= 50 for name in large.shown)
