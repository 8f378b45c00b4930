"""bench/gpu_scoring.py: its pairs have the benchmark's length profile token for token, and its
smoke run (a tiny model on the CPU) goes through every measurement and writes the table."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import gpu_scoring

ROOT = Path(__file__).resolve().parents[2]


def test_it_builds_pairs_with_the_length_profile_in_tokens() -> None:
    vocabulary = gpu_scoring.words(seed=3)
    tokenizer = gpu_scoring.word_tokenizer(vocabulary)
    records = gpu_scoring.synthetic_pairs(20, 3, vocabulary, gpu_scoring.LENGTHS)

    def tokens(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    low, high = gpu_scoring.LENGTHS["answer"]
    answers = [tokens(r[side]) for r in records for side in ("chosen", "rejected")]
    assert all(low <= n <= high for n in answers)
    assert max(answers) - min(answers) > (high - low) // 2  # spread over the range
    low, high = gpu_scoring.LENGTHS["question"]
    assert all(low <= tokens(r["question"]) <= high for r in records)
    assert {len(r["profile"]) for r in records} == {gpu_scoring.POSTS}
    # Every word is a token of its own, none unknown.
    ids = tokenizer(records[0]["chosen"], add_special_tokens=False)["input_ids"]
    assert tokenizer.unk_token_id not in ids


@pytest.mark.slow
def test_its_smoke_run_measures_everything_on_the_cpu(tmp_path: Path) -> None:
    written = tmp_path / "table.json"
    done = subprocess.run(
        [sys.executable, "bench/gpu_scoring.py", "--smoke", "--json", str(written)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(written.read_text())
    scorer, policy, judge = report["rows"]
    assert scorer["name"].startswith("scorer tiny")
    assert policy["name"].startswith("benchmark policy tiny")
    assert judge["name"].startswith("judge tiny")
    assert scorer["pairs"] == policy["pairs"] == 6
    assert judge["pairs"] == 2
    assert all(row["pairs_per_s"] > 0 and row["tokens_per_s"] > 0 for row in report["rows"])
    # On the CPU the run is fp32 already: the fp32 copy agrees to rounding, no decision flips.
    assert scorer["fp32_max_difference"] < 1e-4
    assert scorer["fp32_flipped"] == 0
    # No memory to run out of: the search stops at the cap; no bf16 peak to share.
    assert scorer["largest_batch"] == ">=4 x 256"
    assert scorer["peak_share"] is None
    assert report["peak_tflops"] is None
    assert report["lengths"]["answer"] == [30, 150]
    # The table printed is the one written.
    assert "largest batch" in done.stdout
    assert scorer["name"] in done.stdout
