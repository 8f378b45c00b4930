"""The paper's reading of a classifier head with several labels, and its count of a judge."""

import json

import pytest
import torch

from evaluation.cli import main
from evaluation.config import SOFTMAX_LAST, ScoreConfig
from evaluation.forward import readout_rule, reward_from_logits
from evaluation.paper_protocol import paper_outcome
from evaluation.results import JudgeVerdict, PairScore
from tests.support import tiny


def test_the_paper_reads_the_last_labels_probability():
    """softmax(logits)[-1] for several labels, the logit itself for one."""
    logits = torch.tensor([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    expected = torch.softmax(logits, dim=-1)[:, -1]
    assert torch.allclose(reward_from_logits(logits, SOFTMAX_LAST), expected)
    assert reward_from_logits(logits[:, :1], SOFTMAX_LAST).tolist() == [1.0, 0.0]
    assert ScoreConfig(model="m", paper_settings=True).readout == SOFTMAX_LAST
    assert ScoreConfig(model="m", label_index=2).readout == 2
    assert readout_rule(3, SOFTMAX_LAST) == "softmax(logits)[-1], the paper's"
    assert readout_rule(2, None) == "logit[1] - logit[0], the log-odds of label 1"
    assert readout_rule(1, SOFTMAX_LAST) == "the single logit"


def test_a_paper_run_of_a_three_label_head_says_how_it_read_it(tmp_path, capsys):
    """Without --paper-settings a head with three labels needs --label-index; with it, the
    reward is the last label's probability, and the run card says so."""
    tokenizer = tiny.make_tokenizer()
    model = tiny.random_reward_model(tokenizer, num_labels=3)
    folder = tiny.save(model, tokenizer, tmp_path / "three-labels")
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in tiny.records(4)), encoding="utf-8")
    args = ["score", "--data", str(data), "--model", str(folder), "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "default")]) == 2
    assert "--label-index" in capsys.readouterr().err
    assert main([*args, "--paper-settings", "--out", str(tmp_path / "paper")]) == 0
    summary = json.loads((tmp_path / "paper" / "summary.json").read_text(encoding="utf-8"))
    assert summary["card"]["reward"] == "softmax(logits)[-1], the paper's"
    rows = (tmp_path / "paper" / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(0 < json.loads(row)["chosen_score"] < 1 for row in rows)


@pytest.mark.parametrize(
    ("verdicts", "ours", "paper"),
    [
        ([("A", None)], "unparsed", "correct"),
        ([("B", None)], "unparsed", "wrong"),
        ([("B", "B")], "correct", "correct"),
        ([("A", None), ("B", None)], "unparsed", "tie"),
        ([("A", "A"), ("B", None)], "unparsed", "tie"),
        ([("A", "B"), ("B", None)], "unparsed", "wrong"),
    ],
)
def test_an_unparsed_reply_counts_as_a_for_the_paper(verdicts, ours, paper):
    """(where the chosen answer was shown, the letter named) per judgement."""
    picked = [
        None if named is None else ("chosen" if named == where else "rejected")
        for where, named in verdicts
    ]
    score = PairScore(
        id="p",
        category="",
        outcome=ours,
        chosen_score=None,
        rejected_score=None,
        verdicts=tuple(
            JudgeVerdict(chosen_position=where, reply="", named=named, picked=pick)
            for (where, named), pick in zip(verdicts, picked, strict=True)
        ),
    )
    assert paper_outcome(score) == paper
