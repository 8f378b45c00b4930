"""Scoring in the background: the built-in baselines and a tiny model folder under
PRB_MODEL_ROOTS (with the command's options, from the evaluations page's form), scored by a real
worker and stored as runs; a path outside the roots refused; a Hub id the server cannot load
refused with the command's own message; bad options refused naming the option; one scoring job
per campaign at a time unless staff start another."""

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from prb_annotate.jobs.scoring import allowed_model
from prb_annotate.models import EvaluationRun, Job
from tests.conftest import make_user
from tests.jobs.test_jobs_worker import WAIT_LIMIT_S, campaign_of, worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def start(client: Client, campaign_id: int, **options: object) -> tuple[int, dict]:
    response = client.post(
        f"/api/campaigns/{campaign_id}/jobs/",
        {"kind": "score", "options": options},
        content_type="application/json",
    )
    return response.status_code, response.json()


def test_it_scores_baselines_and_a_model_folder_in_a_worker(
    manager: User, login, tmp_path: Path, settings
) -> None:
    roots = tmp_path / "models"
    (roots / "tiny").mkdir(parents=True)
    from evaluation.tiny import write_tiny_reward_model  # the worker loads it with torch

    write_tiny_reward_model(roots / "tiny")
    settings.PRB_MODEL_ROOTS = [str(roots)]
    lead = make_user("lead")  # manages the campaign, not staff
    campaign = campaign_of(lead, 5)
    staff = manager
    status, first = start(login(lead), campaign.pk, model="builtin:length")
    assert status == 202, first
    status, refused = start(login(lead), campaign.pk, model="builtin:random")
    assert status == 400
    assert "one score job runs at a time" in refused["errors"]["kind"][0]
    jobs = [first]
    for model in ("builtin:random", "builtin:profile-overlap"):
        status, job = start(login(staff), campaign.pk, model=model)
        assert status == 202, job
        jobs.append(job)
    # The tiny folder from the evaluations page's form, with some of the command's options.
    form = {"kind": "score", "model": str((roots / "tiny").resolve()), "subset": "all"}
    form |= {"name": "tiny-rm", "max_batch_tokens": "64", "label_index": "0", "seed": "3"}
    page = login(staff).post(f"/campaigns/{campaign.pk}/jobs/start/", form)
    assert page.status_code == 302, page.content
    tiny = Job.objects.get(pk=page.url.rstrip("/").rsplit("/", 1)[1])
    assert tiny.options["max_batch_tokens"] == 64
    assert tiny.options["name"] == "tiny-rm"
    jobs.append({"url": f"/api/jobs/{tiny.pk}/"})

    process = worker(tmp_path, "--batch", PRB_MODEL_ROOTS=str(roots))
    _, stderr = process.communicate(timeout=WAIT_LIMIT_S)
    assert process.returncode == 0, stderr

    for job in jobs:
        done = login(lead).get(job["url"]).json()
        assert (done["status"], done["done"], done["total"]) == ("done", 2, 2), done
        result = json.loads(b"".join(login(lead).get(done["file"]).streaming_content))
        assert EvaluationRun.objects.get(pk=result["run"]).model_name == result["model"]
    names = set(EvaluationRun.objects.values_list("model_name", flat=True))
    assert {"builtin:length", "builtin:random", "builtin:profile-overlap"} <= names
    assert len(names) == 4
    run = EvaluationRun.objects.get(name="tiny-rm")
    settings_used = run.summary["settings"]
    assert (settings_used["max_batch_tokens"], settings_used["label_index"]) == (64, 0)
    assert settings_used["seed"] == 3


def test_it_refuses_a_model_outside_the_roots(
    manager: User, login, tmp_path: Path, settings
) -> None:
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    settings.PRB_MODEL_ROOTS = [str(tmp_path / "models")]
    assert allowed_model("tiny") == str((tmp_path / "models" / "tiny").resolve())
    assert allowed_model(str(tmp_path / "models" / "tiny")).endswith("tiny")
    campaign = campaign_of(manager, 2)
    for model in (str(tmp_path / "elsewhere"), "../elsewhere", "/etc", "builtin:nope", ""):
        status, body = start(login(manager), campaign.pk, model=model)
        assert status == 400, model
        assert "model" in body["errors"]["options"][0] or "baseline" in body["errors"]["options"][0]
    assert not Job.objects.exists()


def test_it_refuses_a_hub_id_the_server_cannot_load_as_the_command_does(
    manager: User, login, tmp_path: Path, monkeypatch, settings
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # as a server that cannot reach the Hub
    settings.PRB_MODEL_ROOTS = [str(tmp_path / "models")]
    campaign = campaign_of(manager, 2)
    status, body = start(login(manager), campaign.pk, model="example-org/not-cached-rm")
    assert status == 400
    (refused,) = body["errors"]["options"]
    with pytest.raises(CommandError) as command:
        call_command("evaluate", campaign=campaign.pk, model="example-org/not-cached-rm")
    assert refused == str(command.value)
    assert "the Hub is unreachable" in refused
    # A name that is a folder where the server runs is never taken for a Hub id.
    (tmp_path / "org" / "local").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    status, body = start(login(manager), campaign.pk, model="org/local")
    assert status == 400
    assert "no model folder under" in body["errors"]["options"][0]
    assert not Job.objects.exists()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"label_index": -1}, "label_index must be 0 or more"),
        ({"judge": "yes"}, "judge must be bool"),
        ({"max_batch_tokens": 1.5}, "max_batch_tokens must be int"),
        ({"dtype": "int8"}, "dtype must be one of float32, bfloat16, float16"),
        ({"paper_settings": True, "mode": "profile"}, "--mode profile"),
        ({"judge_template": "../elsewhere", "judge": True}, "judge_template '../elsewhere'"),
        ({"judge_template": "template"}, "judge_template goes with judge: true"),
        ({"data": "/etc/passwd"}, "Unknown scoring option(s): data"),
    ],
)
def test_it_refuses_bad_options_naming_them(
    manager: User, login, tmp_path: Path, settings, options: dict, words: str
) -> None:
    (tmp_path / "models" / "template").mkdir(parents=True)
    (tmp_path / "models" / "template" / "user.txt").write_text(
        "{question}\nA: {Response_A}\nB: {Response_B}\n", encoding="utf-8"
    )
    (tmp_path / "elsewhere").mkdir()
    settings.PRB_MODEL_ROOTS = [str(tmp_path / "models")]
    campaign = campaign_of(manager, 2)
    status, body = start(login(manager), campaign.pk, model="builtin:length", **options)
    assert status == 400
    assert words in body["errors"]["options"][0]
    assert not Job.objects.exists()
    ok, job = start(
        login(manager), campaign.pk, model="builtin:length", judge=True, judge_template="template"
    )
    assert ok == 202, job
