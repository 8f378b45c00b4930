"""The paper's words come from the objects that hold what they state: the whole validation rule
from the rule's conditions and the campaign's thresholds, each level from the section whose
intervals it names, the agreement intervals' centring from the intervals that were centred,
the sample's sizing from its plan, what the model annotator judged from its counts, and the
agreement figure's caption from what it draws. A reader who does what the paragraph says gets
the printed numbers."""

import copy
import shutil
import subprocess
from dataclasses import replace
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from prb_annotate.audit import intervals, rule, sampling
from prb_annotate.audit import report as audit_report
from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.campaigns.model_annotator import campaign_pairs
from prb_annotate.models import Campaign, Dataset
from prb_annotate.paper import figures, markdown, protocol
from prb_annotate.paper.inputs import paper_numbers
from prb_annotate.paper.methods import paragraph
from prb_annotate.paper.tables import AGREEMENT_KEYS, Table, all_tables
from prb_annotate.simulation.model_annotator import simulate_model_annotator
from tests.support.audit import add_item, annotate, annotators, make_campaign
from tests.support.sampling import TARGETS, pilot, planned_dataset, truth


def text_of(numbers: dict[str, Any]) -> str:
    """The paragraph as Markdown, its escapes removed, on one line."""
    return " ".join(markdown.methods(paragraph(numbers)).replace("\\", "").split())


def tables_of(numbers: dict[str, Any]) -> dict[str, Table]:
    return {table.key: table for table in all_tables(numbers)}


def compiles_with_pdflatex(campaign: Campaign, folder: Path) -> str:
    """The paper written by ``audit --format latex`` and compiled with pdflatex (skipped where
    it is not installed); its methods.tex."""
    call_command(
        "audit", "--campaign", str(campaign.pk), "--format", "latex", "--out", str(folder),
        "--resamples", "0", stderr=StringIO(),
    )  # fmt: skip
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex not installed (Debian: texlive-latex-recommended)")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    return " ".join((folder / "methods.tex").read_text().split())


# --- 1. the whole validation rule -------------------------------------------------------------

THRESHOLDS = {
    "annotations_per_pair": 3,
    "quality_threshold": 4.0,
    "majority_threshold": 0.5,
    "quality_criteria": ["correctness"],
    "rating_scale_max": 5,
}


def test_the_rule_sentence_states_a_condition_for_every_reason_the_rule_gives() -> None:
    conditions = protocol.rule_conditions(THRESHOLDS)
    stated = {reason for condition in conditions for reason in condition.reasons}
    assert stated | set(protocol.SPLIT_REASONS) == set(rule.REASONS)
    sentence = protocol.rule_sentence(THRESHOLDS)
    for condition in conditions:
        assert condition.words in sentence
    assert "(k = 3, plus one for each time a split vote asked for another annotator)" in sentence
    assert "a majority do not flag it as unusable" in sentence
    assert "the unusable flag (neither side with a majority) leaves it undecided" in sentence
    assert "its 3 required answers" not in sentence
    stricter = protocol.rule_sentence({**THRESHOLDS, "majority_threshold": 0.6})
    assert "more than 60.0% do not flag it as unusable" in stricter
    assert "(neither side with more than 60.0%)" in stricter


def test_a_flagged_pair_and_a_split_flag_are_what_the_paragraph_says(
    dataset: Dataset, manager: User
) -> None:
    """Two of three flag the first pair: excluded as flagged; two of four (one extra asked for
    by a split vote) flag the second: undecided. The paragraph states both conditions."""
    campaign = make_campaign(dataset, annotations_per_pair=3)
    first, second, *rest = dataset.pairs.order_by("external_id")
    raters = annotators(4)
    flagged = add_item(campaign, first)
    for index, user in enumerate(raters[:3]):
        annotate(flagged, user, flagged=index < 2)
    split = add_item(campaign, second, extra_annotations=1)
    for index, user in enumerate(raters):
        annotate(split, user, flagged=index < 2)
    for pair in rest[:3]:
        item = add_item(campaign, pair)
        for user in raters[:3]:
            annotate(item, user)
    report = campaign_audit(campaign, resamples=0)
    verdicts = {row["pair_id"]: row for row in report["verdicts"]}
    assert (verdicts[first.pk]["verdict"], verdicts[first.pk]["reasons"]) == (
        "excluded",
        [rule.FLAGGED],
    )
    assert verdicts[second.pk]["verdict"] == "undecided"
    assert verdicts[second.pk]["reasons"] == [rule.UNDECIDED_SPLIT_VOTE]
    assert verdicts[second.pk]["n_annotations"] == 4
    text = text_of(paper_numbers(campaign, report))
    assert protocol.rule_sentence(report["settings"]["thresholds"]).strip() in text
    assert "a majority do not flag it as unusable" in text
    assert "a split vote on the main difference, the preferred response or the unusable flag" in (
        text
    )


# --- 2. each level from its own section -------------------------------------------------------


@pytest.fixture
def planned_at_90(db: None) -> Campaign:
    """A planned sample at a 0.90 level (the audit's own intervals stay at 0.95), with a model
    annotator over the whole dataset that keeps its probabilities."""
    dataset = planned_dataset()
    targets = replace(TARGETS, confidence=0.9)
    campaign = create_campaign(dataset, "planned", k=1, sample_targets=targets, seed=2)
    pilot(campaign, {"fitness": 12, "cooking": 10})
    simulate_model_annotator(campaign, truth(dataset), accuracy=0.9, seed=1)
    return campaign


def test_the_prediction_powered_sentence_names_the_level_of_its_section(
    planned_at_90: Campaign, tmp_path: Path
) -> None:
    report = campaign_audit(planned_at_90, resamples=0)
    assert report["settings"]["confidence"] == 0.95
    assert report["ppi"]["confidence"] == 0.9
    assert "confidence" not in report["ppi"]["overall"]
    assert report["ppi"]["recalibrated"]["confidence"] == 0.9
    numbers = paper_numbers(planned_at_90, report)
    text = text_of(numbers)
    assert "with a 90% prediction-powered interval (PPI++" in text
    assert "a 90% prediction-powered interval on the model's probabilities" in text
    assert "95% prediction-powered" not in text
    assert "with a 90% continuity-corrected Wilson score interval at the sample's" in text
    assert "with a 95% plain Wilson score interval" in text  # the audit's own level
    assert "Intervals: 90%" in tables_of(numbers)["ppi"].caption
    methods = compiles_with_pdflatex(planned_at_90, tmp_path / "paper")
    assert r"a 90\% prediction-powered interval (PPI++" in methods


# --- 3. the agreement intervals as the interval objects record them ---------------------------


@pytest.fixture
def demo_numbers(finished: Campaign) -> dict[str, Any]:
    return paper_numbers(finished, campaign_audit(finished, resamples=200))


def printed_centred(numbers: dict[str, Any]) -> list[str]:
    """The labels of the agreement coefficients the tables print whose interval the audit
    centred, in first-printed order."""
    questions = numbers["audit"]["agreement"] + numbers["human"]["category_agreement"]
    found = [
        coefficient["label"]
        for question in questions
        for coefficient in question["coefficients"]
        if coefficient["key"] in AGREEMENT_KEYS[question["kind"]]
        and coefficient["reliable"]
        and coefficient["centred"]
    ]
    return list(dict.fromkeys(found))


def test_the_gwet_intervals_are_said_to_be_centred_because_the_audit_centred_them(
    demo_numbers: dict[str, Any],
) -> None:
    centred = printed_centred(demo_numbers)
    assert centred == ["Gwet's AC1", "Gwet's AC2 (ordinal weights)"]
    every = [c for q in demo_numbers["audit"]["agreement"] for c in q["coefficients"]]
    assert all(c["method"] == "bayesian_prior" for c in every)  # the key does not change
    said = intervals.adjustment_text(centred)
    assert said.startswith("the intervals of Gwet's AC1 and Gwet's AC2 (ordinal weights) are")
    assert "median of their draws sits on the estimate and are capped at one" in said
    assert said.endswith(intervals.WIDENING)
    assert f"seed {demo_numbers['audit']['settings']['seed']}; {said}. " in text_of(demo_numbers)
    caption = tables_of(demo_numbers)["agreement"].caption
    assert f"{said[0].upper()}{said[1:]}." in caption


def test_intervals_the_audit_did_not_centre_are_not_said_to_be(
    demo_numbers: dict[str, Any],
) -> None:
    uncentred = copy.deepcopy(demo_numbers)
    for question in uncentred["audit"]["agreement"] + uncentred["human"]["category_agreement"]:
        for coefficient in question["coefficients"]:
            coefficient["centred"] = False
    text = text_of(uncentred)
    assert "median of their draws" not in text
    assert f"; {intervals.WIDENING}. " in text
    assert "median of their draws" not in tables_of(uncentred)["agreement"].caption


# --- 5. the agreement figure draws what its caption says -------------------------------------


def dashed_rows(figure: figures.Figure) -> set[int]:
    """The row positions the drawn figure's dashed marks cross."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    canvas, axes = pyplot.subplots()
    try:
        positions = list(range(len(figure.rows)))[::-1]
        figures._plot(axes, figure, figure.rows)
        dashed = [line for line in axes.lines if line.get_linestyle() == "--"]
        crossed = set()
        for line in dashed:
            ys = np.asarray(line.get_ydata(), dtype=float)
            low, high = float(ys.min()), float(ys.max())
            crossed |= {p for p in positions if low <= p <= high}
        return crossed
    finally:
        pyplot.close(canvas)


def test_the_agreement_figure_marks_unreliable_rows_and_draws_alphas_marks_on_alpha(
    demo_numbers: dict[str, Any],
) -> None:
    figure = figures.agreement_figure(demo_numbers["audit"])
    coefficients = [
        c
        for q in demo_numbers["audit"]["agreement"]
        for key in AGREEMENT_KEYS[q["kind"]]
        for c in q["coefficients"]
        if c["key"] == key
    ]
    assert any(c["reliable"] is False for c in coefficients)
    for row, coefficient in zip(figure.rows, coefficients, strict=True):
        assert row.marked is coefficient["key"].startswith("alpha")
        if coefficient["reliable"] is False:
            assert row.label.endswith(" (unreliable)")
            assert (row.low, row.high) == (None, None)
        else:
            assert (row.low, row.high) == (coefficient["ci_low"], coefficient["ci_high"])
    assert "with 95% intervals (Bayesian bootstrap with a weak prior" in figure.caption
    assert "The rows marked (unreliable) show their estimate alone" in figure.caption
    assert "Dashed marks on the alpha rows at 0.667 and 0.800" in figure.caption
    assert "do not apply to AC1 or AC2" in figure.caption
    positions = list(range(len(figure.rows)))[::-1]
    alpha_rows = {p for p, row in zip(positions, figure.rows, strict=True) if row.marked}
    assert dashed_rows(figure) == alpha_rows


def test_without_resamples_the_figure_says_no_interval_was_computed(finished: Campaign) -> None:
    audit = paper_numbers(finished, campaign_audit(finished, resamples=0))["audit"]
    figure = figures.agreement_figure(audit)
    assert all(row.low is None and row.high is None for row in figure.rows)
    assert "No interval was computed (no resamples were drawn)" in figure.caption
    assert "% intervals" not in figure.caption
    assert not any(row.label.endswith("(unreliable)") for row in figure.rows)


# --- 6. the sample's sizing from its plan -----------------------------------------------------


def planned(targets: sampling.PlanTargets) -> dict[str, Any]:
    """The paper's numbers of a planned sample for ``targets``, piloted."""
    campaign = create_campaign(planned_dataset(), "planned", k=1, sample_targets=targets, seed=2)
    pilot(campaign, {"fitness": 5, "cooking": 5})
    return paper_numbers(campaign, campaign_audit(campaign, resamples=0))


def replanned_sizes(numbers: dict[str, Any]) -> dict[str, int]:
    """What the sentence tells a reader to do: plan each category's size from the plan's
    targets, with the interval the estimate is reported with."""
    plan = numbers["audit"]["sample_estimate"]["plan"]
    populations = {row["category"]: row["population"] for row in plan["categories"]}
    targets = sampling.PlanTargets(**plan["targets"])
    return sampling.plan_sample(populations, targets, plan["k"]).sizes()


def sampled_sizes(numbers: dict[str, Any]) -> dict[str, int]:
    estimate = numbers["audit"]["sample_estimate"]
    return {row["category"]: row["sampled"] for row in estimate["per_category"]}


def test_a_sample_sized_per_category_says_so(db: None) -> None:
    numbers = planned(TARGETS)
    text = text_of(numbers)
    assert (
        "are a stratified random sample of the dataset's 300, drawn without replacement within "
        "each category (Cochran, 1977); each category's size is the smallest whose interval, as "
        "the estimate reports it, reaches a half-width of 15.0 percentage points, when 90.0% of "
        "the pairs are validated;"
    ) in text
    assert replanned_sizes(numbers) == sampled_sizes(numbers)
    # Cochran's normal-approximation size is not what the plan used: it falls short here.
    assert sampling.cochran_size(200, 0.15, 0.9) < sampled_sizes(numbers)["fitness"]


def test_a_sample_sized_for_the_overall_half_width_is_allocated_in_proportion(db: None) -> None:
    targets = sampling.PlanTargets(half_width=0.1, expected_share=0.9)
    numbers = planned(targets)
    text = text_of(numbers)
    assert (
        "; the sample is the smallest allocated in proportion to the categories' sizes whose "
        "interval, as the estimate reports it, reaches a half-width of 10.0 percentage points "
        "overall, when 90.0% of the pairs are validated;"
    ) in text
    assert "each category's size" not in text
    assert "planned half-width" not in text
    sizes = sampled_sizes(numbers)
    assert replanned_sizes(numbers) == sizes
    populations = {"fitness": 200, "cooking": 100}
    assert any(
        sampling.proportional_allocation(populations, total) == sizes for total in range(1, 301)
    )


# --- 7. what the model annotator judged, from its counts --------------------------------------


def test_a_model_on_the_campaigns_pairs_only_is_said_to_add_nothing(db: None) -> None:
    """The default ``--as-annotator`` run answers the campaign's pairs: M = n, and the
    prediction-powered estimate is the humans-only one. Page, text report and paper say so."""
    dataset = planned_dataset()
    campaign = create_campaign(dataset, "planned", k=1, sample_targets=TARGETS, seed=2)
    pilot(campaign, {"fitness": 12, "cooking": 10})
    simulate_model_annotator(
        campaign, truth(dataset), accuracy=0.9, seed=1, pairs=campaign_pairs(campaign)
    )
    report = campaign_audit(campaign, resamples=0)
    overall = report["ppi"]["overall"]
    assert overall["model_pairs"] == overall["sample_pairs"] < overall["population"] == 300
    assert overall["ppi"]["share"] == pytest.approx(overall["humans_only"]["share"])
    coverage = audit_report.model_coverage(report)
    assert coverage is not None
    assert (coverage.reach, coverage.adds_nothing) == ("decided", True)
    n = overall["sample_pairs"]
    numbers = paper_numbers(campaign, report)
    text = text_of(numbers)
    judged = f"judged only the {n} pairs the humans decided, of the dataset's 300"
    assert f"A model annotator {judged};" in text
    assert "judged all" not in text
    nothing = "the prediction-powered estimate is the humans-only one: it adds nothing over the"
    assert nothing in text
    caption = tables_of(numbers)["ppi"].caption
    assert f"verdicts on only the {n} pairs the humans decided" in caption
    assert nothing in caption
    page = audit_report.render_html(report)
    assert 'data-reach="decided"' in page
    assert f"It judged only the {n} pairs the humans decided" in page
    assert "adds nothing over the sample" in page
    assert f"the model judged {n} of 300 pairs: the estimate with the model is the humans-only" in (
        audit_report.render_text(report)
    )


def test_a_model_on_the_whole_dataset_is_said_to_have_judged_it_all(
    planned_at_90: Campaign,
) -> None:
    report = campaign_audit(planned_at_90, resamples=0)
    coverage = audit_report.model_coverage(report)
    assert coverage is not None
    assert (coverage.reach, coverage.adds_nothing) == ("all", False)
    numbers = paper_numbers(planned_at_90, report)
    assert "A model annotator judged all 300 pairs of the dataset;" in text_of(numbers)
    assert "adds nothing" not in text_of(numbers)
    assert "verdicts on all 300 pairs of the dataset" in tables_of(numbers)["ppi"].caption
    page = audit_report.render_html(report)
    assert 'data-reach="all"' in page
    assert "It judged all 300 pairs of the dataset" in page
    assert "adds nothing" not in page


@pytest.mark.parametrize(
    ("model_pairs", "reach", "words"),
    [
        (30, "decided", "only the 30 pairs the humans decided, of the dataset's 300"),
        (
            40,
            "sample",
            "40 of the dataset's 300 pairs, no more than the humans' sample of 40 holds",
        ),
        (120, "part", "120 of the dataset's 300 pairs"),
        (300, "all", "all 300 pairs of the dataset"),
    ],
)
def test_the_model_is_said_to_have_judged_what_its_counts_say(
    model_pairs: int, reach: str, words: str
) -> None:
    audit = {
        "ppi": {
            "covers_sample": True,
            "overall": {"population": 300, "model_pairs": model_pairs, "sample_pairs": 30},
        },
        "sample_estimate": {"overall": {"sampled": 40}},
    }
    coverage = audit_report.model_coverage(audit)
    assert coverage is not None
    assert coverage.reach == reach
    assert protocol.model_reach(audit) == words
    gain = protocol.model_gain(audit)
    assert bool(gain) is (reach in ("decided", "sample"))
    if reach == "sample":
        assert "adds next to nothing over the humans-only one" in gain


def test_a_sample_with_both_targets_takes_the_larger_size_per_category(db: None) -> None:
    numbers = planned(
        sampling.PlanTargets(half_width=0.1, category_half_width=0.15, expected_share=0.9)
    )
    assert (
        "; each category's size is the larger of the smallest whose interval, as the estimate "
        "reports it, reaches a half-width of 15.0 percentage points within the category and its "
        "part of the smallest allocation in proportion to the categories' sizes whose overall "
        "interval reaches 10.0 points, when 90.0% of the pairs are validated;"
    ) in text_of(numbers)
    assert replanned_sizes(numbers) == sampled_sizes(numbers)
