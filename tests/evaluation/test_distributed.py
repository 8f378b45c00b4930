"""``torchrun`` with two CPU processes (gloo) gives the output of one process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.cli import main
from evaluation.distributed import Shard
from tests.support import tiny

ROOT = Path(__file__).resolve().parents[2]


def torchrun(args: list[str]) -> subprocess.CompletedProcess:
    """``python -m evaluation ARGS`` in two gloo processes under torchrun."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    return subprocess.run(
        [*command, "--nproc_per_node", "2", "-m", "evaluation", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_it_interleaves_pairs_across_processes():
    shards = [Shard(rank, 3).indices(8) for rank in range(3)]
    assert shards == [[0, 3, 6], [1, 4, 7], [2, 5]]


@pytest.mark.slow
def test_it_gives_one_process_output_with_two_gloo_processes(tmp_path, reward_model_dir):
    records = tiny.records(15)
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in records), encoding="utf-8")
    args = ["score", "--data", str(data), "--model", str(reward_model_dir), "--mode", "profile"]
    args += ["--device", "cpu", "--no-progress"]

    assert main([*args, "--out", str(tmp_path / "one")]) == 0
    completed = torchrun([*args, "--out", str(tmp_path / "two")])
    assert completed.returncode == 0, completed.stderr[-3000:]

    one = [
        json.loads(line) for line in (tmp_path / "one" / "scores.jsonl").read_text().splitlines()
    ]
    two = [
        json.loads(line) for line in (tmp_path / "two" / "scores.jsonl").read_text().splitlines()
    ]
    assert [row["id"] for row in two] == [record["id"] for record in records]
    for a, b in zip(one, two, strict=True):
        assert {k: v for k, v in a.items() if "score" not in k and k != "margin"} == {
            k: v for k, v in b.items() if "score" not in k and k != "margin"
        }
        assert b["chosen_score"] == pytest.approx(a["chosen_score"], abs=1e-4)
        assert b["rejected_score"] == pytest.approx(a["rejected_score"], abs=1e-4)

    summary_one = json.loads((tmp_path / "one" / "summary.json").read_text())
    summary_two = json.loads((tmp_path / "two" / "summary.json").read_text())
    assert summary_two["accuracy"] == summary_one["accuracy"]
    assert summary_two["run"]["world_size"] == 2
    assert summary_two["run"]["pairs"] == 15
    assert summary_two["run"]["real_tokens"] == summary_one["run"]["real_tokens"]
    # Only rank 0 prints the table.
    assert completed.stdout.count("\nall ") == 1


@pytest.mark.slow
def test_it_prints_an_error_once_under_torchrun(tmp_path, judge_a_dir):
    """Every process meets the error; only rank 0 prints it, whether it comes before the
    processes join (a missing data file) or while they score (a causal LM as reward model)."""
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in tiny.records(4)), encoding="utf-8")
    cases = [
        (tmp_path / "none.jsonl", "error: " + str(tmp_path / "none.jsonl")),
        (data, f"error: {judge_a_dir} has no trained reward head (missing score.weight)"),
    ]
    for path, message in cases:
        args = ["score", "--data", str(path), "--model", str(judge_a_dir), "--device", "cpu"]
        completed = torchrun([*args, "--out", str(tmp_path / "run"), "--no-progress"])
        assert completed.returncode != 0
        errors = [line for line in completed.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1, completed.stderr[-3000:]
        assert errors[0].startswith(message)
        assert "LOAD REPORT" not in completed.stderr
