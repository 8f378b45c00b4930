"""The built-in length baseline and the tiny model the command writes, through the library and
``python -m evaluation``."""

import json

import pytest

from evaluation.baselines import score_builtin
from evaluation.cli import main
from evaluation.config import ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.scoring import score_records
from evaluation.tiny import MEANINGLESS

LONG_CATEGORY = "Lifestyle_and_Personal_Development_and_More"


def record(pair_id: str, chosen: str, rejected: str, category: str = "Art") -> dict:
    return {
        "id": pair_id,
        "question": "q",
        "chosen": chosen,
        "rejected": rejected,
        "category": category,
    }


RECORDS = [
    record("longer", "a longer answer", "short"),
    record("shorter", "short", "a longer answer"),
    record("equal", "abcde", "vwxyz"),
    record("longer-2", "four", "one", category=LONG_CATEGORY),
]


def test_it_lets_the_longer_answer_win_and_reports_ties():
    """Worked example: lengths 15/5 (correct), 5/15 (wrong), 5/5 (tie), 4/3 (correct):
    accuracy 2 / 3 with the tie left out, tie rate 1 / 4."""
    result = score_records(RECORDS, ScoreConfig(model="builtin:length", resamples=0))
    assert [pair.outcome for pair in result.pairs] == ["correct", "wrong", "tie", "correct"]
    assert [pair.chosen_score for pair in result.pairs] == [15.0, 5.0, 5.0, 4.0]
    overall = result.summary.overall
    assert overall.accuracy == pytest.approx(2 / 3)
    assert overall.tie_rate == pytest.approx(1 / 4)
    assert overall.accuracy_ties_as_wrong == pytest.approx(2 / 4)


def test_it_groups_by_the_validation_verdict_like_the_scorer():
    labelled = [
        {**row, "validation": {"verdict": verdict}}
        for row, verdict in zip(
            RECORDS, ["validated", "excluded", "excluded", "validated"], strict=True
        )
    ]
    result = score_builtin(labelled, ScoreConfig(model="builtin:length", resamples=0))
    assert result.summary.group_by == "validation.verdict"
    assert result.summary.by_group["validated"].accuracy == 1.0
    assert result.summary.by_group["excluded"].accuracy == 0.0


def test_it_refuses_unknown_baselines_duplicate_ids_and_judging():
    with pytest.raises(EvaluationError, match="unknown built-in model 'builtin:width'"):
        score_builtin(RECORDS, ScoreConfig(model="builtin:width"))
    with pytest.raises(EvaluationError, match="used twice"):
        score_builtin(RECORDS + RECORDS[:1], ScoreConfig(model="builtin:length"))
    with pytest.raises(EvaluationError, match="not a judge"):
        score_builtin(RECORDS, ScoreConfig(model="builtin:length", judge=True))


def test_it_scores_from_the_command_line_with_whole_category_names(tmp_path, capsys):
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in RECORDS), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["score", "--data", str(data), "--model", "builtin:length", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["model"] == "builtin:length"
    assert summary["accuracy"]["overall"]["ties"] == 1
    captured = capsys.readouterr()
    assert f"  {LONG_CATEGORY} " in captured.out
    assert captured.err == ""  # no progress bar off a terminal


def test_it_writes_a_tiny_model_labelled_meaningless_that_scores(tmp_path, capsys):
    folder = tmp_path / "tiny-rm"
    assert main(["make-tiny-model", str(folder)]) == 0
    printed = capsys.readouterr().out
    assert "meaningless" in printed
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["prb_note"] == MEANINGLESS
    assert config["architectures"] == ["LlamaForSequenceClassification"]
    result = score_records(RECORDS, ScoreConfig(model=str(folder), resamples=0))
    assert all(pair.chosen_score is not None for pair in result.pairs)
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in RECORDS), encoding="utf-8")
    assert (
        main(["score", "--data", str(data), "--model", str(folder), "--out", str(tmp_path / "run")])
        == 0
    )
    captured = capsys.readouterr()
    assert captured.out.startswith("pairs ")
    assert captured.err == ""  # off a terminal, no bar (ours or the loader's) to run into it
    # Again into the same folder is fine; into a folder holding something else is not.
    assert main(["make-tiny-model", str(folder)]) == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "weights.bin").write_bytes(b"\0")
    assert main(["make-tiny-model", str(other)]) == 2
    assert "not a tiny model's folder" in capsys.readouterr().err
