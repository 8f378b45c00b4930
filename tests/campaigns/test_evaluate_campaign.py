"""``manage.py evaluate``: a reward model scored on a campaign's pairs, stored as a run and shown
on the campaign's page with validated and excluded pairs side by side.

The model is the feature reward model of tests/support/tiny.py: its reward grows with the
share of marker words, so which answer wins is known before scoring (the ``scored_campaign``
and ``feature_model_dir`` fixtures are in tests/conftest.py).
"""

import subprocess
import sys
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from prb_annotate.models import EvaluationRun, PairScore


def test_it_stores_a_run_with_one_score_per_pair(scored_campaign, feature_model_dir):
    out = StringIO()
    call_command("evaluate", campaign=scored_campaign.pk, model=str(feature_model_dir), stdout=out)
    run = EvaluationRun.objects.get(campaign=scored_campaign)
    scores = {
        s.pair.external_id: s for s in PairScore.objects.filter(run=run).select_related("pair")
    }
    assert sorted(scores) == [f"p{i:04d}" for i in range(6)]
    assert {pid for pid, s in scores.items() if s.outcome == "wrong"} == {"p0003", "p0005"}
    assert all(s.score_chosen != s.score_rejected for s in scores.values())
    assert {s.verdict for s in scores.values()} == {"validated", "excluded"}
    accuracy = run.summary["accuracy"]
    assert accuracy["overall"]["accuracy"] == pytest.approx(4 / 6)
    assert accuracy["by_group"]["validated"]["accuracy"] == pytest.approx(3 / 4)
    assert accuracy["by_group"]["excluded"]["accuracy"] == pytest.approx(1 / 2)
    assert "validated" in out.getvalue()
    assert "75.0%" in out.getvalue()
    # The paper's figure (ties as wrong) is printed with its own interval; no pair tied here.
    overall = accuracy["overall"]
    paper = (
        f"ties-as-wrong 66.7% [{100 * overall['accuracy_ties_as_wrong_ci_low']:.1f}%, "
        f"{100 * overall['accuracy_ties_as_wrong_ci_high']:.1f}%]"
    )
    assert paper in out.getvalue()


def test_it_scores_only_the_subset_asked_for(scored_campaign, feature_model_dir):
    call_command(
        "evaluate",
        campaign=scored_campaign.pk,
        model=str(feature_model_dir),
        subset="excluded",
        stdout=StringIO(),
    )
    run = EvaluationRun.objects.get()
    assert run.subset == "excluded"
    assert sorted(run.scores.values_list("pair__external_id", flat=True)) == ["p0004", "p0005"]


def test_it_explains_a_missing_model_and_stores_nothing(scored_campaign, tmp_path):
    with pytest.raises(CommandError):
        call_command(
            "evaluate",
            campaign=scored_campaign.pk,
            model=str(tmp_path / "no-such-model"),
            stdout=StringIO(),
        )
    assert not EvaluationRun.objects.exists()
    with pytest.raises(CommandError, match="no campaign"):
        call_command("evaluate", campaign=999_999, model="x", stdout=StringIO())


def test_it_shows_runs_to_managers_only(
    scored_campaign, feature_model_dir, manager, annotator, login
):
    call_command(
        "evaluate", campaign=scored_campaign.pk, model=str(feature_model_dir), stdout=StringIO()
    )
    url = reverse("campaign_evaluations", args=[scored_campaign.pk])
    page = login(manager).get(url)
    html = page.content.decode()
    assert str(feature_model_dir) in html
    assert "66.7%" in html
    assert "75.0%" in html
    assert "50.0%" in html
    assert html.count('class="num ties-as-wrong"') == 3
    overall = EvaluationRun.objects.get(campaign=scored_campaign).summary["accuracy"]["overall"]
    assert f"{100 * overall['accuracy_ties_as_wrong_ci_low']:.1f}% \u2013 " in html
    assert login(annotator).get(url).status_code == 404


def test_it_keeps_torch_out_of_the_web_app():
    """Starting Django and loading every URL module must not import torch."""
    code = (
        "import django, os, sys;"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'prb_annotate.settings');"
        "django.setup();"
        "from django.urls import get_resolver; get_resolver().url_patterns;"
        "import prb_annotate.wsgi;"
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False False"
