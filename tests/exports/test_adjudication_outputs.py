"""Adjudications reach what leaves the tool: exports and ``manage.py evaluate`` use the
adjudicated verdict and say so; agreement stays the annotators' alone."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from prb_annotate.audit import decisions
from prb_annotate.exports.card import introduction
from prb_annotate.exports.export import export_split
from prb_annotate.models import Campaign, EvaluationRun
from tests.support.exports import EXCLUDED_IDS, annotated_campaign, import_dataset

RESCUED = "alpha-10"  # excluded by the annotators (quality), validated by a manager
DROPPED = "life-1"  # validated by the annotators, excluded by a manager


@pytest.fixture
def campaign(db: None) -> Campaign:
    users = [User.objects.create(username=name) for name in ("alice", "bob", "carol")]
    return annotated_campaign(import_dataset(), users)


def decide(campaign: Campaign, external_id: str, decision: str, reason: str) -> None:
    item = campaign.items.get(pair__external_id=external_id)
    decisions.adjudicate(item, decision, reason, note="read by the lead")


def exported_ids(root: Path) -> set[str]:
    return {
        str(json.loads(line)["id"])
        for path in root.glob("*/test.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
    }


@pytest.mark.parametrize("workers", [1, 2])
def test_the_export_uses_the_adjudicated_verdict_and_says_so(campaign, tmp_path, workers):
    plain = export_split(campaign, tmp_path / "before", with_validation=True)
    decide(campaign, RESCUED, "validated", "adjudicator_judgement")
    decide(campaign, DROPPED, "excluded", "label_disagrees")
    manifest = export_split(campaign, tmp_path / "after", with_validation=True, workers=workers)

    before, after = exported_ids(tmp_path / "before"), exported_ids(tmp_path / "after")
    assert RESCUED not in before
    assert after == (before - {DROPPED}) | {RESCUED}
    assert manifest["counts"]["pairs"]["adjudicated"] == 2
    assert manifest["counts"]["pairs"]["validated"] == plain["counts"]["pairs"]["validated"]
    assert manifest["adjudication"]["pairs"] == 2
    assert "replaces the annotators' verdict" in manifest["adjudication"]["rule"]
    card = (tmp_path / "after" / "README.md").read_text(encoding="utf-8")
    assert "2 of these verdicts are a manager's adjudication" in card
    rescued = next(
        json.loads(line)
        for path in (tmp_path / "after").glob("*/test.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["id"] == RESCUED
    )
    assert rescued["validation"]["verdict"] == "validated"
    assert rescued["validation"]["adjudicated"] is True
    assert rescued["validation"]["annotators_verdict"] == "excluded"
    assert rescued["validation"]["reasons"] == ["adjudicator_judgement"]
    # Agreement is computed from the annotators' answers: adjudications do not move it.
    assert manifest["agreement"]["questions"] == plain["agreement"]["questions"]
    assert RESCUED in EXCLUDED_IDS


def test_evaluate_scores_the_adjudicated_subsets_and_says_so(
    scored_campaign,
    feature_model_dir,
):
    # p0004 is excluded by the annotators (a quality gap); a manager validates it.
    decide(scored_campaign, "p0004", "validated", "adjudicator_judgement")
    out = StringIO()
    call_command(
        "evaluate",
        campaign=scored_campaign.pk,
        model=str(feature_model_dir),
        subset="validated",
        stdout=out,
    )
    run = EvaluationRun.objects.get()
    scored = sorted(run.scores.values_list("pair__external_id", "verdict"))
    assert scored == [(f"p{i:04d}", "validated") for i in range(5)]
    assert run.summary["audit"]["adjudicated_pairs"] == 1
    assert run.summary["audit"]["adjudicated_ids"] == ["p0004"]
    assert "1 pair(s) adjudicated by a manager" in out.getvalue()


def test_the_card_counts_one_adjudicated_verdict_in_the_singular(campaign, tmp_path):
    manifest = export_split(campaign, tmp_path / "plain")
    assert "0 of these verdicts are a manager's" in "\n".join(introduction(manifest))
    manifest["counts"]["pairs"]["adjudicated"] = 1
    assert "1 of these verdicts is a manager's adjudication" in "\n".join(introduction(manifest))
