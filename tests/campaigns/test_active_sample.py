"""Active planned samples on the real database: drawn from a model annotator's probabilities
over the whole dataset, each item keeping its inclusion probability, the audit's estimate
inverse-probability weighted; through the library, the form, the API and the command."""

import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from prb_annotate.audit import ppi_designs, rule
from prb_annotate.audit.active_sample import SMALL_SAMPLES, SampleDesign
from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.audit.model_answers import run_probabilities
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.campaigns.planned_sample import SamplePlanError, extend_sample
from prb_annotate.campaigns.setting_fields import PLAN
from prb_annotate.exports.export import export_split
from prb_annotate.models import Campaign, CampaignItem, Dataset, EvaluationRun
from prb_annotate.simulation.model_annotator import simulate_model_annotator
from tests.support.audit import annotate
from tests.support.sampling import TARGETS, planned_dataset, truth

ACTIVE = SampleDesign("active")
TARGET = PlanTargets(category_half_width=0.15)
# Tight enough that every category draws the decided pairs the active estimate's interval needs
# (``active_sample.SMALL_SAMPLES``); TARGET's budgets fall short of them.
ESTIMATED = PlanTargets(category_half_width=0.08)


def paper_files(campaign: Campaign, folder: Path) -> Path:
    """The campaign's paper files, written by the audit command into ``folder``."""
    call_command(
        "audit",
        f"--campaign={campaign.pk}",
        "--format=latex",
        f"--out={folder}",
        "--resamples=0",
        stderr=StringIO(),
    )
    return folder


def answer_truthfully(prb: Dataset, campaign: Campaign) -> None:
    """One careful annotator answers every item of ``campaign`` as the truth says."""
    user = User.objects.create_user("careful")
    answers = truth(prb)
    for item in campaign.items.select_related("pair"):
        fit, differentiator = answers[item.pair.external_id]
        annotate(item, user, fit=fit, differentiator=differentiator)


@pytest.fixture
def prb(db: None) -> Dataset:
    return planned_dataset()


@pytest.fixture
def run(prb: Dataset) -> EvaluationRun:
    """A model annotator over every pair of the dataset, kept on a pilot campaign, surer where
    it is right (``simulation/model_annotator.py``)."""
    pilot = create_campaign(prb, "pilot", k=1, sample_targets=TARGETS, seed=5)
    return simulate_model_annotator(pilot, truth(prb), accuracy=0.8, seed=1)


@pytest.fixture
def staff(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create(username="manager", is_staff=True))
    return client


def drawn(campaign: Campaign) -> dict[str, float | None]:
    items = campaign.items.filter(kind=CampaignItem.Kind.REGULAR)
    return dict(items.values_list("pair__external_id", "inclusion_probability"))


def scores_by_category(prb: Dataset, run: EvaluationRun) -> dict[str, tuple[list[str], np.ndarray]]:
    """Each category's record ids (sorted) and the run's probabilities in that order."""
    probabilities = run_probabilities(run.pk)
    found: dict[str, list[tuple[str, float]]] = {}
    for pk, external_id, category in prb.pairs.values_list("pk", "external_id", "category"):
        found.setdefault(category, []).append((external_id, probabilities[pk]))
    return {
        c: ([i for i, _ in sorted(rows)], np.array([q for _, q in sorted(rows)]))
        for c, rows in found.items()
    }


def test_it_draws_each_pair_with_its_recorded_probability(prb: Dataset, run: EvaluationRun) -> None:
    campaign = create_campaign(
        prb, "active", k=1, sample_targets=TARGET, sample_design=ACTIVE, seed=7
    )
    pis = drawn(campaign)
    assert pis
    assert all(pi is not None and 0 < pi <= 1 for pi in pis.values())
    plan = campaign.sample_plan or {}
    design = plan["design"]
    assert (design["name"], design["floor"], design["run"]) == ("active", 0.4, run.pk)
    # The recorded probabilities are ppi_designs' for the plan's budget, floor included.
    for category, (ids, scores) in scores_by_category(prb, run).items():
        expected = ppi_designs.active_probabilities(scores, design["expected_pairs"][category], 0.4)
        assert expected.min() >= 0.4 * design["expected_pairs"][category] / len(ids) - 1e-12
        for external_id, pi in zip(ids, expected, strict=True):
            if external_id in pis:
                assert pis[external_id] == pytest.approx(pi)
    sizes = {row["category"]: row["pairs"] for row in plan["categories"]}
    items = campaign.items.filter(kind=CampaignItem.Kind.REGULAR)
    assert sum(sizes.values()) == items.count() == plan["pairs"]
    # It expects fewer human pairs than a uniform sample with the model's help, and than the
    # humans alone.
    compared = design["compared"]
    assert (
        compared["active"]["human_pairs"]
        <= compared["uniform"]["human_pairs"]
        <= compared["humans_only"]["human_pairs"]
    )
    # Same seed, same draw; the uniform planned sample keeps no probability.
    again = create_campaign(prb, "again", k=1, sample_targets=TARGET, sample_design=ACTIVE, seed=7)
    assert drawn(again) == pis
    other = create_campaign(prb, "other", k=1, sample_targets=TARGET, sample_design=ACTIVE, seed=8)
    assert set(drawn(other)) != set(pis)
    uniform = create_campaign(prb, "uniform", k=1, sample_targets=TARGET, seed=7)
    assert set(drawn(uniform).values()) == {None}
    assert "design" not in (uniform.sample_plan or {})


def test_pairs_the_model_is_unsure_of_are_drawn_more_likely(
    prb: Dataset, run: EvaluationRun
) -> None:
    campaign = create_campaign(prb, "active", k=1, sample_targets=TARGET, sample_design=ACTIVE)
    pis = {i: float(pi or 0) for i, pi in drawn(campaign).items()}
    probabilities = run_probabilities(run.pk)
    by_id = dict(prb.pairs.values_list("external_id", "pk"))
    spread = {i: ppi_designs.uncertainty([probabilities[by_id[i]]])[0] for i in pis}
    middle = float(np.median(list(spread.values())))
    unsure = [pis[i] for i, s in spread.items() if s > middle]
    sure = [pis[i] for i, s in spread.items() if s <= middle]
    assert unsure
    assert sure
    assert np.mean(unsure) > np.mean(sure)
    # And over the dataset a larger share of the unsure half is drawn than of the sure half.
    population = {i: ppi_designs.uncertainty([probabilities[pk]])[0] for i, pk in by_id.items()}
    cut = float(np.median(list(population.values())))
    unsure_half = [i for i, s in population.items() if s > cut]
    sure_half = [i for i, s in population.items() if s <= cut]
    drawn_share = [np.mean([i in pis for i in half]) for half in (unsure_half, sure_half)]
    assert drawn_share[0] > drawn_share[1]
    # The more uncertain of any two drawn pairs of a category has the larger probability.
    categories = dict(prb.pairs.values_list("external_id", "category"))
    for category in {"fitness", "cooking"}:
        ids = sorted((spread[i], pis[i]) for i in pis if categories[i] == category)
        assert [pi for _, pi in ids] == sorted(pi for _, pi in ids)


def test_the_audit_estimate_is_the_inverse_probability_weighted_one(
    prb: Dataset, run: EvaluationRun, staff: Client
) -> None:
    campaign = create_campaign(prb, "active", k=1, sample_targets=ESTIMATED, sample_design=ACTIVE)
    answer_truthfully(prb, campaign)
    report = campaign_audit(campaign, resamples=0)
    estimate = report["sample_estimate"]
    json.dumps(estimate, allow_nan=False)
    # ppi_designs' function on the same arrays gives the same numbers.
    pis = drawn(campaign)
    verdicts = {row["external_id"]: row["verdict"] for row in report["verdicts"]}
    strata = []
    design = (campaign.sample_plan or {})["design"]
    for category, (ids, scores) in sorted(scores_by_category(prb, run).items()):
        inclusion = ppi_designs.active_probabilities(
            scores, design["expected_pairs"][category], design["floor"]
        )
        positions = [i for i, pair in enumerate(ids) if pair in pis]
        for position in positions:
            inclusion[position] = pis[ids[position]]
        decided = [i for i in positions if verdicts[ids[i]] != rule.UNDECIDED]
        human = [int(verdicts[ids[i]] == rule.VALIDATED) for i in decided]
        strata.append(
            ppi_designs.ScoredStratum(
                category, scores, inclusion, np.array(decided), np.array(human)
            )
        )
    expected = ppi_designs.design_estimate(strata, 0.95)
    method = ppi_designs.METHODS[expected["method"]]
    assert method is ppi_designs.ACTIVE_PPI
    assert estimate["method"] == method.key
    assert (estimate["method_words"], estimate["citations"]) == (method.words, method.citations)
    overall = estimate["overall"]["share"]
    for key in ("share", "ci_low", "ci_high", "half_width"):
        assert overall[key] == pytest.approx(expected["overall"]["estimate"][key])
    for row, wanted in zip(estimate["per_category"], expected["per_category"], strict=True):
        assert row["share"]["share"] == pytest.approx(wanted["estimate"]["share"])
        assert row["share"]["method"] == wanted["estimate"]["method"]
    assert 0 <= overall["ci_low"] <= overall["share"] <= overall["ci_high"] <= 1
    # Shown under its own name on the page, in the text report and in the API; the uniform
    # sample's PPI section, which assumes a uniform draw, is not added.
    assert "ppi" not in report
    html = staff.get(reverse("campaign_audit", args=[campaign.pk]) + "?resamples=0")
    page = html.content.decode()
    assert 'id="sample-estimate-method"' in page
    assert method.citations.replace("&", "&amp;") in page
    assert 'id="extend-sample"' not in page
    out = StringIO()
    call_command("audit", f"--campaign={campaign.pk}", "--resamples=0", stdout=out)
    assert method.words in out.getvalue()
    api = staff.get(f"/api/campaigns/{campaign.pk}/audit/?resamples=0").json()
    assert api["sample_estimate"]["method"] == method.key
    assert api["sample_estimate"]["overall"]["share"]["share"] == pytest.approx(overall["share"])
    assert [row["withheld"] for row in estimate["per_category"]] == [None, None]


def test_a_tiny_budget_prints_no_interval_and_says_why(
    prb: Dataset, run: EvaluationRun, staff: Client, tmp_path: Path
) -> None:
    """TARGET's budgets are below the decided pairs the active estimate needs: the plan warns,
    and the audit withholds every interval, saying why on the page, in the JSON and the API,
    in the text report and in the paper."""
    minimum = SMALL_SAMPLES.minimum
    campaign = create_campaign(prb, "tiny", k=1, sample_targets=TARGET, sample_design=ACTIVE)
    budgets = (campaign.sample_plan or {})["design"]["expected_pairs"]
    assert all(budget < minimum for budget in budgets.values())
    dashboard = staff.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert f"fewer than the {minimum} decided human pairs" in dashboard
    answer_truthfully(prb, campaign)
    estimate = campaign_audit(campaign, resamples=0)["sample_estimate"]
    json.dumps(estimate, allow_nan=False)
    assert estimate["available"] is True
    for row in estimate["per_category"]:
        assert row["decided"] < minimum
        assert [row["share"][key] for key in ("share", "ci_low", "ci_high", "half_width")] == [
            None
        ] * 4
        assert f"{row['decided']} decided, at least {minimum} needed" in row["withheld"]
    overall = estimate["overall"]
    assert overall["share"]["ci_low"] is None
    assert overall["withheld"] == "no interval for category cooking, fitness"
    page = staff.get(reverse("campaign_audit", args=[campaign.pk]) + "?resamples=0")
    text = page.content.decode()
    assert 'id="sample-estimate-withheld"' in text
    assert f"at least {minimum} needed" in text
    api = staff.get(f"/api/campaigns/{campaign.pk}/audit/?resamples=0").json()
    api_rows = api["sample_estimate"]["per_category"]
    assert [row["withheld"] for row in api_rows] == [
        row["withheld"] for row in estimate["per_category"]
    ]
    assert api_rows[0]["share"]["ci_high"] is None
    out = StringIO()
    call_command("audit", f"--campaign={campaign.pk}", "--resamples=0", stdout=out)
    assert "No interval: too few human pairs drawn in this category" in out.getvalue()
    folder = paper_files(campaign, tmp_path / "paper")
    assert "validated share is not estimated" in (folder / "methods.tex").read_text()
    tables = "".join(path.read_text() for path in folder.glob("*.tex"))
    assert "No estimate for cooking, fitness" in tables


def test_it_refuses_without_a_usable_run_and_refuses_top_ups(prb: Dataset, staff: Client) -> None:
    with pytest.raises(SamplePlanError) as refused:
        create_campaign(prb, "active", k=1, sample_targets=TARGET, sample_design=ACTIVE)
    assert refused.value.field == "design"
    assert "--whole-dataset" in str(refused.value)
    body = {
        "dataset": prb.pk,
        "name": "active",
        "annotations_per_pair": 1,
        "sample_targets": {"category_half_width": 0.15, "design": "active"},
    }
    answer = staff.post("/api/campaigns/", json.dumps(body), content_type="application/json")
    assert answer.status_code == 400
    errors = answer.json()["errors"]
    assert "model-annotator run" in errors["sample_targets.design"][0]
    assert not Campaign.objects.filter(name="active").exists()
    # With a run, the same request draws actively; a top-up is refused, naming the design.
    pilot = create_campaign(prb, "pilot", k=1, sample_targets=TARGETS, seed=5)
    simulate_model_annotator(pilot, truth(prb), accuracy=0.8, seed=1)
    answer = staff.post("/api/campaigns/", json.dumps(body), content_type="application/json")
    assert answer.status_code == 201, answer.content
    created = Campaign.objects.get(pk=answer.json()["id"])
    assert answer.json()["sample_plan"]["design"]["name"] == "active"
    assert all(pi is not None for pi in drawn(created).values())
    with pytest.raises(SamplePlanError) as extended:
        extend_sample(created)
    assert extended.value.field == "design"
    top_up = staff.post(f"/api/campaigns/{created.pk}/extend-sample/")
    assert top_up.status_code == 400
    assert "cannot be extended" in top_up.json()["errors"]["design"][0]


def test_the_form_offers_it_and_draws_it(prb: Dataset, run: EvaluationRun, staff: Client) -> None:
    page = staff.get(reverse("campaign_create")).content.decode()
    assert 'name="plan_design"' in page
    assert 'value="active"' in page
    assert PLAN["floor"].default == ppi_designs.ACTIVE_FLOOR
    form = {
        "dataset": str(prb.pk),
        "name": "active form",
        "annotations_per_pair": "1",
        "reservation_minutes": "20",
        "seed": "3",
        "gold_rate": "0",
        "plan_category_half_width": "0.15",
        "plan_design": "active",
    }
    preview = staff.post(reverse("campaign_create"), {**form, "preview": "1"}).content.decode()
    assert 'id="plan-design"' in preview
    assert "Drawn actively" in preview
    staff.post(reverse("campaign_create"), form)
    campaign = Campaign.objects.get(name="active form")
    assert (campaign.sample_plan or {})["design"]["run"] == run.pk
    assert all(pi is not None for pi in drawn(campaign).values())
    dashboard = staff.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="sample-design"' in dashboard
    # Active without a target is refused on the field.
    refused = staff.post(
        reverse("campaign_create"),
        {**form, "name": "no target", "plan_category_half_width": ""},
    )
    assert "An active sample needs a target half-width." in refused.content.decode()


def test_the_command_draws_it_with_a_flag(prb: Dataset, run: EvaluationRun) -> None:
    out = StringIO()
    call_command(
        "create_campaign",
        "--dataset=prb",
        "--name=active command",
        "--k=1",
        "--category-half-width=0.15",
        "--active",
        "--seed=7",
        stdout=out,
    )
    campaign = Campaign.objects.get(name="active command")
    assert "Drawn actively" in out.getvalue()
    library = create_campaign(
        prb, "library", k=1, sample_targets=TARGET, sample_design=ACTIVE, seed=7
    )
    assert drawn(campaign) == drawn(library)


def test_the_export_manifest_records_the_design_and_each_pairs_probability(
    prb: Dataset, run: EvaluationRun, tmp_path: Path
) -> None:
    campaign = create_campaign(prb, "active", k=1, sample_targets=TARGET, sample_design=ACTIVE)
    answer_truthfully(prb, campaign)
    manifest = export_split(campaign, tmp_path / "validated", subset="validated")
    design = manifest["sample_design"]
    assert (design["design"], design["floor"], design["model_run"]) == ("active", 0.4, run.pk)
    verdicts = campaign_audit(campaign, resamples=0)["verdicts"]
    validated = {row["external_id"] for row in verdicts if row["verdict"] == rule.VALIDATED}
    pis = drawn(campaign)
    assert design["inclusion_probabilities"] == {i: pis[i] for i in sorted(validated)}
    written = json.loads((tmp_path / "validated" / "manifest.json").read_text())
    assert written["sample_design"] == design
    uniform = create_campaign(prb, "uniform", k=1, sample_targets=TARGET)
    assert "sample_design" not in export_split(uniform, tmp_path / "uniform", subset="all")


def test_the_paper_names_the_design_and_the_estimate(
    prb: Dataset, run: EvaluationRun, tmp_path: Path
) -> None:
    campaign = create_campaign(prb, "active", k=1, sample_targets=ESTIMATED, sample_design=ACTIVE)
    answer_truthfully(prb, campaign)
    folder = paper_files(campaign, tmp_path / "paper")
    methods = (folder / "methods.tex").read_text()
    assert "by active sampling" in methods
    assert "active prediction-powered interval" in methods
    assert "zrnic2024" in (folder / "references.bib").read_text()
