"""What the evaluations page says beside a run's figures: intervals from its counts, no
throughput for a built-in baseline, and a note when the audit has changed since the run."""

import re

import pytest
from django.urls import reverse

from evaluation.metrics import ACCURACY_INTERVAL_WORDS
from prb_annotate.audit import decisions
from prb_annotate.campaigns.evaluating import evaluate_campaign
from prb_annotate.models import Campaign, EvaluationRun
from tests.support.audit import add_item, annotate_all, annotators, make_campaign

VALID = {"fit": "chosen", "differentiator": "preference"}
REJECTED = {"fit": "rejected"}


@pytest.fixture
def campaign(dataset) -> Campaign:
    """Eight pairs: p0000-p0005 validated, p0006-p0007 excluded."""
    campaign = make_campaign(dataset, seed=5)
    raters = annotators(3)
    for index, pair in enumerate(dataset.pairs.order_by("external_id")[:8]):
        annotate_all(add_item(campaign, pair), raters, [VALID if index < 6 else REJECTED] * 3)
    return campaign


def run_section(page: str, run: EvaluationRun) -> str:
    found = re.search(rf'<section class="card run" id="run-{run.pk}">(.*?)</section>', page, re.S)
    assert found is not None
    return found.group(1)


def evaluations(client, campaign: Campaign) -> str:
    return client.get(reverse("campaign_evaluations", args=[campaign.pk])).content.decode()


def test_runs_with_the_same_counts_show_the_same_interval_and_a_baseline_no_throughput(
    campaign, manager, login
):
    few = evaluate_campaign(campaign, model="builtin:length", resamples=50)
    many = evaluate_campaign(campaign, model="builtin:length", resamples=400)
    model = EvaluationRun.objects.create(
        campaign=campaign,
        model_name="org/reward-model",
        settings={"resamples": 1000},
        summary={"run": {"pairs_per_second": 12.5}},
    )
    page = evaluations(login(manager), campaign)

    # Scored with 50 and with 400 resamples, the same counts give the same figures.
    def figures(run: EvaluationRun) -> str:
        section = re.sub(r"Run #\d+, [^.]*\.", "", run_section(page, run))
        section = re.sub(r"/runs/\d+/", "/runs/N/", section)
        section = re.sub(r'<span class="run-name">[^<]*</span>', "", section)
        section = re.sub(r'name="name" value="[^"]*"', "", section)
        return section.replace(f"run-{run.pk}", "")

    # The words and the level come from the rows that carry the interval.
    assert f"Intervals here: {ACCURACY_INTERVAL_WORDS}, at 95%" in run_section(page, few)
    assert figures(few) == figures(many)
    assert "pairs/s" not in run_section(page, few)
    assert "a built-in baseline" in run_section(page, few)
    assert "12.5 pairs/s" in run_section(page, model)
    assert "run-stale" not in page


def test_a_run_says_when_the_audit_has_changed_since(campaign, manager, login):
    run = evaluate_campaign(campaign, model="builtin:length", resamples=0)
    client = login(manager)
    assert "run-stale" not in evaluations(client, campaign)
    item = campaign.items.get(pair__external_id="p0006")
    decisions.adjudicate(item, "validated", "adjudicator_judgement", note="", by=manager)
    section = run_section(evaluations(client, campaign), run)
    note = re.search(r'<p class="warn run-stale" role="note">(.*?)</p>', section, re.S)
    assert note is not None
    text = " ".join(note.group(1).split())
    assert "1 of its pairs is now in the other subset" in text
    assert "validated 7 / excluded 1" in text
    # The figures themselves stay as scored: 6 validated, 2 excluded.
    assert re.search(r'<tr class="subset-validated"><td>validated</td><td class="num">6<', section)
    # Withdrawn, the run is current again.
    decisions.adjudicate(item, "withdrawn", "adjudicator_judgement", note="", by=manager)
    assert "run-stale" not in evaluations(client, campaign)
