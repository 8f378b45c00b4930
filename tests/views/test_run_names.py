"""Reward-model runs have names and can be managed: ``evaluate --name``, a name editable on the
evaluations page, duplicates refused or suffixed, random weights marked, a run removed (kept as
history) and put back, and the runs chosen deciding what the leaderboard and the paper show."""

import io
import json
import zipfile
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.tiny import write_tiny_reward_model
from prb_annotate.campaigns.evaluating import evaluate_campaign
from prb_annotate.campaigns.leaderboard import campaign_leaderboard
from prb_annotate.campaigns.run_names import RunNameError, default_name, rename_run
from prb_annotate.management.commands.demo_setup import BASELINES
from prb_annotate.models import Campaign, EvaluationRun
from prb_annotate.paper import tables
from prb_annotate.simulation.demo import SIMULATED_CAMPAIGN


@pytest.fixture
def simulated(db: None) -> Campaign:
    """The demo's campaign answered by simulated annotators and scored by three baselines."""
    call_command("demo_setup", stdout=StringIO())
    return Campaign.objects.get(name=SIMULATED_CAMPAIGN)


def evaluate(campaign: Campaign, *extra: str) -> str:
    out = StringIO()
    call_command("evaluate", "--campaign", str(campaign.pk), *extra, stdout=out)
    return out.getvalue()


def paper_numbers_of(campaign: Campaign, folder: Path, *extra: str) -> dict[str, Any]:
    call_command(
        "audit",
        "--campaign",
        str(campaign.pk),
        "--format",
        "markdown",
        "--out",
        str(folder),
        "--resamples",
        "0",
        *extra,
        stderr=StringIO(),
    )
    return json.loads((folder / "numbers.json").read_text())


def test_a_default_name_is_never_a_path() -> None:
    assert default_name("/home/someone/models/rm-8b") == "rm-8b"
    assert default_name("/home/someone/models/rm-8b/") == "rm-8b"
    assert default_name("~/rm") == "rm"
    assert default_name("builtin:length") == "builtin:length"
    assert default_name("org/reward-model") == "org/reward-model"  # a hub id


def test_the_demos_paper_lists_three_named_baselines_after_a_rerun(
    simulated: Campaign, tmp_path: Path
) -> None:
    """A re-run of a baseline takes a suffixed name and replaces the earlier run in the
    default leaderboard: three models, no duplicate, no path."""
    printed = evaluate(simulated, "--model", "builtin:length")
    rerun = EvaluationRun.objects.filter(campaign=simulated).latest("pk")
    assert rerun.name == "builtin:length (run 2)"
    assert "named 'builtin:length (run 2)'" in printed
    numbers = paper_numbers_of(simulated, tmp_path / "paper")
    board = numbers["leaderboard"]
    assert sorted(board["models"]) == sorted(
        [*(name for name in BASELINES if name != "builtin:length"), "builtin:length (run 2)"]
    )
    found = {table.key: table for table in tables.all_tables(numbers)}
    models = [row[0] for row in found["leaderboard"].rows]
    assert len(models) == len(set(models)) == 3
    assert "/" not in json.dumps(board["runs"]).replace("\\/", "")
    paragraph = (tmp_path / "paper" / "methods.md").read_text()
    assert "We scored 3 reward models" in paragraph


def test_evaluate_name_is_kept_and_a_taken_name_is_refused_before_scoring(
    simulated: Campaign,
) -> None:
    before = EvaluationRun.objects.count()
    evaluate(simulated, "--model", "builtin:random", "--name", "Random baseline")
    assert EvaluationRun.objects.latest("pk").name == "Random baseline"
    with pytest.raises(CommandError, match="already has a run named 'Random baseline'"):
        evaluate(simulated, "--model", "builtin:length", "--name", "Random baseline")
    with pytest.raises(CommandError, match="looks like a path on the server"):
        evaluate(simulated, "--model", "builtin:length", "--name", "/home/me/rm")
    assert EvaluationRun.objects.count() == before + 1


def test_a_random_weight_model_is_marked_and_named_by_its_folder(
    simulated: Campaign, tmp_path: Path
) -> None:
    folder = tmp_path / "home" / "someone" / "tiny-rm"
    write_tiny_reward_model(folder)
    run = evaluate_campaign(simulated, model=str(folder), resamples=0)
    assert run.name == "tiny-rm"
    assert run.random_weights
    board = campaign_leaderboard(simulated, run_ids=[run.pk]).as_dict()
    assert list(board["models"]) == ["tiny-rm (random weights)"]
    assert str(tmp_path) not in json.dumps(board)


def test_the_runs_option_decides_what_the_paper_ranks(simulated: Campaign, tmp_path: Path) -> None:
    runs = {run.model_name: run.pk for run in EvaluationRun.objects.filter(campaign=simulated)}
    chosen = [runs["builtin:length"], runs["builtin:random"]]
    numbers = paper_numbers_of(simulated, tmp_path / "paper", "--runs", ",".join(map(str, chosen)))
    assert sorted(numbers["leaderboard"]["models"]) == ["builtin:length", "builtin:random"]
    with pytest.raises(CommandError, match="--runs: not a reward-model run of this campaign: 999"):
        paper_numbers_of(simulated, tmp_path / "bad", "--runs", "999")
    with pytest.raises(CommandError, match="run ids separated by commas"):
        paper_numbers_of(simulated, tmp_path / "bad", "--runs", "one")
    # A campaign without runs once printed its paper and ignored the runs asked for.
    unscored = Campaign.objects.filter(evaluation_runs__isnull=True).first()
    assert unscored is not None
    refused = f"--runs: not a reward-model run of this campaign: {chosen[0]}"
    with pytest.raises(CommandError, match=refused):
        paper_numbers_of(unscored, tmp_path / "unscored", "--runs", str(chosen[0]))


def test_the_page_renames_removes_and_puts_back_a_run(simulated: Campaign, login: Any) -> None:
    client = login(User.objects.get(username="manager"))
    runs = {run.model_name: run for run in EvaluationRun.objects.filter(campaign=simulated)}
    length, random = runs["builtin:length"], runs["builtin:random"]
    page = reverse("campaign_evaluations", args=[simulated.pk])

    rename = reverse("evaluation_run_rename", args=[simulated.pk, length.pk])
    answer = client.post(rename, {"name": "Length (characters)"}, follow=True)
    assert "is now named &#x27;Length (characters)&#x27;" in answer.content.decode()
    length.refresh_from_db()
    assert length.name == "Length (characters)"
    refused = client.post(rename, {"name": random.name}, follow=True).content.decode()
    assert "keeps its name" in refused
    length.refresh_from_db()
    assert length.name == "Length (characters)"
    with pytest.raises(RunNameError):
        rename_run(length, "   ")

    client.post(reverse("evaluation_run_remove", args=[simulated.pk, random.pk]))
    random.refresh_from_db()
    assert random.removed_at is not None  # kept, not deleted
    shown = client.get(page).content.decode()
    assert 'id="removed-runs"' in shown
    assert f'id="run-{random.pk}"' not in shown
    assert "builtin:random" not in campaign_leaderboard(simulated).models
    zipped = client.get(reverse("campaign_audit_paper", args=[simulated.pk]))
    archive = zipfile.ZipFile(io.BytesIO(zipped.content))
    numbers = json.loads(archive.read(f"{archive.namelist()[0].split('/')[0]}/numbers.json"))
    assert sorted(numbers["leaderboard"]["models"]) == [
        "Length (characters)",
        "builtin:profile-overlap",
    ]

    client.post(reverse("evaluation_run_restore", args=[simulated.pk, random.pk]))
    random.refresh_from_db()
    assert random.removed_at is None
    assert "builtin:random" in campaign_leaderboard(simulated).models
    chosen = client.get(reverse("campaign_audit_paper", args=[simulated.pk]), {"run": length.pk})
    archive = zipfile.ZipFile(io.BytesIO(chosen.content))
    numbers = json.loads(archive.read(f"{archive.namelist()[0].split('/')[0]}/numbers.json"))
    assert numbers["leaderboard"]["models"] == ["Length (characters)"]
    assert (
        client.get(reverse("campaign_audit_paper", args=[simulated.pk]), {"run": "x"}).status_code
        == 400
    )


def test_an_annotator_cannot_rename_or_remove(simulated: Campaign, login: Any) -> None:
    run = EvaluationRun.objects.filter(campaign=simulated).first()
    assert run is not None
    client = login(User.objects.get(username="alice"))
    rename = reverse("evaluation_run_rename", args=[simulated.pk, run.pk])
    assert client.post(rename, {"name": "mine"}).status_code == 404
    assert (
        client.post(reverse("evaluation_run_remove", args=[simulated.pk, run.pk])).status_code
        == 404
    )
    run.refresh_from_db()
    assert run.name != "mine"
    assert run.removed_at is None


def test_the_api_paper_takes_the_runs_to_rank(simulated: Campaign) -> None:
    """``GET /api/campaigns/{id}/audit/paper/?run=..`` ranks those runs, as the page's
    ``?run=`` and the command's ``--runs`` do; a run of no campaign of this one is a 400 naming
    the parameter."""
    from django.test import Client
    from rest_framework.authtoken.models import Token

    runs = {run.model_name: run.pk for run in EvaluationRun.objects.filter(campaign=simulated)}
    manager = User.objects.get(username="manager")  # the demo's
    token = Token.objects.create(user=manager).key
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    url = reverse("api_campaign_audit_paper", args=[simulated.pk])
    chosen: dict[str, list[int] | int] = {
        "run": [runs["builtin:length"], runs["builtin:random"]],
        "resamples": 0,
    }
    answer = client.get(url, chosen)
    assert answer.status_code == 200
    archive = zipfile.ZipFile(io.BytesIO(answer.content))
    (name,) = [entry for entry in archive.namelist() if entry.endswith("/numbers.json")]
    numbers = json.loads(archive.read(name))
    assert sorted(numbers["leaderboard"]["models"]) == ["builtin:length", "builtin:random"]
    refused = client.get(url, {"run": 999999, "resamples": 0})
    assert refused.status_code == 400
    assert "999999" in refused.json()["errors"]["run"][0]
