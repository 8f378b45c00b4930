"""``manage.py evaluate --judge --as-annotator --judge-endpoint URL``: the model annotator asked
through an OpenAI-compatible endpoint (``transformers serve`` running a tiny causal LM built in
the test) stores the same answers as the same model loaded in process."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from prb_annotate.models import Campaign, Dataset, EvaluationRun, ModelAnswer
from tests.support import tiny
from tests.support.audit import add_item, make_campaign
from tests.support.serving import serve


@pytest.fixture(scope="module")
def judge(tmp_path_factory):
    """The scripted causal LM (it replies "... **Result:** B") and the URL it is served at."""
    folder = tmp_path_factory.mktemp("served-annotator")
    model = tiny.write_causal(folder / "judge")
    with serve(model, folder / "serve.log") as url:
        yield model, url


@pytest.fixture
def campaign(dataset: Dataset) -> Campaign:
    campaign = make_campaign(dataset)
    for pair in dataset.pairs.order_by("external_id")[:3]:
        add_item(campaign, pair)
    return campaign


def answers(run: EvaluationRun) -> list[tuple]:
    return list(
        ModelAnswer.objects.filter(run=run)
        .order_by("pair__external_id", "question", "chosen_position")
        .values_list("pair__external_id", "question", "chosen_position", "reply", "answer")
    )


def evaluate(campaign: Campaign, model: str, *extra: str) -> EvaluationRun:
    call_command(
        "evaluate",
        f"--campaign={campaign.pk}",
        f"--model={model}",
        "--judge",
        "--as-annotator",
        *extra,
        stdout=StringIO(),
    )
    return EvaluationRun.objects.filter(campaign=campaign).latest("pk")


def test_an_endpoint_answers_as_the_model_in_process(campaign, judge):
    model, url = judge
    local = evaluate(campaign, str(model))
    remote = evaluate(campaign, "served-judge", f"--judge-endpoint={url}")
    assert answers(remote) == answers(local)
    fits = {row[4] for row in answers(remote) if row[1] == "rubric_fit"}
    assert fits == {"chosen", "rejected"}  # it names B whichever answer is shown there
    assert remote.settings["endpoint"]["served_model"] == str(model)
    assert remote.settings["endpoint"]["url"] == url


def test_an_endpoint_serves_a_judge_only(campaign):
    with pytest.raises(CommandError, match="--judge-endpoint serves a judge"):
        call_command(
            "evaluate",
            f"--campaign={campaign.pk}",
            "--model=x",
            "--judge-endpoint=http://127.0.0.1:9/v1",
            stdout=StringIO(),
        )
