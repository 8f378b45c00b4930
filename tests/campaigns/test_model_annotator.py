"""A language model as a pseudo-annotator: ``manage.py evaluate --judge --as-annotator`` stores
its answers apart from the humans', the audit compares them, and no human statistic moves.

The models are tiny scripted causal LMs (tests/support/tiny.py) that always reply one word,
so every answer is known before the run.
"""

from io import StringIO
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from prb_annotate.audit import model_agreement
from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.models import Annotation, Campaign, Dataset, EvaluationRun, ModelAnswer
from tests.support import tiny
from tests.support.audit import add_item, annotate_all, annotators, make_campaign

VALID = {"fit": "chosen", "differentiator": "preference"}
QUALITY = {"fit": "chosen", "differentiator": "quality"}


def scripted(folder: Path, word: str) -> Path:
    tokenizer = tiny.make_tokenizer()
    tokenizer.add_tokens([word])
    return tiny.save(tiny.scripted_judge(tokenizer, word), tokenizer, folder / word)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("annotator-models")
    return {word: scripted(folder, word) for word in ("A", "preference")}


@pytest.fixture
def campaign(dataset: Dataset) -> Campaign:
    """Four pairs, three annotators: p0000-p0002 all say preference, p0003 all say quality."""
    campaign = make_campaign(dataset)
    raters = annotators(3)
    for index, pair in enumerate(dataset.pairs.order_by("external_id")[:4]):
        answers = VALID if index < 3 else QUALITY
        annotate_all(add_item(campaign, pair), raters, [answers] * 3)
    return campaign


def human_figures(campaign: Campaign) -> tuple:
    report = campaign_audit(campaign, resamples=0)
    return report["agreement"], report["verdicts"], report["counts"], report["annotators"]


def evaluate(campaign: Campaign, model: Path, *extra: str) -> str:
    out = StringIO()
    call_command(
        "evaluate",
        f"--campaign={campaign.pk}",
        f"--model={model}",
        "--judge",
        "--as-annotator",
        *extra,
        stdout=out,
    )
    return out.getvalue()


def test_it_stores_the_model_apart_and_leaves_the_human_figures_alone(campaign, models):
    before = human_figures(campaign)
    annotations = Annotation.objects.count()
    output = evaluate(campaign, models["preference"])
    run = EvaluationRun.objects.get(campaign=campaign)
    assert run.mode == "annotator"
    # Four pairs x two questions x two orders, none of them an Annotation.
    assert ModelAnswer.objects.filter(run=run).count() == 16
    assert Annotation.objects.count() == annotations
    assert human_figures(campaign) == before
    assert "differentiator  replies 8, parsed 8, unparsed 0" in output
    assert "rubric_fit      replies 8, parsed 0, unparsed 8" in output


def test_it_keeps_the_models_probability_beside_its_answer(campaign, models):
    """The model always begins with "preference": its probability among the differentiator's
    choices is all but 1 and is stored beside each differentiator answer; its rubric-fit
    replies begin with no letter, so they keep none."""
    evaluate(campaign, models["preference"])
    stored = ModelAnswer.objects.filter(run__campaign=campaign)
    differentiator = list(
        stored.filter(question="differentiator").values_list("probability", flat=True)
    )
    assert len(differentiator) == 8
    assert all(value is not None and value > 0.999 for value in differentiator)
    assert set(stored.filter(question="rubric_fit").values_list("probability", flat=True)) == {None}


def test_it_asks_the_whole_dataset_when_told(campaign, models):
    """--whole-dataset: the dataset's 12 pairs, not only the campaign's 4; the comparison with
    the humans still reads the campaign's pairs alone."""
    evaluate(campaign, models["preference"], "--whole-dataset")
    run = EvaluationRun.objects.get(campaign=campaign)
    assert run.settings["pairs"] == "dataset"
    assert run.model_answers.values("pair").distinct().count() == 12
    compared = campaign_audit(campaign, resamples=0)["model_annotators"][0]["questions"]
    assert {row["pairs_compared"] for row in compared} <= {0, 4}
    with pytest.raises(CommandError, match="--whole-dataset go with"):
        call_command(
            "evaluate",
            f"--campaign={campaign.pk}",
            f"--model={models['A']}",
            "--whole-dataset",
            stdout=StringIO(),
        )


def test_the_audit_compares_the_model_with_the_human_majority(campaign, models):
    evaluate(campaign, models["preference"])
    [run] = campaign_audit(campaign, resamples=0)["model_annotators"]
    by_question = {row["question"]: row for row in run["questions"]}
    differentiator = by_question["differentiator"]
    # The model says preference everywhere: right on three pairs, wrong on the quality one.
    assert differentiator["agrees_with_majority"]["count"] == 3
    assert differentiator["agrees_with_majority"]["total"] == 4
    assert differentiator["alpha_humans"] == pytest.approx(1.0)
    assert differentiator["alpha_with_model"] < 1.0
    # Every rubric-fit reply was unparsed: no pair has a model answer to compare.
    fit = by_question["rubric_fit"]
    assert fit["pairs_without_model_answer"] == 4
    assert fit["agrees_with_majority"]["total"] == 0
    assert run["replies"]["rubric_fit"]["unparsed"] == 8


def test_a_model_that_follows_the_position_has_no_consistent_answer(campaign, models):
    evaluate(campaign, models["A"])
    [run] = campaign_audit(campaign, resamples=0)["model_annotators"]
    fit = next(row for row in run["questions"] if row["question"] == "rubric_fit")
    assert run["replies"]["rubric_fit"]["unparsed"] == 0
    assert fit["pairs_without_model_answer"] == 4
    assert fit["alpha_with_model"] == fit["alpha_humans"]


def test_the_pages_mark_the_model_annotator(campaign, models, manager, login):
    evaluate(campaign, models["preference"])
    client: Client = login(manager)
    audit = client.get(reverse("campaign_audit", args=[campaign.pk]) + "?resamples=0")
    assert 'id="model-agreement"' in audit.content.decode()
    assert "model annotator" in audit.content.decode()
    evaluations = client.get(reverse("campaign_evaluations", args=[campaign.pk])).content.decode()
    assert 'id="model-annotators"' in evaluations
    assert 'class="num unparsed">8<' in evaluations
    # The annotator run is not listed among the reward models.
    assert 'class="card run"' not in evaluations
    pair = campaign.items.order_by("pair__external_id").first().pair
    page = client.get(reverse("pair_detail", args=[pair.dataset_id, pair.pk])).content.decode()
    assert page.count('class="human-answer"') == 3
    assert page.count('class="model-answer"') == 4
    # The campaign's own pair page shows them apart from the human annotations.
    campaign_page = client.get(reverse("campaign_pair", args=[campaign.pk, pair.pk])).content
    assert 'id="model-answers"' in campaign_page.decode()
    assert campaign_page.decode().count('class="model-answer"') == 4
    text = StringIO()
    call_command("audit", f"--campaign={campaign.pk}", "--resamples=0", stdout=text)
    assert "Model annotator" in text.getvalue()


def test_it_refuses_without_judge_or_with_a_bad_template(campaign, models, tmp_path):
    with pytest.raises(CommandError, match="needs --judge"):
        call_command(
            "evaluate",
            f"--campaign={campaign.pk}",
            f"--model={models['A']}",
            "--as-annotator",
            stdout=StringIO(),
        )
    bad = tmp_path / "bad.txt"
    bad.write_text("[rubric_fit]\n{rubric}\n[differentiator]\nwhy\n")
    with pytest.raises(CommandError, match="unknown placeholder"):
        evaluate(campaign, models["A"], f"--template={bad}")
    assert not EvaluationRun.objects.exists()


def test_the_comparison_uses_both_orders_and_the_majority_rule() -> None:
    """A worked example: three coders on three pairs; the model is consistent on two."""
    humans = pd.DataFrame(
        {
            "pair_id": [1, 1, 1, 2, 2, 2, 3, 3, 3],
            "annotator": ["a", "b", "c"] * 3,
            "rubric_fit": ["chosen"] * 3 + ["chosen", "rejected", "rejected"] + ["tie"] * 3,
            "differentiator": ["preference"] * 9,
        }
    )
    answers = model_agreement.answers_frame(
        [
            (1, "rubric_fit", "A", "chosen"),
            (1, "rubric_fit", "B", "chosen"),
            (2, "rubric_fit", "A", "chosen"),
            (2, "rubric_fit", "B", "chosen"),
            (3, "rubric_fit", "A", "chosen"),
            (3, "rubric_fit", "B", ""),
        ]
    )
    result = model_agreement.compare_question(humans, answers, "rubric_fit", 0.5)
    # Pair 3 has an unparsed reply; pair 2's majority is "rejected" (2 of 3).
    assert result["pairs_without_model_answer"] == 1
    assert result["agrees_with_majority"]["count"] == 1
    assert result["agrees_with_majority"]["total"] == 2
    # Alpha against the reference implementation (the krippendorff package), for the humans
    # alone and with the model's consistent answers as a fourth coder.
    codes = {"chosen": 0, "rejected": 1, "tie": 2}
    matrix = np.array(
        [[codes[v] for v in humans[humans.annotator == a].rubric_fit] for a in "abc"], dtype=float
    )
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert result["alpha_humans"] == pytest.approx(expected)
    with_model = np.vstack([matrix, [[0, 0, np.nan]]])
    expected_with = krippendorff.alpha(reliability_data=with_model, level_of_measurement="nominal")
    assert result["alpha_with_model"] == pytest.approx(expected_with)


def test_an_annotator_cannot_see_the_model_annotator(campaign, models):
    evaluate(campaign, models["A"])
    client = Client()
    client.force_login(User.objects.create(username="eve"))
    assert client.get(reverse("campaign_evaluations", args=[campaign.pk])).status_code == 404
