"""Simulated annotators: each behaviour answers as documented, the driver goes through the real
queue and submit to a finished campaign, and the demo's simulated campaign comes out of the
audit as its behaviours predict, the same on every run."""

import random
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from prb_annotate.audit.campaign_audit import campaign_audit, campaign_verdicts
from prb_annotate.audit.exclusions import campaign_quality
from prb_annotate.campaigns.annotating import Answers
from prb_annotate.campaigns.leaderboard import campaign_leaderboard
from prb_annotate.management.commands.demo_setup import (
    BASELINES,
    DEMO_GUIDELINES,
    DEMO_PAY,
    KOREAN_CAMPAIGN,
)
from prb_annotate.models import (
    Annotation,
    Assignment,
    Campaign,
    CampaignItem,
    Dataset,
    EvaluationRun,
)
from prb_annotate.simulation.behaviours import Behaviour, Pairing, respond, sound_answer
from prb_annotate.simulation.demo import (
    MODEL_ACCURACY,
    PLANNED_CAMPAIGN,
    SIMULATED_CAMPAIGN,
    create_planned_campaign,
    create_simulated_campaign,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CRITERIA = ("correctness", "relevance", "helpfulness")
POOR_REJECTED = Answers(
    quality_chosen=dict.fromkeys(CRITERIA, 5),
    quality_rejected=dict.fromkeys(CRITERIA, 1),
    rubric_fit="chosen",
    differentiator="quality",
    confidence="high",
)


def responses(behaviour: Behaviour, expected: Answers, pairing: Pairing, count: int = 200):
    return [respond(behaviour, expected, pairing, random.Random(seed)) for seed in range(count)]


def test_it_answers_carefully_on_the_right_side_of_the_threshold():
    for response in responses(Behaviour.CAREFUL, POOR_REJECTED, Pairing("A", 10, 10)):
        answers = response.answers
        assert all(rating >= 4 for rating in answers.quality_chosen.values())
        assert all(rating <= 3 for rating in answers.quality_rejected.values())
        assert (answers.rubric_fit, answers.differentiator) == ("chosen", "quality")
        assert 40_000 <= response.time_on_task_ms < 241_000


def test_it_gives_each_failing_behaviour_its_documented_pattern():
    sound = sound_answer(CRITERIA)
    chosen_right = Pairing("B", chosen_length=10, rejected_length=30)

    left = responses(Behaviour.FAVOURS_LEFT, sound, chosen_right)
    # The left answer is the rejected one here: naming A means answering "rejected".
    share_left = sum(r.answers.rubric_fit == "rejected" for r in left) / len(left)
    assert 0.75 < share_left < 0.95

    fast = responses(Behaviour.TOO_FAST, sound, chosen_right)
    assert all(r.time_on_task_ms < 10_000 for r in fast)
    assert all(set(r.answers.quality_rejected.values()) == {5} for r in fast)
    assert {r.answers.rubric_fit for r in fast} == {"chosen", "rejected", "tie"}

    gold = responses(Behaviour.FAILS_GOLD, sound, chosen_right)
    assert {(r.answers.differentiator, r.answers.rubric_fit) for r in gold} == {
        ("quality", "rejected")  # the longer answer
    }

    noisy = responses(Behaviour.NOISY, sound, chosen_right, count=400)
    changed = sum(
        (r.answers.rubric_fit, r.answers.differentiator) != ("chosen", "preference") for r in noisy
    )
    assert 0.2 < changed / len(noisy) < 0.4


@pytest.fixture
def demo_dataset(db: None) -> Dataset:
    from prb_annotate.datasets.importing import import_path

    return import_path(FIXTURES / "prb_demo.jsonl", "prb-demo").dataset


def answers_of(campaign: Campaign) -> list[tuple]:
    """Every stored answer, in a form that does not depend on row ids."""
    rows = Annotation.objects.filter(assignment__campaign=campaign).values_list(
        "assignment__annotator__username",
        "assignment__item__pair__external_id",
        "assignment__chosen_position",
        "rubric_fit",
        "differentiator",
        "quality_chosen",
        "quality_rejected",
        "time_on_task_ms",
    )
    return sorted(
        (*row[:5], sorted(row[5].items()), sorted(row[6].items()), row[7]) for row in rows
    )


def test_it_finishes_the_demo_campaign_as_the_behaviours_predict(demo_dataset, manager):
    """Every regular pair gets its k answers (but those of the annotator who quits), through
    the real queue; the audit leaves out the one who fails gold, flags the left-leaning one's
    position bias, never validates a flawed pair, and validates most sound ones."""
    campaign = create_simulated_campaign(demo_dataset, manager, FIXTURES / "prb_demo_flaws.json")
    assert campaign.status == Campaign.Status.CLOSED
    assert "simulated" in campaign.name.lower()
    assert "Simulated campaign" in campaign.guidelines
    submitted = Assignment.objects.filter(campaign=campaign, status=Assignment.Status.SUBMITTED)
    assert {a.annotator.username for a in submitted} == {
        "simulated-careful-1",
        "simulated-careful-2",
        "simulated-noisy",
        "simulated-favours-left",
        "simulated-too-fast",
        "simulated-fails-gold",
    }
    assert all(not a.annotator.has_usable_password() for a in submitted)

    report = campaign_audit(campaign, resamples=0, dawid_skene=False)
    assert report["excluded_annotators"] == ["simulated-fails-gold"]
    by_name = {row["annotator"]: row for row in report["annotators"]}
    assert by_name["simulated-favours-left"]["position_p_value"] < 0.05
    # The dashboard marks what the README says the demo shows.
    marked = {row["annotator"]: row["outliers"] for row in campaign_quality(campaign)}
    assert "position_bias" in marked["simulated-favours-left"]
    assert by_name["simulated-too-fast"]["median_time_ms"] < 10_000
    assert by_name["simulated-careful-1"]["gold_accuracy"] == 1.0

    flawed = {"art-09", "art-13", "life-06", "life-11", "soc-04", "soc-12"}
    verdicts = {v.external_id: v.verdict for v in campaign_verdicts(campaign).values()}
    assert all(verdicts[pair] != "validated" for pair in flawed)
    sound = [pair for pair in verdicts if pair not in flawed]
    assert sum(verdicts[pair] == "validated" for pair in sound) > len(sound) / 2
    # Too few annotations only where the excluded annotator's answers no longer count.
    assert report["counts"]["undecided"] <= by_name["simulated-fails-gold"]["annotations"]


def test_it_sets_up_the_demo_once_with_an_evaluation(db):
    """demo_setup twice: the same five campaigns (the Korean one among them), one run of each
    built-in baseline with accuracy on validated and excluded pairs, a leaderboard whose models
    fall in more than one significance group, with the validated-against-excluded test, and the
    links it prints point at the address given."""
    out = StringIO()
    call_command("demo_setup", "--address", "127.0.0.1:8201", stdout=out)
    simulated = Campaign.objects.get(name=SIMULATED_CAMPAIGN)
    first = answers_of(simulated)
    call_command("demo_setup", "--address", "127.0.0.1:8201", stdout=StringIO())
    assert Campaign.objects.count() == 5
    korean = Campaign.objects.get(name=KOREAN_CAMPAIGN)
    assert (korean.language, korean.status) == ("ko", "active")
    assert korean.guidelines.startswith("## 응답 쌍을 평가하는 방법")
    assert korean.translations["en"]["guidelines"] == DEMO_GUIDELINES
    assert answers_of(simulated) == first
    runs = EvaluationRun.objects.filter(campaign=simulated)
    assert sorted(run.model_name for run in runs) == sorted(BASELINES)
    for run in runs:
        groups = run.summary["accuracy"]["by_group"]
        assert groups["validated"]["n"] > 0
        assert groups["excluded"]["n"] > 0
        assert run.summary["self_check"]["flips"] == 0
    board = campaign_leaderboard(simulated)
    everything = board.subset("all")
    assert everything is not None
    assert len({entry.group for entry in everything.entries}) > 1
    assert [test.p_value is not None for test in board.validated_vs_excluded] == [True] * 3
    printed = out.getvalue()
    assert "http://127.0.0.1:8201/" in printed
    assert ":8000" not in printed
    assert f"Campaign #{simulated.pk}" in printed
    assert f"manage.py audit --campaign {simulated.pk} --format latex --out out/paper/" in printed
    # Every link printed is a full URL on the address given.
    links = re.findall(r"\S*/(?:join|signup|completed)/\S*", printed)
    assert len(links) == 4
    assert f"/join/{korean.invite_token}/?" in printed
    assert all(link.startswith("http://127.0.0.1:8201/") for link in links), links
    planned = Campaign.objects.get(name=PLANNED_CAMPAIGN)
    assert f"Campaign #{planned.pk}" in printed
    others = [simulated.pk, planned.pk, korean.pk]
    demo = Campaign.objects.exclude(pk__in=others).get(external=False)
    assert demo.quota_per_annotator == 5
    # The demo study states its pay (settings page, Joining), as a paper should.
    assert (demo.pay_amount, demo.pay_currency, demo.pay_per) == tuple(DEMO_PAY.values())
    # The counts the README gives, as the dashboards count them.
    readme = " ".join((Path(__file__).parents[2] / "README.md").read_text().split())
    gold = simulated.items.filter(kind=CampaignItem.Kind.GOLD).count()
    regular = simulated.items.count() - gold
    assert f"count {demo.items.count()} items on #1, and {regular} items and {gold} gold" in readme
    assert demo.completion_url == "http://127.0.0.1:8201/completed/"


def test_the_planned_demo_campaign_shows_the_prediction_powered_estimate(demo_dataset, manager):
    """10 of each category's 14 pairs answered by simulated humans, a simulated model annotator
    of known accuracy on all 42: it agrees with the human verdicts on most sampled pairs, and
    its estimate sits beside the humans-only one in the audit, marked simulated."""
    campaign = create_planned_campaign(demo_dataset, manager, FIXTURES / "prb_demo_flaws.json")
    assert campaign.status == Campaign.Status.CLOSED
    assert campaign.items.count() == 30
    run = EvaluationRun.objects.get(campaign=campaign, mode="annotator")
    assert run.settings["simulated"] is True
    assert run.model_answers.values("pair").distinct().count() == 42
    section = campaign_audit(campaign, resamples=0)["ppi"]
    assert section["covers_sample"] is True
    overall = section["overall"]
    assert (overall["population"], overall["model_pairs"]) == (42, 42)
    assert 0 < overall["sample_pairs"] <= 30
    assert overall["agreement"] > MODEL_ACCURACY - 0.25
    assert overall["ppi"]["share"] is not None
    assert overall["ppi"]["half_width"] <= overall["humans_only"]["half_width"]
    # The simulated model keeps a confidence: the estimate on its probabilities is shown too.
    recalibrated = section["recalibrated"]
    assert recalibrated["available"] is True
    assert recalibrated["overall"]["sample_pairs"] == overall["sample_pairs"]
    assert recalibrated["overall"]["estimate"]["share"] is not None
