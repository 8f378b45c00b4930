"""The two built-in baselines beside ``builtin:length``: ``builtin:profile-overlap`` (surface
match to the user's own words) and ``builtin:random`` (seeded; what no signal looks like)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaluation.baselines import content_words, score_builtin
from evaluation.cli import main
from evaluation.config import ScoreConfig

ROOT = Path(__file__).resolve().parents[2]
PROFILE = [
    {"text": "I repair vintage bicycles in my garage every weekend."},
    {"text": "Looking for cheap tyres for a steel touring frame."},
]


def pair(pair_id: str, chosen: str, rejected: str, profile: list | None = None) -> dict:
    return {
        "id": pair_id,
        "question": "Which tyres suit my old bicycle?",
        "profile": PROFILE if profile is None else profile,
        "chosen": chosen,
        "rejected": rejected,
    }


def test_it_counts_the_content_words_an_answer_shares_with_the_user():
    """Worked by hand. The user's content words: tyres, suit, old, bicycle (question), repair,
    vintage, bicycles, garage, every, weekend, looking, cheap, steel, touring, frame (posts).

    - "Steel frames want cheap touring tyres." shares steel, cheap, touring, tyres: 4;
      "Any tyres are fine for an old bicycle." shares tyres, old, bicycle: 3 -> correct.
    - 3 against 4 the other way round -> wrong.
    - "Cheap tyres." against "Old tyres.": 2 and 2 -> a tie, never a side.
    """
    records = [
        pair(
            "a", "Steel frames want cheap touring tyres.", "Any tyres are fine for an old bicycle."
        ),
        pair(
            "b", "Any tyres are fine for an old bicycle.", "Steel frames want cheap touring tyres."
        ),
        pair("c", "Cheap tyres.", "Old tyres."),
    ]
    result = score_builtin(records, ScoreConfig(model="builtin:profile-overlap", resamples=0))
    assert [(p.chosen_score, p.rejected_score) for p in result.pairs] == [
        (4.0, 3.0),
        (3.0, 4.0),
        (2.0, 2.0),
    ]
    assert [p.outcome for p in result.pairs] == ["correct", "wrong", "tie"]
    assert content_words("The tent I'd take: a light tent.") == {"tent", "take", "light"}


def test_it_reads_only_the_posts_a_model_would_see():
    """With --top-k 1 the second post (cheap, steel, touring, frame) no longer counts."""
    records = [pair("a", "Steel frames want cheap touring tyres.", "Any old bicycle tyres.")]
    top_one = score_builtin(records, ScoreConfig(model="builtin:profile-overlap", top_k=1))
    assert top_one.pairs[0].chosen_score == 1.0  # tyres only
    assert top_one.pairs[0].outcome == "wrong"  # tyres, old, bicycle: 3


def test_it_draws_random_rewards_from_the_seed_and_the_pair_alone():
    """The same seed gives the same rewards in any order; another seed others; over many pairs
    accuracy is near one half (binomial: 400 pairs, 50% +- 7.5 points is over 3 sd)."""
    records = [pair(f"r{i}", f"answer {i}", f"other {i}", profile=[]) for i in range(400)]
    config = ScoreConfig(model="builtin:random", resamples=0, seed=7)
    first = score_builtin(records, config)
    again = score_builtin(list(reversed(records)), config)
    by_id = {p.id: (p.chosen_score, p.rejected_score) for p in again.pairs}
    assert all(by_id[p.id] == (p.chosen_score, p.rejected_score) for p in first.pairs)
    other_seed = score_builtin(records, ScoreConfig(model="builtin:random", resamples=0, seed=8))
    assert [p.chosen_score for p in other_seed.pairs] != [p.chosen_score for p in first.pairs]
    assert first.summary.overall.accuracy == pytest.approx(0.5, abs=0.075)
    assert first.summary.overall.ties == 0


def test_it_scores_the_new_baselines_from_the_command_line_with_a_run_card(tmp_path):
    data = tmp_path / "pairs.jsonl"
    rows = [pair("a", "Cheap steel tyres.", "Anything."), pair("b", "Old tyres.", "Garage work.")]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    for model in ("builtin:profile-overlap", "builtin:random"):
        out = tmp_path / model.split(":")[1]
        assert main(["score", "--data", str(data), "--model", model, "--out", str(out)]) == 0
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        card = summary["card"]
        assert card["model"] == model
        assert card["kind"] == "built-in baseline"
        assert len(card["code_sha256"]) == 64
        assert card["model_files"] is None
        assert card["model_files_reason"].startswith("a built-in baseline has no files")


def test_it_scores_baselines_and_compares_runs_without_torch(tmp_path):
    """The baselines and compare run where torch is not installed: the command line loads it
    only for a model with weights."""
    data = tmp_path / "pairs.jsonl"
    rows = [pair("a", "Cheap steel tyres.", "Anything."), pair("b", "Old tyres.", "Garage work.")]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    probe = (
        "import sys\n"
        "from evaluation.cli import main\n"
        f"data, out = {str(data)!r}, {str(tmp_path)!r}\n"
        "for name in ('length', 'profile-overlap', 'random'):\n"
        "    args = ['score', '--data', data, '--model', 'builtin:' + name]\n"
        "    assert main(args + ['--out', f'{out}/{name}', '--self-check', '2']) == 0\n"
        "runs = [f'{out}/{name}' for name in ('length', 'profile-overlap', 'random')]\n"
        "assert main(['compare', *runs, '--out', f'{out}/board.txt']) == 0\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.split()[-2:] == ["False", "False"], result.stderr
    assert "3 models on 2 pairs" in (tmp_path / "board.txt").read_text(encoding="utf-8")
