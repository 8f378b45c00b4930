"""What a newcomer meets first: the demo's study link finishes at the campaign's completion
page, the scorer's files follow the umask, and the project is installed into its venv so that
``python -m evaluation`` runs from any folder."""

import importlib.metadata
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from evaluation.config import ScoreConfig
from evaluation.results import write_outputs
from evaluation.scoring import score_records
from prb_annotate.models import Campaign, Dataset
from tests.support.pages import active_campaign, form_answers, reserve, submit_url

ROOT = Path(__file__).resolve().parents[2]
RECORDS = [
    {"id": "a", "question": "q", "chosen": "a longer answer", "rejected": "short", "category": "A"},
    {"id": "b", "question": "q", "chosen": "short", "rejected": "a longer answer", "category": "A"},
]


def test_it_sends_a_participant_who_did_their_quota_to_the_local_completion_page(
    dataset: Dataset,
) -> None:
    """As the demo's campaign is set up: a quota and the app's own completion page. The done
    page sends the participant there, and the page answers without a login."""
    campaign = active_campaign(
        dataset, quota_per_annotator=2, completion_url="http://localhost/completed/"
    )
    participant = Client()
    join = reverse("join", args=[campaign.invite_token])
    ids = {"PROLIFIC_PID": "demo-participant-1", "STUDY_ID": "s", "SESSION_ID": "x"}
    assert participant.post(join, ids).status_code == 302
    for token in ("t1", "t2"):
        assignment = reserve(participant, campaign)
        participant.post(submit_url(assignment), form_answers(campaign, client_token=token))
    done = participant.get(reverse("annotate", args=[campaign.pk]), follow=True)
    html = done.content.decode()
    assert 'content="3;url=http://localhost/completed/"' in html
    assert 'id="completion-link" href="http://localhost/completed/"' in html
    page = Client().get(reverse("completed"))
    assert page.status_code == 200
    assert "Submission complete" in page.content.decode()
    assert Campaign.objects.get(pk=campaign.pk).memberships.count() == 1


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_it_writes_the_scores_with_the_permissions_the_umask_gives(tmp_path, umask, mode) -> None:
    result = score_records(RECORDS, ScoreConfig(model="builtin:length", resamples=0))
    previous = os.umask(umask)
    try:
        written = write_outputs(result, tmp_path / "run")
    finally:
        os.umask(previous)
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == mode, path.name


def installed() -> bool:
    try:
        importlib.metadata.distribution("prb-annotate")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@pytest.mark.skipif(
    not installed(), reason="the project is not installed in this venv (make venv installs it)"
)
def test_it_runs_the_scorer_from_any_folder(tmp_path) -> None:
    """Outside the checkout, with nothing on PYTHONPATH: ``python -m evaluation`` and the
    ``prb-evaluate`` script of the venv both score a file."""
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in RECORDS), encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    script = Path(sys.executable).with_name("prb-evaluate")
    for command in ([sys.executable, "-m", "evaluation"], [str(script)]):
        out = tmp_path / Path(command[-1]).name
        args = ["score", "--data", str(data), "--model", "builtin:length", "--out", str(out)]
        subprocess.run([*command, *args], cwd=tmp_path, env=env, check=True, capture_output=True)
        assert json.loads((out / "summary.json").read_text())["accuracy"]["overall"]["n"] == 2
