"""The pure audit over frames: biases, consistency checks, annotator table, report shape."""

import json

import numpy as np
import pandas as pd
import pytest
from django.template import Context, Template

from prb_annotate.audit import assembly, rule, summaries
from prb_annotate.audit.report import ALPHA_MARKS, CHART_COEFFICIENTS, charts, render_text
from prb_annotate.formats import numbers
from prb_annotate.paper import numbers as paper_numbers

CRITERIA = rule.DEFAULT_CRITERIA


def row(
    pair_id,
    annotator,
    *,
    fit="chosen",
    differentiator="preference",
    chosen=5,
    rejected=5,
    position="A",
    flagged=False,
    time_ms=60_000,
    kind="regular",
    chosen_len=100,
    rejected_len=80,
):
    """One annotation in the frame's shape; ``chosen`` / ``rejected`` a rating or a dict."""
    seen = "tie" if fit == "tie" else position if fit == "chosen" else "AB"[position == "A"]
    entry = {
        "annotation_id": hash((pair_id, annotator)) % 10**9,
        "assignment_id": 0,
        "item_id": pair_id,
        "pair_id": pair_id,
        "external_id": f"p{pair_id:03d}",
        "category": "Art" if pair_id % 2 else "Society",
        "item_kind": kind,
        "annotator": annotator,
        "annotator_id": int(annotator[-1]),
        "chosen_position": position,
        "rubric_fit": fit,
        "rubric_fit_position": seen,
        "differentiator": differentiator,
        "confidence": "high",
        "flagged": flagged,
        "comment": "",
        "time_on_task_ms": time_ms,
        "submitted_at": None,
        "chosen_len": chosen_len,
        "rejected_len": rejected_len,
    }
    for side, value in (("chosen", chosen), ("rejected", rejected)):
        for criterion in CRITERIA:
            rating = value.get(criterion, 5) if isinstance(value, dict) else value
            entry[rule.quality_column(side, criterion)] = rating
    return entry


def frame_of(rows):
    return pd.DataFrame(rows)


def three(pair_id, **answers):
    return [row(pair_id, f"ann{i}", **answers) for i in (1, 2, 3)]


def test_it_flags_answers_that_contradict_each_other():
    """Each cross-question check fires on its own contradiction and not on a sound answer."""
    frame = frame_of(
        [
            row(1, "ann1"),
            row(1, "ann2", rejected={"relevance": 2}),
            row(2, "ann1", differentiator="quality", chosen=4, rejected=4),
            row(2, "ann2", differentiator="quality", chosen=5, rejected=3),
            row(3, "ann1", differentiator="none", fit="chosen"),
            row(3, "ann2", differentiator="none", fit="tie"),
            row(4, "ann1", fit="tie"),
        ]
    )
    flags = summaries.consistency_flags(frame, CRITERIA)
    found = {(flag.pair_id, flag.annotator, flag.code) for flag in flags.itertuples()}
    assert found == {
        (1, "ann2", "preference_but_low_quality"),
        (2, "ann1", "quality_but_equal_ratings"),
        (3, "ann1", "no_difference_but_prefers_one"),
        (4, "ann1", "tie_but_preference"),
    }
    assert set(summaries.CONSISTENCY_CHECKS) == {code for *_, code in found}


def test_it_measures_length_bias_in_characters():
    """Share of pairs whose chosen answer is longer, and whether answers follow length."""
    rows = []
    # Pairs 1-6: chosen longer; pairs 7-8: chosen shorter; pair 9: equal lengths.
    for pair_id in range(1, 10):
        longer = pair_id <= 6
        chosen_len, rejected_len = (200, 100) if longer else (100, 200)
        if pair_id == 9:
            chosen_len = rejected_len = 150
        fit = "chosen" if longer else "rejected"  # annotators always pick the longer answer
        rows += [
            row(pair_id, f"ann{i}", fit=fit, chosen_len=chosen_len, rejected_len=rejected_len)
            for i in (1, 2)
        ]
    frame = frame_of(rows)
    items = rule.items_from_frame(frame, rule.Thresholds())
    bias = summaries.length_bias(items, frame)
    assert bias["unit"] == "characters"
    assert bias["pairs_equal_length"] == 1
    assert bias["pairs_chosen_longer"]["count"] == 6
    assert bias["pairs_chosen_longer"]["total"] == 8
    assert bias["answers_pick_longer"]["share"] == pytest.approx(16 / 16)
    assert bias["pick_chosen_when_chosen_longer"]["share"] == 1.0
    assert bias["pick_chosen_when_chosen_shorter"]["share"] == 0.0
    assert bias["answers_pick_longer_p_value"] < 0.001


def test_it_measures_position_bias_as_seen_by_annotators():
    """Share of "A" among non-tie answers as shown on screen, with a binomial p-value."""
    rows = [row(p, "ann1", position="A") for p in range(1, 8)]  # chosen shown as A, picked
    rows += [row(p, "ann1", position="B", fit="rejected") for p in range(8, 11)]  # A again
    rows += [row(11, "ann1", fit="tie")]
    bias = summaries.position_bias(frame_of(rows))
    assert bias["share_a"]["count"] == 10
    assert bias["share_a"]["total"] == 10
    assert bias["p_value"] == pytest.approx(2 / 1024)


def test_it_describes_each_annotator():
    """Leave-one-out agreement, kappa per co-annotator, gold accuracy, position, time, flags."""
    rows = []
    for pair_id in range(1, 7):
        rows += [row(pair_id, "ann1", time_ms=10_000), row(pair_id, "ann2", time_ms=30_000)]
        odd = pair_id % 2 == 0
        rows.append(
            row(pair_id, "ann3", fit="rejected" if odd else "chosen", time_ms=50_000, position="B")
        )
    rows.append(row(20, "ann1", kind="gold"))
    rows.append(row(20, "ann3", kind="gold", fit="rejected"))
    frame = frame_of(rows)
    items = rule.items_from_frame(frame, rule.Thresholds())
    items["gold_answers"] = [
        {"rubric_fit": "chosen"} if kind == "gold" else None for kind in items["item_kind"]
    ]
    report = assembly.audit_report(
        frame, items, rule.Thresholds(min_gold_accuracy=0.5), resamples=50
    )
    table = {entry["annotator"]: entry for entry in report["annotators"]}
    assert table["ann1"]["loo_rubric_fit"] == 1.0
    assert table["ann3"]["loo_rubric_fit"] == 0.5
    assert table["ann3"]["excluded"] is True
    assert report["excluded_annotators"] == ["ann3"]
    assert table["ann1"]["gold_accuracy"] == 1.0
    assert (table["ann3"]["gold_correct"], table["ann3"]["gold_answered"]) == (0, 1)
    assert table["ann2"]["gold_accuracy"] is None
    assert table["ann1"]["median_time_ms"] == 10_000
    assert table["ann1"]["annotations"] == 6
    assert table["ann3"]["share_a"] == 0.5
    assert set(table["ann1"]["kappa_rubric_fit"]) == {"ann2", "ann3"}
    assert table["ann1"]["ds_accuracy_rubric_fit"] is not None
    # ann3 is left out: every pair now has two counted annotations, too few for k = 3.
    assert report["counts"]["undecided"] == 6
    assert report["counts"]["counted_annotations"] == 12


def test_it_derives_items_from_the_frame_when_none_are_given():
    """Without an item table each pair seen in the frame needs k annotations."""
    frame = frame_of(three(1) + three(2)[:2])
    by_pair = rule.pair_verdicts(frame, rule.Thresholds())
    assert by_pair[1].verdict == "validated"
    assert by_pair[2].reasons == ("too_few_annotations",)


def test_it_writes_a_report_that_is_strict_json_and_reproducible():
    """No NaN anywhere; the same seed gives the same report; shares add up."""
    rng = np.random.default_rng(0)
    rows = []
    for pair_id in range(1, 41):
        for annotator in ("ann1", "ann2", "ann3"):
            rows.append(
                row(
                    pair_id,
                    annotator,
                    fit=str(rng.choice(["chosen", "chosen", "rejected"])),
                    chosen=int(rng.integers(3, 6)),
                    rejected=int(rng.integers(2, 6)),
                    position=str(rng.choice(["A", "B"])),
                )
            )
    frame = frame_of(rows)
    items = rule.items_from_frame(frame, rule.Thresholds())
    report = assembly.audit_report(frame, items, rule.Thresholds(), resamples=100, seed=5)
    json.dumps(report, allow_nan=False)
    assert report == assembly.audit_report(frame, items, rule.Thresholds(), resamples=100, seed=5)
    overall = report["validity"]["overall"]
    assert overall["validated"] + overall["excluded"] + overall["undecided"] == 40
    assert sum(row["pairs"] for row in report["validity"]["per_category"]) == 40
    for question in report["agreement"]:
        for coefficient in question["coefficients"]:
            if coefficient["value"] is not None and coefficient["ci_low"] is not None:
                assert coefficient["ci_low"] <= coefficient["value"] <= coefficient["ci_high"]


def test_a_level_is_written_as_it_was_set_never_rounded():
    """An audit at 97.5% says 97.5% in its text report, its chart's title and the paper's
    captions; 99.9% is never written as 100%."""
    frame = frame_of(three(1) + three(2) + three(3))
    items = rule.items_from_frame(frame, rule.Thresholds())
    report = assembly.audit_report(frame, items, rule.Thresholds(), resamples=20, confidence=0.975)
    assert "97.5% intervals" in render_text(report)
    assert "with 97.5% intervals" in str(charts(report)["agreement"])
    assert [numbers.level(value) for value in (0.95, 0.975, 0.999)] == ["95%", "97.5%", "99.9%"]
    assert paper_numbers.confidence_level(0.999) == "99.9"
    rendered = Template("{% load prb_numbers %}{{ value|level }}").render(Context({"value": 0.9}))
    assert rendered == "90%"


def test_the_agreement_chart_marks_alphas_thresholds_on_alpha_rows_alone():
    """Krippendorff's 0.667 and 0.800 are thresholds for alpha: the page's chart dashes them
    across each alpha row, and not across AC1's, AC2's or kappa's."""
    frame = frame_of(three(1) + three(2) + three(3))
    items = rule.items_from_frame(frame, rule.Thresholds())
    report = assembly.audit_report(frame, items, rule.Thresholds(), resamples=20)
    charted = [
        coefficient["key"]
        for question in report["agreement"]
        for coefficient in question["coefficients"]
        if coefficient["key"] in CHART_COEFFICIENTS[question["kind"]]
    ]
    alpha_rows = sum(key.startswith("alpha") for key in charted)
    assert 1 < alpha_rows < len(charted)
    chart = str(charts(report)["agreement"])
    assert chart.count('stroke-dasharray="3 3"') == len(ALPHA_MARKS) * alpha_rows
