"""Score a pair's two answers with their shared prompt run once.

In profile mode chosen and rejected share a long prompt (profile posts, question, template).
The prompt is run once with a KV cache, and the cache serves both answers. This needs a
decoder whose every layer attends to the whole past (checked by :func:`supports_prefix_reuse`);
other models run whole sequences (:mod:`evaluation.forward`).
"""

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from evaluation.batching import MAX_PADDING, last_real_token, pad_batch, positions
from evaluation.config import Readout
from evaluation.forward import head_logits, reward_from_logits
from evaluation.inputs import TokenizedPair
from evaluation.interrupt import batch_done
from evaluation.models import LoadedModel


def supports_prefix_reuse(loaded: LoadedModel) -> bool:
    """Whether the backbone takes a KV cache and attends fully in every layer.

    Sliding-window or recurrent layers would count the padding between a prompt and its answer
    against their window, so they run whole sequences instead.
    """
    if loaded.backbone is None:
        return False
    if "cache" not in inspect.signature(loaded.backbone.forward).parameters:
        return False
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    cache = DynamicCache(config=loaded.model.config)
    return bool(cache.layers) and all(type(layer) is DynamicLayer for layer in cache.layers)


def plan_prefix_batches(
    prefixes: Sequence[int], suffixes: Sequence[int], max_tokens: int
) -> list[list[int]]:
    """Pair batches, longest prompt first, within the budget in both passes.

    The prompt pass runs one row per pair, the answer pass two (chosen and rejected).
    """
    order = sorted(range(len(prefixes)), key=lambda index: (-prefixes[index], index))
    batches: list[list[int]] = []
    current: list[int] = []
    longest_suffix = 0
    for index in order:
        rows = len(current) + 1
        suffix = max(longest_suffix, suffixes[index])
        prompt = prefixes[current[0]] if current else prefixes[index]
        if current and (
            rows * prompt > max_tokens
            or 2 * rows * suffix > max_tokens
            or prefixes[index] < (1 - MAX_PADDING) * prompt
        ):
            batches.append(current)
            current, suffix = [], suffixes[index]
        current.append(index)
        longest_suffix = suffix
    if current:
        batches.append(current)
    return batches


@torch.inference_mode()
def forward_shared_prefix(
    loaded: LoadedModel, pairs: Sequence[TokenizedPair], label_index: Readout = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Chosen and rejected rewards of a batch of pairs, their shared prompt run once.

    Prompts are padded on the right and run with a cache; the cache is repeated for the two
    answers of each pair, which continue at their prompt's length. The padding between a short
    prompt and its answer is masked out, and positions continue from the real prompt length,
    so each answer sees exactly what it would in its whole sequence.
    """
    from transformers import DynamicCache

    assert loaded.backbone is not None
    cuts = [pair.shared_prefix for pair in pairs]
    device = loaded.device
    prompt_ids, prompt_mask = pad_batch(
        [pair.chosen[:cut] for pair, cut in zip(pairs, cuts, strict=True)], loaded.pad_id
    )
    prompt_ids, prompt_mask = prompt_ids.to(device), prompt_mask.to(device)
    cache = DynamicCache(config=loaded.model.config)
    loaded.backbone(
        input_ids=prompt_ids,
        attention_mask=prompt_mask,
        position_ids=positions(prompt_mask),
        cache=cache,
        use_cache=True,
    )
    cache.batch_repeat_interleave(2)
    answers = [
        seq[cut:]
        for pair, cut in zip(pairs, cuts, strict=True)
        for seq in (pair.chosen, pair.rejected)
    ]
    answer_ids, answer_mask = pad_batch(answers, loaded.pad_id)
    answer_ids, answer_mask = answer_ids.to(device), answer_mask.to(device)
    starts = torch.tensor(cuts, device=device).repeat_interleave(2)
    hidden = loaded.backbone(
        input_ids=answer_ids,
        attention_mask=torch.cat([prompt_mask.repeat_interleave(2, dim=0), answer_mask], dim=1),
        position_ids=positions(answer_mask, starts),
        cache=cache,
        use_cache=True,
    ).last_hidden_state
    rows = torch.arange(answer_ids.shape[0], device=device)
    rewards = reward_from_logits(
        head_logits(loaded, hidden[rows, last_real_token(answer_mask)]), label_index
    ).cpu()
    return rewards[0::2], rewards[1::2]


def score_shared_prefix(
    loaded: LoadedModel,
    pairs: Sequence[TokenizedPair],
    max_batch_tokens: int,
    *,
    label_index: Readout = None,
    bar: Any = None,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Rewards of pairs with their shared prompt run once; positions computed and needed."""
    prefixes = [pair.shared_prefix for pair in pairs]
    suffixes = [max(len(pair.chosen), len(pair.rejected)) - pair.shared_prefix for pair in pairs]
    chosen = np.zeros(len(pairs))
    rejected = np.zeros(len(pairs))
    computed = 0
    for batch in plan_prefix_batches(prefixes, suffixes, max_batch_tokens):
        members = [pairs[i] for i in batch]
        c, r = forward_shared_prefix(loaded, members, label_index)
        chosen[batch], rejected[batch] = c.numpy(), r.numpy()
        computed += len(batch) * max(prefixes[i] for i in batch) + 2 * len(batch) * max(
            suffixes[i] for i in batch
        )
        if bar is not None:
            bar.update(sum(len(pair.chosen) + len(pair.rejected) for pair in members))
        batch_done()
    useful = sum(len(p.chosen) + len(p.rejected) - p.shared_prefix for p in pairs)
    return chosen, rejected, computed, useful
