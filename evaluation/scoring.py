"""Score preference pairs with a classifier reward model (or a judge, see :mod:`evaluation.judge`).

The library entry point is :func:`score_records`. How scores are made trustworthy and fast:

- every sequence is tokenized once; sequences are sorted by length and batched by a token
  budget, padded within their batch only, and put back in input order;
- a sequence's score is read at its last real token whatever the padding side, so a pair's
  score does not depend on its batch (:mod:`evaluation.forward`);
- with ``prefix_reuse`` (profile mode by default), the prompt chosen and rejected share is run
  once and its KV cache serves both answers (:mod:`evaluation.prefix`).
"""

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from evaluation import distributed
from evaluation.baselines import is_builtin, score_builtin
from evaluation.config import Readout, ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.forward import forward_rewards, reward_from_logits, score_sequences
from evaluation.inputs import TokenizedPair, check_mode, require_chat_template, tokenize_pairs
from evaluation.judge_order import judge_positions
from evaluation.metrics import outcome_of
from evaluation.models import LoadedModel, load_judge, load_reward_model
from evaluation.prefix import score_shared_prefix, supports_prefix_reuse
from evaluation.records import PairRecord, as_pair_records
from evaluation.results import PairScore, RunStats, ScoreResult
from evaluation.run_card import model_card
from evaluation.run_summary import ranked, summarize
from evaluation.self_check import Alone, SelfCheck, enforce, run_self_check


def score_records(
    records: Iterable[Mapping[str, Any] | PairRecord],
    config: ScoreConfig,
    *,
    model: LoadedModel | None = None,
) -> ScoreResult:
    """Score every pair and summarise accuracy.

    ``records`` are dicts in the official or plain shape (or :class:`PairRecord`); the private
    fields (``rubric_aspects``, ``narrative``) are dropped before anything is tokenized.
    ``model`` reuses an already loaded model; by default ``config.model`` is loaded.

    Under ``torchrun`` each process scores its share and every process returns the whole
    result. ``ScoreResult.pairs`` is in input order. A ``builtin:`` model (see
    :mod:`evaluation.baselines`) is computed without loading anything.
    """
    if is_builtin(config.model):
        return score_builtin(records, config)
    if config.endpoint is not None:
        from evaluation.remote_judge import score_remote  # no model to load here

        return score_remote(records, config)
    pairs = as_pair_records(records)
    check_mode(pairs, config.mode)
    pairs = ranked(pairs, config)
    shard = distributed.current_shard()
    local = [pairs[index] for index in shard.indices(len(pairs))]
    positions = judge_positions(pairs, config) if config.judge else None
    failure = None
    loaded = model
    local_scores: list[PairScore] = []
    stats = RunStats()
    started = time.perf_counter()
    try:
        loaded = loaded or load_model(config)
        require_chat_template(loaded.tokenizer, loaded.name)
        started = time.perf_counter()
        local_scores, stats = score_local(loaded, local, config, positions)
    except EvaluationError as error:
        if shard.world_size == 1:
            raise
        failure = str(error)
    # Every process must hear of a failure, or the others would wait for the failed one forever.
    distributed.raise_if_any_failed(failure, shard)
    assert loaded is not None
    stats.seconds = time.perf_counter() - started
    stats.world_size = shard.world_size
    scores = distributed.gather_in_order(local_scores, shard, len(pairs))
    if shard.world_size > 1:
        stats = _sum_stats(stats, shard)
    result = summarize(pairs, scores, stats, config, loaded.max_length, environment(loaded))
    if config.self_check:
        check = self_check(loaded, pairs, scores, config, positions)
        result.self_check = check.as_dict()
        enforce(check)
    if shard.is_main:  # the card hashes the model's files: once is enough
        result.card = model_card(loaded, config, world_size=shard.world_size)
    return result


def self_check(
    loaded: LoadedModel,
    pairs: Sequence[PairRecord],
    scores: Sequence[PairScore],
    config: ScoreConfig,
    positions: Mapping[str, list[str]] | None = None,
) -> SelfCheck:
    """The batched scores against those of each sampled pair scored on its own."""
    if config.judge:
        method = "a judge: each pair alone"
    else:
        method = "each answer alone: a batch of one, no padding, no shared prompt"
    return run_self_check(
        pairs,
        scores,
        lambda pair: score_alone(loaded, pair, config, positions),
        wanted=config.self_check,
        seed=config.seed,
        allow_flips=config.allow_flips,
        method=method,
    )


def score_alone(
    loaded: LoadedModel,
    pair: PairRecord,
    config: ScoreConfig,
    positions: Mapping[str, list[str]] | None = None,
) -> Alone:
    """One pair's scores and outcome, with nothing else in its batch (a judge shows it in the
    order ``positions`` gives it in the whole run)."""
    if config.judge:
        from evaluation.judge import judge_pairs

        [judged], _ = judge_pairs(loaded, [pair], config, positions)
        return judged.chosen_score, judged.rejected_score, judged.outcome
    max_length, _ = config.length_limit(loaded.max_length)
    # A pair without posts reads the same in both modes; profile mode alone would refuse it.
    mode = config.mode if pair.profile else "question"
    [tokens] = tokenize_pairs(
        loaded.tokenizer,
        [pair],
        mode,
        top_k=config.top_k,
        max_length=max_length,
        profile_format=config.profile_format,
        too_long_advice=config.too_long_advice(),
    )
    side = str(config.padding_side or getattr(loaded.tokenizer, "padding_side", "right"))
    chosen, rejected = (
        float(forward_rewards(loaded, [ids], side=side, label_index=config.readout)[0])
        for ids in (tokens.chosen, tokens.rejected)
    )
    return chosen, rejected, outcome_of(chosen, rejected, config.tie_tolerance)


def score_local(
    loaded: LoadedModel,
    pairs: Sequence[PairRecord],
    config: ScoreConfig,
    positions: Mapping[str, list[str]] | None = None,
) -> tuple[list[PairScore], RunStats]:
    if config.judge:
        from evaluation.judge import judge_pairs

        return judge_pairs(loaded, pairs, config, positions)
    return classify_pairs(loaded, pairs, config)


def load_model(config: ScoreConfig) -> LoadedModel:
    loader = load_judge if config.judge else load_reward_model
    loaded = loader(
        config.model,
        device=config.device,
        dtype=config.dtype,
        chat_template=config.chat_template,
        trust_remote_code=config.trust_remote_code,
    )
    if not config.judge:
        reward_from_logits(torch.zeros(1, loaded.model.config.num_labels), config.readout)
    return loaded


def environment(loaded: LoadedModel) -> dict[str, Any]:
    return {
        "device": str(loaded.device),
        "dtype": str(loaded.dtype).removeprefix("torch."),
        "torch": torch.__version__,
    }


def _sum_stats(stats: RunStats, shard: distributed.Shard) -> RunStats:
    import torch.distributed as dist

    everyone: list[RunStats | None] = [None] * shard.world_size
    dist.all_gather_object(everyone, stats)
    total = RunStats(world_size=shard.world_size)
    for item in everyone:
        if item is not None:
            total = total.add(item)
    return total


def classify_pairs(
    loaded: LoadedModel, pairs: Sequence[PairRecord], config: ScoreConfig
) -> tuple[list[PairScore], RunStats]:
    """Scores of this process's pairs with a classifier reward model, in the given order."""
    max_length, _ = config.length_limit(loaded.max_length)
    tokenized = tokenize_pairs(
        loaded.tokenizer,
        pairs,
        config.mode,
        top_k=config.top_k,
        max_length=max_length,
        profile_format=config.profile_format,
        too_long_advice=config.too_long_advice(),
    )
    use_prefix = config.prefix_reuse == "on" or (
        config.prefix_reuse == "auto" and config.mode == "profile"
    )
    chosen, rejected, stats = score_tokenized(
        loaded,
        tokenized,
        max_batch_tokens=config.batch_tokens(loaded.device),
        prefix_reuse=use_prefix,
        padding_side=config.padding_side,
        label_index=config.readout,
        progress=config.progress,
    )
    scores = [
        PairScore(
            id=pair.id,
            category=pair.category,
            outcome=outcome_of(c, r, config.tie_tolerance),
            chosen_score=c,
            rejected_score=r,
            chosen_tokens=len(tokens.chosen),
            rejected_tokens=len(tokens.rejected),
            profile_posts=tokens.profile_posts,
            profile_posts_dropped=tokens.profile_posts_dropped,
        )
        for pair, tokens, c, r in zip(
            pairs, tokenized, chosen.tolist(), rejected.tolist(), strict=True
        )
    ]
    return scores, stats


def score_tokenized(
    loaded: LoadedModel,
    pairs: Sequence[TokenizedPair],
    *,
    max_batch_tokens: int,
    prefix_reuse: bool = False,
    padding_side: str | None = None,
    label_index: Readout = None,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray, RunStats]:
    """Chosen and rejected rewards of tokenized pairs, in their order, and the work done."""
    real = sum(len(pair.chosen) + len(pair.rejected) for pair in pairs)
    stats = RunStats(pairs=len(pairs), sequences=2 * len(pairs), real_tokens=real)
    chosen = np.zeros(len(pairs))
    rejected = np.zeros(len(pairs))
    # Identical answers must tie exactly; scored in two batches they could differ in the last bit.
    shared = [
        i for i, pair in enumerate(pairs) if pair.shared_prefix > 0 and pair.chosen != pair.rejected
    ]
    if not (prefix_reuse and supports_prefix_reuse(loaded)):
        shared = []
    stats.prefix_reuse = bool(shared)
    whole = sorted(set(range(len(pairs))) - set(shared))
    with tqdm(total=real, unit="tok", unit_scale=True, disable=not progress, leave=False) as bar:
        if whole:
            sequences = [seq for i in whole for seq in (pairs[i].chosen, pairs[i].rejected)]
            side = str(padding_side or getattr(loaded.tokenizer, "padding_side", "right"))
            values, computed, useful = score_sequences(
                loaded, sequences, max_batch_tokens, side=side, label_index=label_index, bar=bar
            )
            chosen[whole], rejected[whole] = values[0::2], values[1::2]
            stats.computed_positions += computed
            stats.padding_positions += computed - useful
        if shared:
            c, r, computed, useful = score_shared_prefix(
                loaded,
                [pairs[i] for i in shared],
                max_batch_tokens,
                label_index=label_index,
                bar=bar,
            )
            chosen[shared], rejected[shared] = c, r
            stats.computed_positions += computed
            stats.padding_positions += computed - useful
    return chosen, rejected, stats
