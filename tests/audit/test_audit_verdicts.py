"""Verdicts and reasons for constructed campaigns, read from the database."""

import json
import math
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from prb_annotate.audit import rule
from prb_annotate.audit.campaign_audit import (
    campaign_audit,
    campaign_verdicts,
    request_extra_annotations,
)
from prb_annotate.audit.frames import annotations_frame
from prb_annotate.models import Annotation, Assignment
from tests.support.audit import NOW, add_item, annotate, annotate_all, annotators, make_campaign

GOOD: dict[str, object] = {}  # all defaults: chosen fits, preference, 5s everywhere


@pytest.fixture
def raters(db):
    return annotators(5)


@pytest.fixture
def campaign(dataset):
    return make_campaign(dataset)


def item_for(campaign, index, **fields):
    pair = campaign.dataset.pairs.order_by("external_id")[index]
    return add_item(campaign, pair, **fields)


def verdict_of(campaign, item):
    return campaign_verdicts(campaign)[item.pair_id]


def test_it_validates_a_pair_that_passes_every_condition(campaign, raters):
    """k good annotations: validated, with the majorities and the medians reported."""
    item = item_for(campaign, 0)
    annotate_all(item, raters, [GOOD, GOOD, {"chosen": 4, "rejected": {"relevance": 3}}])
    verdict = verdict_of(campaign, item)
    assert verdict.verdict == "validated"
    assert verdict.reasons == ()
    assert verdict.n_annotations == 3
    assert verdict.external_id == "p0000"
    assert verdict.category == "Lifestyle"
    assert verdict.majority == {"rubric_fit": "chosen", "differentiator": "preference"}
    assert verdict.quality_medians["chosen"] == {
        "correctness": 5.0,
        "relevance": 5.0,
        "helpfulness": 5.0,
    }
    assert verdict.quality_medians["rejected"]["relevance"] == 5.0


def test_it_gives_every_exclusion_reason(campaign, raters):
    """Each failing condition excludes the pair with its own reason code."""
    cases: dict[str, list[Any]] = {
        "low_quality_chosen": [{"chosen": {"correctness": 2}}] * 2 + [GOOD],
        "low_quality_rejected": [{"rejected": 3}] * 2 + [GOOD],
        "differentiator_not_preference": [
            {"differentiator": "quality"},
            {"differentiator": "both"},
            GOOD,
        ],
        "differentiator_both": [{"differentiator": "both"}] * 2 + [GOOD],
        "label_disagrees": [{"fit": "rejected"}, {"fit": "rejected"}, GOOD],
        "label_tie": [{"fit": "tie"}, {"fit": "tie"}, GOOD],
        "flagged": [{"flagged": True}, {"flagged": True}, GOOD],
    }
    items = {}
    for index, (reason, answers) in enumerate(cases.items()):
        items[reason] = item_for(campaign, index)
        annotate_all(items[reason], raters, answers)
    verdicts = campaign_verdicts(campaign)
    for reason, item in items.items():
        assert verdicts[item.pair_id].verdict == "excluded", reason
        assert verdicts[item.pair_id].reasons == (reason,), reason


def test_it_lists_every_failing_reason_together(campaign, raters):
    """A pair failing several conditions carries all their reasons, in a fixed order."""
    item = item_for(campaign, 0)
    bad = {"chosen": 2, "rejected": 1, "differentiator": "quality", "fit": "rejected"}
    annotate_all(item, raters, [bad, bad, GOOD])
    assert verdict_of(campaign, item).reasons == (
        "low_quality_chosen",
        "low_quality_rejected",
        "differentiator_not_preference",
        "label_disagrees",
    )


def test_it_keeps_a_pair_undecided_until_it_has_k_annotations(campaign, raters):
    """Fewer than k annotations, or none at all: undecided, too_few_annotations."""
    partial = item_for(campaign, 0)
    empty = item_for(campaign, 1)
    annotate_all(partial, raters, [GOOD, GOOD])
    verdicts = campaign_verdicts(campaign)
    assert verdicts[partial.pair_id].verdict == "undecided"
    assert verdicts[partial.pair_id].reasons == ("too_few_annotations",)
    assert verdicts[empty.pair_id].verdict == "undecided"
    assert verdicts[empty.pair_id].reasons == ("too_few_annotations",)
    assert verdicts[empty.pair_id].n_annotations == 0
    assert verdicts[empty.pair_id].majority == {"rubric_fit": None, "differentiator": None}


def test_it_excludes_early_when_missing_annotations_cannot_save_the_pair(campaign, raters):
    """Two of three already flagged, or a median that stays below the threshold even if the
    missing rating were a 5: excluded now. One bad rating of two: still undecided."""
    flagged = item_for(campaign, 0)
    annotate_all(flagged, raters, [{"flagged": True}, {"flagged": True}])
    hopeless = item_for(campaign, 1)
    annotate_all(hopeless, raters, [{"chosen": 1}, {"chosen": 2}])
    open_ = item_for(campaign, 2)
    annotate_all(open_, raters, [{"chosen": 1}, GOOD])
    verdicts = campaign_verdicts(campaign)
    assert verdicts[flagged.pair_id].reasons == ("flagged",)
    assert verdicts[hopeless.pair_id].reasons == ("low_quality_chosen",)
    assert verdicts[open_.pair_id].verdict == "undecided"
    assert verdicts[open_.pair_id].reasons == ("too_few_annotations",)


def test_it_calls_an_even_split_undecided_and_asks_for_one_more_annotator(campaign, raters):
    """k + extra = 4 annotations split 2-2 on the rubric fit: undecided_split_vote; the request
    raises extra_annotations once, and again only after the new annotation is in."""
    item = item_for(campaign, 0, extra_annotations=1)
    annotate_all(item, raters, [GOOD, GOOD, {"fit": "rejected"}, {"fit": "tie"}])
    verdict = verdict_of(campaign, item)
    assert verdict.verdict == "undecided"
    assert verdict.reasons == ("undecided_split_vote",)
    assert verdict.majority["rubric_fit"] is None

    assert request_extra_annotations(campaign) == 1
    item.refresh_from_db()
    assert item.extra_annotations == 2
    assert item.target_annotations() == 5
    assert verdict_of(campaign, item).reasons == ("too_few_annotations",)
    assert request_extra_annotations(campaign) == 0
    item.refresh_from_db()
    assert item.extra_annotations == 2

    annotate(item, raters[4])
    assert verdict_of(campaign, item).verdict == "validated"  # 3 of 5 chose it
    assert request_extra_annotations(campaign) == 0


def test_it_treats_split_differentiator_and_flags_as_split_votes(dataset, raters):
    """With k = 2 a 1-1 split on any vote is undecided_split_vote."""
    campaign = make_campaign(dataset, annotations_per_pair=2)
    differentiator = item_for(campaign, 0)
    annotate_all(differentiator, raters, [GOOD, {"differentiator": "none", "fit": "tie"}])
    flags = item_for(campaign, 1)
    annotate_all(flags, raters, [GOOD, {"flagged": True}])
    verdicts = campaign_verdicts(campaign)
    assert verdicts[differentiator.pair_id].reasons == ("undecided_split_vote",)
    assert verdicts[flags.pair_id].reasons == ("undecided_split_vote",)
    assert request_extra_annotations(campaign) == 2


def test_it_uses_the_campaign_thresholds(dataset, raters):
    """A two-thirds majority threshold turns 2 of 3 into a split; a lower quality threshold
    validates what the default excludes."""
    strict = make_campaign(dataset, name="strict", majority_threshold=0.7)
    item = item_for(strict, 0)
    annotate_all(item, raters, [GOOD, GOOD, {"fit": "rejected"}])
    assert verdict_of(strict, item).reasons == ("undecided_split_vote",)

    lenient = make_campaign(dataset, name="lenient", quality_threshold=3.0)
    other = item_for(lenient, 1)
    annotate_all(other, raters, [{"chosen": 3}] * 3)
    assert verdict_of(lenient, other).verdict == "validated"

    one_criterion = make_campaign(dataset, name="single", quality_criteria=["correctness"])
    third = item_for(one_criterion, 2)
    annotate_all(third, raters, [{"rejected": {"relevance": 1}}] * 3)
    assert verdict_of(one_criterion, third).verdict == "validated"


def test_it_counts_only_current_revisions_of_submitted_assignments(campaign, raters):
    """An older revision and a reserved (unsubmitted) assignment do not count."""
    item = item_for(campaign, 0)
    first = annotate(item, raters[0], fit="rejected")
    Annotation.objects.filter(pk=first.pk).update(is_current=False)
    Annotation.objects.create(
        assignment=first.assignment,
        revision=2,
        quality_chosen=first.quality_chosen,
        quality_rejected=first.quality_rejected,
        rubric_fit="chosen",
        differentiator="preference",
        confidence="high",
        client_token="revision-2",
    )
    annotate_all(item, raters[1:3], [GOOD, GOOD])
    reserved = annotate(item, raters[3], fit="rejected")
    Assignment.objects.filter(pk=reserved.assignment_id).update(
        status=Assignment.Status.RESERVED, submitted_at=None
    )
    frame = annotations_frame(campaign)
    assert len(frame) == 3
    assert set(frame["rubric_fit"]) == {"chosen"}
    assert verdict_of(campaign, item).verdict == "validated"


def test_it_builds_the_annotations_frame_in_dataset_orientation(campaign, raters):
    """One row per current annotation; A/B derived from chosen_position; one column per
    criterion and side; lengths in characters."""
    item = item_for(campaign, 0)
    pair = item.pair
    annotate(item, raters[0], position="B", fit="chosen", chosen={"relevance": 4}, rejected=3)
    annotate(item, raters[1], position="B", fit="rejected", time_ms=1234, comment="meh")
    third = annotate(item, raters[2], position="A", fit="tie", flagged=True)
    # Times are read as UTC text: microseconds and other time zones must survive.
    answered = datetime(2026, 1, 5, 15, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
    Annotation.objects.filter(pk=third.pk).update(created_at=answered)
    frame = annotations_frame(campaign).set_index("annotator")
    for column in rule.FRAME_COLUMNS:
        assert column in frame.columns or column == "annotator"
    assert frame.loc["rater1", "rubric_fit_position"] == "B"
    assert frame.loc["rater2", "rubric_fit_position"] == "A"
    assert frame.loc["rater3", "rubric_fit_position"] == "tie"
    assert frame.loc["rater1", "quality_chosen_relevance"] == 4
    assert frame.loc["rater1", "quality_rejected_helpfulness"] == 3
    assert frame.loc["rater2", "time_on_task_ms"] == 1234
    assert frame.loc["rater2", "comment"] == "meh"
    assert bool(frame.loc["rater3", "flagged"]) is True
    assert frame.loc["rater1", "chosen_len"] == len(pair.chosen)
    assert frame.loc["rater1", "rejected_len"] == len(pair.rejected)
    assert frame.loc["rater1", "external_id"] == pair.external_id
    assert frame.loc["rater1", "item_kind"] == "regular"
    assert frame.loc["rater1", "annotator_id"] == raters[0].pk
    assert frame.loc["rater1", "submitted_at"] == NOW.replace(minute=1)
    assert frame.loc["rater3", "annotated_at"] == answered
    assert str(frame["annotated_at"].dt.tz) == "UTC"


def test_it_leaves_out_gold_items_and_annotators_below_the_gold_threshold(dataset, raters):
    """Gold items get no verdict but measure annotators; one below min_gold_accuracy is left
    out of the verdicts (here tipping a pair from excluded to validated)."""
    campaign = make_campaign(dataset, min_gold_accuracy=0.75)
    gold = [
        item_for(
            campaign,
            index,
            kind="gold",
            gold_answers={"rubric_fit": "chosen", "differentiator": "preference"},
        )
        for index in (5, 6)
    ]
    careless = raters[3]
    for item in gold:
        annotate_all(item, raters[:3], [GOOD] * 3)
        annotate(item, careless, fit="rejected")
    pair_item = item_for(campaign, 0)
    annotate_all(
        pair_item,
        [*raters[:2], careless, raters[2]],
        [GOOD, {"fit": "rejected"}, {"fit": "rejected"}, GOOD],
    )

    verdicts = campaign_verdicts(campaign)
    assert set(verdicts) == {pair_item.pair_id}
    assert verdicts[pair_item.pair_id].verdict == "validated"
    assert verdicts[pair_item.pair_id].n_annotations == 3

    report = campaign_audit(campaign, resamples=50)
    assert report["excluded_annotators"] == ["rater4"]
    rows = {row["annotator"]: row for row in report["annotators"]}
    assert rows["rater4"]["excluded"] is True
    assert (rows["rater4"]["gold_correct"], rows["rater4"]["gold_answered"]) == (0, 2)
    assert rows["rater1"]["gold_accuracy"] == 1.0
    assert report["counts"]["gold_items"] == 2

    campaign.min_gold_accuracy = None
    campaign.save()
    assert campaign_verdicts(campaign)[pair_item.pair_id].verdict == "undecided"  # 2-2 split


def test_it_reports_a_campaign_with_no_annotation(campaign):
    """Nothing annotated yet: every pair undecided, coefficients undefined, valid JSON."""
    for index in range(3):
        item_for(campaign, index)
    report = campaign_audit(campaign, resamples=20)
    assert report["counts"]["pairs"] == 3
    assert report["counts"]["undecided"] == 3
    assert report["validity"]["overall"]["validated_share"]["share"] is None
    assert all(
        coefficient["value"] is None
        for question in report["agreement"]
        for coefficient in question["coefficients"]
    )
    json.dumps(report, allow_nan=False)


def test_it_audits_a_campaign_end_to_end(campaign, raters):
    """A small mixed campaign: counts, reasons, agreement entries and annotator rows hold
    together, and the report is strict JSON."""
    answers_by_item: list[list[Any]] = [
        [GOOD, GOOD, GOOD],
        [GOOD, GOOD, {"fit": "rejected"}],
        [{"chosen": 2}, {"chosen": 2}, GOOD],
        [{"differentiator": "quality"}] * 3,
        [GOOD, GOOD],
    ]
    for index, answers in enumerate(answers_by_item):
        annotate_all(item_for(campaign, index), raters, answers)
    report = campaign_audit(campaign, resamples=200, seed=7)
    json.dumps(report, allow_nan=False)
    assert report["counts"]["validated"] == 2
    assert report["counts"]["excluded"] == 2
    assert report["counts"]["undecided"] == 1
    reasons = {row["reason"]: row["pairs"] for row in report["validity"]["reasons"]}
    assert reasons["low_quality_chosen"] == 1
    assert reasons["differentiator_not_preference"] == 1
    assert reasons["too_few_annotations"] == 1
    names = [question["question"] for question in report["agreement"]]
    assert names[:2] == ["rubric_fit", "differentiator"]
    assert "quality_rejected_helpfulness" in names
    fit = report["agreement"][0]
    keys = [coefficient["key"] for coefficient in fit["coefficients"]]
    assert keys == ["alpha_nominal", "ac1", "fleiss_kappa", "percent_agreement"]
    alpha = fit["coefficients"][0]
    assert alpha["ci_low"] <= alpha["value"] <= alpha["ci_high"]
    assert {row["annotator"] for row in report["annotators"]} == {"rater1", "rater2", "rater3"}
    assert report["validity"]["overall"]["validated_share"]["share"] == pytest.approx(0.5)
    assert not math.isnan(report["bias"]["position"]["share_a"]["share"])
    assert report["settings"]["seed"] == 7
    assert campaign_audit(campaign, resamples=200, seed=7) == report


def test_it_knows_the_answer_choices_of_the_model():
    """The pure audit's answer domains are the Annotation model's choices."""
    assert tuple(Annotation.RubricFit.values) == rule.RUBRIC_FIT
    assert tuple(Annotation.Differentiator.values) == rule.DIFFERENTIATOR


def test_it_reads_ratings_of_criteria_with_any_name(dataset, raters):
    """Criterion names are JSON keys, quoted in the database's JSON path: spaces, dots and
    non-ASCII letters (the admin allows more than the API's identifiers) read back like plain
    names; a missing rating is NaN."""
    criteria = ["tone & style", "a.b", "clarté"]
    campaign = make_campaign(dataset, name="odd names", quality_criteria=criteria)
    item = item_for(campaign, 0)
    rated = annotate(item, raters[0])
    Annotation.objects.filter(pk=rated.pk).update(
        quality_chosen={"tone & style": 4, "a.b": 3, "clarté": 1},
        quality_rejected={"tone & style": 5},
    )
    row = annotations_frame(campaign).iloc[0]
    assert [row[f"quality_chosen_{name}"] for name in criteria] == [4, 3, 1]
    assert row["quality_rejected_tone & style"] == 5
    assert math.isnan(row["quality_rejected_clarté"])
