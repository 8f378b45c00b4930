"""Classifier reward-model scoring: right scores, from the right token, in any batch."""

import random

import numpy as np
import pytest
import torch

from evaluation.batching import pad_batch
from evaluation.config import PrefixReuse, ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.forward import reward_from_logits
from evaluation.inputs import Mode, user_turn
from evaluation.models import load_reward_model
from evaluation.records import to_pair_record
from evaluation.scoring import score_records
from tests.support import tiny

RECORDS = tiny.records(24)
# Both input modes, and in profile mode both scoring paths (whole sequences, shared prompt).
PATHS: list[tuple[Mode, PrefixReuse]] = [("question", "off"), ("profile", "off"), ("profile", "on")]


def scores_by_id(result):
    return {pair.id: (pair.chosen_score, pair.rejected_score) for pair in result.pairs}


def assert_same_scores(first, second, tolerance=1e-4):
    a, b = scores_by_id(first), scores_by_id(second)
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == pytest.approx(b[key], abs=tolerance), key


@pytest.fixture(scope="module")
def feature_model(feature_model_dir):
    return load_reward_model(str(feature_model_dir))


@pytest.fixture(scope="module")
def random_model(reward_model_dir):
    return load_reward_model(str(reward_model_dir))


def expected_ids(tokenizer, record, answer, mode):
    """The input the benchmark's reference builds, made here without the package's helpers
    (except for the profile turn's wording)."""
    content = (
        record["question"] if mode == "question" else user_turn(to_pair_record(record), mode, 10)
    )
    chat = [{"role": "user", "content": content}, {"role": "assistant", "content": answer}]
    return tokenizer.apply_chat_template(chat, tokenize=True, return_dict=False)


@pytest.mark.parametrize(("mode", "reuse"), PATHS)
def test_it_scores_the_feature_model_as_computed_by_hand(feature_model, mode, reuse):
    """End to end, each reward equals the one computed by hand from the model's construction,
    and outcomes follow from those rewards."""
    config = ScoreConfig(model="feature", mode=mode, prefix_reuse=reuse, resamples=0)
    result = score_records(RECORDS, config, model=feature_model)

    tokenizer = feature_model.tokenizer
    assert [pair.id for pair in result.pairs] == [record["id"] for record in RECORDS]
    for record, pair in zip(RECORDS, result.pairs, strict=True):
        chosen = tiny.feature_reward(
            expected_ids(tokenizer, record, record["chosen"], mode), tokenizer
        )
        rejected = tiny.feature_reward(
            expected_ids(tokenizer, record, record["rejected"], mode), tokenizer
        )
        assert pair.chosen_score == pytest.approx(chosen, abs=1e-5)
        assert pair.rejected_score == pytest.approx(rejected, abs=1e-5)
        assert pair.outcome == ("correct" if chosen > rejected else "wrong")
    outcomes = [pair.outcome for pair in result.pairs]
    assert result.summary.overall.correct == outcomes.count("correct")
    assert 0 < outcomes.count("wrong") < outcomes.count("correct")


def test_it_reads_the_last_real_token_when_pad_equals_eos(feature_model):
    """Every sequence ends with EOS, which is also the pad id: the score is still read at that
    EOS, while the model's own pad-id rule reads padded rows one token early."""
    tokenizer = feature_model.tokenizer
    assert tokenizer.pad_token_id == tokenizer.eos_token_id
    result = score_records(
        RECORDS[:6], ScoreConfig(model="feature", resamples=0), model=feature_model
    )

    sequences = [expected_ids(tokenizer, r, r["chosen"], "question") for r in RECORDS[:6]]
    assert all(ids[-1] == tokenizer.eos_token_id for ids in sequences)
    by_hand = [tiny.feature_reward(ids, tokenizer) for ids in sequences]
    assert [pair.chosen_score for pair in result.pairs] == pytest.approx(by_hand, abs=1e-5)

    ids, mask = pad_batch(sequences, tokenizer.pad_token_id, "right")
    with torch.inference_mode():
        naive = feature_model.model(input_ids=ids, attention_mask=mask).logits[:, 0].tolist()
    assert any(abs(a - b) > 1e-3 for a, b in zip(naive, by_hand, strict=True))


def test_it_gives_a_pair_the_same_score_in_any_batch(random_model):
    """Budgets from one sequence per batch to all in one, and a shuffled input order, give the
    same scores as scoring each sequence alone, unpadded, through the model's own forward."""
    shuffled = RECORDS[:]
    random.Random(3).shuffle(shuffled)
    runs = [
        score_records(
            records,
            ScoreConfig(model="rm", max_batch_tokens=budget, resamples=0),
            model=random_model,
        )
        for records, budget in [(RECORDS, 1), (RECORDS, 300), (shuffled, 100_000)]
    ]
    for run in runs[1:]:
        assert_same_scores(runs[0], run)
    assert [pair.id for pair in runs[2].pairs] == [record["id"] for record in shuffled]

    tokenizer = random_model.tokenizer
    with torch.inference_mode():
        for record in RECORDS[:5]:
            ids = expected_ids(tokenizer, record, record["rejected"], "question")
            alone = random_model.model(input_ids=torch.tensor([ids])).logits[0, 0].item()
            assert scores_by_id(runs[1])[record["id"]][1] == pytest.approx(alone, abs=1e-4)
    values = np.array(list(scores_by_id(runs[0]).values()))
    assert values.std() > 0.1  # scores vary, so the comparisons above mean something


def test_it_scores_the_same_with_left_and_right_padding(reward_model_dir, left_padded_model_dir):
    """Two tokenizers that differ only in their padding side give the same scores."""
    left = load_reward_model(str(left_padded_model_dir))
    assert left.tokenizer.padding_side == "left"
    for mode in ("question", "profile"):
        right_run = score_records(
            RECORDS,
            ScoreConfig(model=str(reward_model_dir), mode=mode, prefix_reuse="off", resamples=0),
        )
        left_run = score_records(
            RECORDS,
            ScoreConfig(model="left", mode=mode, prefix_reuse="off", resamples=0),
            model=left,
        )
        assert_same_scores(right_run, left_run)


def test_it_scores_the_same_with_and_without_prefix_reuse(random_model):
    """Running the shared prompt once and reusing its cache gives the scores of whole
    sequences, for several batch budgets, while computing fewer positions."""
    whole = score_records(
        RECORDS,
        ScoreConfig(model="rm", mode="profile", prefix_reuse="off", resamples=0),
        model=random_model,
    )
    for budget in (64, 400, 100_000):
        reused = score_records(
            RECORDS,
            ScoreConfig(
                model="rm", mode="profile", prefix_reuse="on", max_batch_tokens=budget, resamples=0
            ),
            model=random_model,
        )
        assert reused.stats.prefix_reuse
        assert_same_scores(whole, reused)
    assert not whole.stats.prefix_reuse
    assert reused.stats.computed_positions < whole.stats.computed_positions
    assert reused.stats.real_tokens == whole.stats.real_tokens


def test_it_never_feeds_rubric_or_narrative_to_the_model(random_model):
    """Every token the model reads, in both modes and on both scoring paths, is free of the
    words that only the rubric and the narrative contain."""
    tokenizer = random_model.tokenizer
    canaries = {
        tokenizer.convert_tokens_to_ids(word)
        for word in (tiny.RUBRIC_CANARY, tiny.NARRATIVE_CANARY)
    }
    assert tokenizer.unk_token_id not in canaries
    seen: list[torch.Tensor] = []
    hook = random_model.model.get_input_embeddings().register_forward_hook(
        lambda module, args, output: seen.append(args[0].detach().clone())
    )
    try:
        for mode, reuse in PATHS:
            score_records(
                RECORDS, ScoreConfig(model="rm", mode=mode, prefix_reuse=reuse), model=random_model
            )
    finally:
        hook.remove()
    read = set(torch.cat([ids.flatten() for ids in seen]).tolist())
    assert not read & canaries
    assert tokenizer.convert_tokens_to_ids(tiny.QUESTION_CANARY) in read


def test_it_reports_a_tie_apart_from_right_and_wrong(random_model):
    """Identical answers score equal: a tie, left out of accuracy and counted in the tie rate."""
    records = [dict(RECORDS[0], id="same", rejected=RECORDS[0]["chosen"]), *RECORDS[1:6]]
    result = score_records(records, ScoreConfig(model="rm", resamples=0), model=random_model)
    assert result.pairs[0].outcome == "tie"
    overall = result.summary.overall
    assert overall.ties == 1
    assert overall.correct + overall.wrong == 5
    assert overall.tie_rate == pytest.approx(1 / 6)
    assert overall.accuracy == pytest.approx(overall.correct / 5)


def test_it_turns_logits_into_one_reward_per_row():
    """One label is the reward; two labels give the log-odds of label 1; more need an index."""
    logits = torch.tensor([[1.0, 3.0, 0.5], [2.0, -1.0, 4.0]])
    assert reward_from_logits(logits[:, :1], None).tolist() == [1.0, 2.0]
    assert reward_from_logits(logits[:, :2], None).tolist() == [2.0, -3.0]
    assert reward_from_logits(logits, 2).tolist() == [0.5, 4.0]
    with pytest.raises(EvaluationError, match="--label-index"):
        reward_from_logits(logits, None)


def test_it_refuses_a_model_without_a_trained_reward_head(judge_a_dir):
    """A causal LM loaded as a classifier would get a random head; that is an error."""
    with pytest.raises(EvaluationError, match="no trained reward head"):
        load_reward_model(str(judge_a_dir))


def test_it_pads_with_eos_when_the_tokenizer_has_no_pad_token(tmp_path, random_model):
    """A tokenizer without a pad token gets EOS as one, and batches of several score as usual."""
    tokenizer = tiny.make_tokenizer()
    tokenizer.pad_token = None
    folder = tiny.save(tiny.random_reward_model(tokenizer), tokenizer, tmp_path / "no-pad")
    loaded = load_reward_model(str(folder))
    assert loaded.tokenizer.pad_token_id == loaded.tokenizer.eos_token_id
    result = score_records(RECORDS, ScoreConfig(model="no-pad", resamples=0), model=loaded)
    expected = score_records(RECORDS, ScoreConfig(model="rm", resamples=0), model=random_model)
    assert_same_scores(result, expected)


def test_it_scores_with_the_bos_a_template_leaves_out(tmp_path):
    """A template without ``{{ bos_token }}`` for a tokenizer that adds BOS: the scores are those
    of the rendered chat encoded the plain way, BOS first, as the model was trained."""
    tokenizer = tiny.make_tokenizer(template=tiny.TEMPLATE_WITHOUT_BOS)
    folder = tiny.save(tiny.random_reward_model(tokenizer), tokenizer, tmp_path / "rm")
    loaded = load_reward_model(str(folder))
    result = score_records(RECORDS[:4], ScoreConfig(model="rm", resamples=0), model=loaded)
    with torch.inference_mode():
        for record, pair in zip(RECORDS[:4], result.pairs, strict=True):
            chat = [
                {"role": "user", "content": record["question"]},
                {"role": "assistant", "content": record["chosen"]},
            ]
            text = tokenizer.apply_chat_template(chat, tokenize=False)
            ids = tokenizer(text)["input_ids"]
            assert ids[0] == tokenizer.bos_token_id
            alone = loaded.model(input_ids=torch.tensor([ids])).logits[0, 0].item()
            assert pair.chosen_score == pytest.approx(alone, abs=1e-4)
            assert pair.chosen_tokens == len(ids)
