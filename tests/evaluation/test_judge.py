"""The generative pairwise judge: parsing, unparsed replies, seeded positions, consistency."""

import pytest
import torch

from evaluation.config import ScoreConfig
from evaluation.judge import parse_verdict
from evaluation.judge_order import chosen_positions
from evaluation.models import load_judge
from evaluation.scoring import score_records
from tests.support import tiny

RECORDS = tiny.records(16)


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("A", "A"),
        ("B", "B"),
        (" **B**", "B"),
        ("Answer A.", "A"),
        ("response B is better", "B"),
        ("(A)", "A"),
        ("[[B]]", "B"),
        ("After thinking, [[A]].", "A"),
        ("[[A]] or [[B]]", None),
        ("a better fit is the first", None),
        ("Both are fine", None),
        ("AB", None),
        ("", None),
        ("I cannot decide.", None),
    ],
)
def test_it_parses_a_verdict_or_nothing(reply, verdict):
    assert parse_verdict(reply) == verdict


def test_it_counts_replies_without_a_verdict_as_unparsed(judge_babble_dir):
    """A judge that never names an answer gets every pair unparsed: none is right or wrong,
    accuracy is undefined, and the replies are kept."""
    config = ScoreConfig(model=str(judge_babble_dir), judge=True, max_new_tokens=3)
    result = score_records(RECORDS, config)
    assert {pair.outcome for pair in result.pairs} == {"unparsed"}
    overall = result.summary.overall
    assert (overall.unparsed, overall.correct, overall.wrong, overall.accuracy) == (16, 0, 0, None)
    assert result.pairs[0].verdicts[0].reply == "bake bake bake"
    assert result.positions is not None
    assert result.positions.verdicts == 0


def test_it_randomises_positions_per_pair_from_the_seed(judge_a_dir):
    """An always-"A" judge is right exactly when the chosen answer was shown first; the seed
    and the pair id decide that order, whatever the order of the records."""
    judge = load_judge(str(judge_a_dir))
    result = score_records(RECORDS, ScoreConfig(model="a", judge=True, seed=5), model=judge)
    positions = [pair.verdicts[0].chosen_position for pair in result.pairs]
    assert 0 < positions.count("A") < len(positions)
    assert [pair.outcome for pair in result.pairs] == [
        "correct" if p == "A" else "wrong" for p in positions
    ]
    assert result.positions is not None
    assert result.positions.first_position_share == 1.0

    reversed_run = score_records(
        RECORDS[::-1], ScoreConfig(model="a", judge=True, seed=5), model=judge
    )
    assert [pair.verdicts[0].chosen_position for pair in reversed_run.pairs] == positions[::-1]
    other_seed = [chosen_positions(record["id"], 6, both_orders=False)[0] for record in RECORDS]
    assert other_seed != positions


def test_it_measures_position_consistency_in_both_orders(judge_a_dir):
    """Judged in both orders, an always-"A" judge picks a different answer each time: every pair
    is a tie and position consistency is zero."""
    result = score_records(
        RECORDS[:6], ScoreConfig(model=str(judge_a_dir), judge=True, both_orders=True)
    )
    assert {pair.outcome for pair in result.pairs} == {"tie"}
    assert [len(pair.verdicts) for pair in result.pairs] == [2] * 6
    assert (result.pairs[0].chosen_score, result.pairs[0].rejected_score) == (1.0, 1.0)
    positions = result.positions
    assert positions is not None
    assert (positions.pairs_in_both_orders, positions.consistency) == (6, 0.0)
    assert result.summary.overall.tie_rate == 1.0


def test_it_never_shows_the_judge_rubric_or_narrative(judge_a_dir):
    judge = load_judge(str(judge_a_dir))
    tokenizer = judge.tokenizer
    canaries = {
        tokenizer.convert_tokens_to_ids(word)
        for word in (tiny.RUBRIC_CANARY, tiny.NARRATIVE_CANARY)
    }
    seen = []
    hook = judge.model.get_input_embeddings().register_forward_hook(
        lambda module, args, output: seen.append(args[0].detach().clone())
    )
    try:
        score_records(
            RECORDS[:4],
            ScoreConfig(model="a", judge=True, mode="profile", max_new_tokens=2),
            model=judge,
        )
    finally:
        hook.remove()
    read = set(torch.cat([ids.flatten() for ids in seen]).tolist())
    assert not read & canaries
    assert tokenizer.convert_tokens_to_ids(tiny.QUESTION_CANARY) in read
