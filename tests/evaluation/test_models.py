"""Loading models: the wrong kind of model, an empty folder and an unreachable Hub each give
one line, once, and nothing else on stderr."""

import json
import shutil
import socket

import pytest
from huggingface_hub import constants

from evaluation.cli import main
from tests.support import tiny

SNAPSHOT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def split_file(tmp_path):
    path = tmp_path / "split.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in tiny.records(4)), encoding="utf-8")
    return path


@pytest.fixture
def closed_port() -> int:
    """A local port nothing listens on: connecting to it is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def score(split_file, tmp_path, capfd, model, *options: str) -> tuple[int, list[str]]:
    """Exit status and the non-blank lines written to stderr (by Python or anything below)."""
    args = ["score", "--data", str(split_file), "--model", str(model)]
    code = main([*args, "--out", str(tmp_path / "run"), "--no-progress", *options])
    return code, [line for line in capfd.readouterr().err.splitlines() if line.strip()]


def test_it_refuses_a_causal_lm_as_a_reward_model_in_one_line(
    split_file, tmp_path, capfd, judge_a_dir
):
    code, lines = score(split_file, tmp_path, capfd, judge_a_dir)
    assert code == 2
    assert len(lines) == 1, lines
    assert "has no trained reward head (missing score.weight)" in lines[0]
    assert "--judge" in lines[0]


def test_it_refuses_a_reward_model_as_a_judge_in_one_line(
    split_file, tmp_path, capfd, reward_model_dir
):
    """Loaded as a causal LM, a classifier would get a random language-model head and exit 0
    with every reply unparsed."""
    code, lines = score(split_file, tmp_path, capfd, reward_model_dir, "--judge")
    assert code == 2
    assert lines == [
        f"error: {reward_model_dir} is a reward model (LlamaForSequenceClassification), "
        "not a causal LM; score it without --judge"
    ]
    assert not (tmp_path / "run").exists()


def test_it_names_an_empty_or_incomplete_model_folder(split_file, tmp_path, capfd):
    empty = tmp_path / "empty"
    empty.mkdir()
    code, lines = score(split_file, tmp_path, capfd, empty)
    assert (code, lines) == (2, [f"error: no model at {empty}: the folder is empty"])
    tokenizer_only = tmp_path / "tokenizer-only"
    tiny.make_tokenizer().save_pretrained(tokenizer_only)
    code, lines = score(split_file, tmp_path, capfd, tokenizer_only)
    assert (code, lines) == (2, [f"error: no model at {tokenizer_only}: no config.json"])
    weights_only = tmp_path / "weights-only"
    tiny.random_reward_model(tiny.make_tokenizer()).save_pretrained(weights_only)
    capfd.readouterr()  # saving shows a progress bar
    code, lines = score(split_file, tmp_path, capfd, weights_only)
    assert (code, lines) == (
        2,
        [f"error: cannot load the tokenizer of {weights_only}: no tokenizer files in the folder"],
    )


def test_it_fails_at_once_on_a_hub_id_when_offline(
    split_file, tmp_path, capfd, monkeypatch, closed_port
):
    """A name that is no folder and not in the Hub cache, with the Hub out of reach (offline
    set, or the connection refused): one line, and no retries."""
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    expected = (
        "error: no model at prb-tests/absent-rm: not a local folder, not in the Hub cache, and "
        "the Hub is unreachable (offline)"
    )
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert score(split_file, tmp_path, capfd, "prb-tests/absent-rm") == (2, [expected])
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    assert score(split_file, tmp_path, capfd, "prb-tests/absent-rm") == (2, [expected])


def test_it_loads_a_cached_hub_model_when_the_hub_is_out_of_reach(
    split_file, tmp_path, capfd, monkeypatch, closed_port, reward_model_dir
):
    """A Hub id found in the local cache is loaded from there, without asking the Hub."""
    hub = tmp_path / "hub"
    repo = hub / "models--prb-tests--tiny-rm"
    shutil.copytree(reward_model_dir, repo / "snapshots" / SNAPSHOT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SNAPSHOT)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    code, lines = score(split_file, tmp_path, capfd, "prb-tests/tiny-rm")
    assert (code, lines) == (0, [])
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["model"] == "prb-tests/tiny-rm"
    assert summary["run"]["pairs"] == 4
