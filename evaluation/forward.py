"""Run a classifier reward model on batches of whole sequences.

A sequence's reward is read at its last real token, found from the attention mask (never from
the pad id, which may equal EOS), with positions counted over real tokens: left and right
padding give the same reward, and a sequence's reward does not depend on its batch. The head is
applied in float32 to that one token's hidden state, so bfloat16 weights do not round two close
rewards into a tie.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from evaluation.batching import last_real_token, pad_batch, padded_size, plan_batches, positions
from evaluation.config import SOFTMAX_LAST, Readout
from evaluation.errors import EvaluationError
from evaluation.interrupt import batch_done
from evaluation.models import LoadedModel


def readout_rule(labels: int, label_index: Readout) -> str:
    """In words, for the run card: how the reward is read from ``labels`` logits."""
    if labels == 1:
        return "the single logit"
    if label_index == SOFTMAX_LAST:
        return "softmax(logits)[-1], the paper's"
    if label_index is not None:
        return f"logit[{label_index}] (--label-index)"
    return "logit[1] - logit[0], the log-odds of label 1"


def reward_from_logits(logits: torch.Tensor, label_index: Readout) -> torch.Tensor:
    """One reward per row: the single logit; with two labels ``logit[1] - logit[0]`` (the
    log-odds of label 1); with more, the logit at ``label_index``, which must then be given.
    ``label_index="softmax-last"``: the probability of the last label, as the paper reads a
    head with several labels (a single logit is read as it is)."""
    labels = logits.shape[-1]
    if isinstance(label_index, str):  # SOFTMAX_LAST, the one word a readout may be
        return logits[:, 0] if labels == 1 else torch.softmax(logits, dim=-1)[:, -1]
    if label_index is not None:
        if not -labels <= label_index < labels:
            raise EvaluationError(
                f"--label-index {label_index} is out of range: the model has {labels} labels"
            )
        return logits[:, label_index]
    if labels == 1:
        return logits[:, 0]
    if labels == 2:
        return logits[:, 1] - logits[:, 0]
    raise EvaluationError(
        f"the model has {labels} labels; say which one is the reward with --label-index"
    )


def head_logits(loaded: LoadedModel, hidden: torch.Tensor) -> torch.Tensor:
    """The linear head in float32 on one hidden state per row."""
    head = loaded.head
    assert head is not None
    bias = head.bias.float() if head.bias is not None else None
    return torch.nn.functional.linear(hidden.float(), head.weight.float(), bias)


@torch.inference_mode()
def forward_rewards(
    loaded: LoadedModel,
    sequences: Sequence[Sequence[int]],
    *,
    side: str = "right",
    label_index: Readout = None,
) -> torch.Tensor:
    """Rewards of one batch of sequences (float32, on the CPU)."""
    if loaded.backbone is None:
        # Models pooling on their own (encoders read the first token) are run whole; right
        # padding keeps their default positions right.
        ids, mask = pad_batch(sequences, loaded.pad_id, "right")
        logits = loaded.model(
            input_ids=ids.to(loaded.device), attention_mask=mask.to(loaded.device)
        ).logits
        return reward_from_logits(logits.float(), label_index).cpu()
    ids, mask = pad_batch(sequences, loaded.pad_id, side)
    ids, mask = ids.to(loaded.device), mask.to(loaded.device)
    hidden = loaded.backbone(
        input_ids=ids, attention_mask=mask, position_ids=positions(mask), use_cache=False
    ).last_hidden_state
    rows = torch.arange(ids.shape[0], device=ids.device)
    logits = head_logits(loaded, hidden[rows, last_real_token(mask)])
    return reward_from_logits(logits, label_index).cpu()


def score_sequences(
    loaded: LoadedModel,
    sequences: Sequence[Sequence[int]],
    max_batch_tokens: int,
    *,
    side: str = "right",
    label_index: Readout = None,
    bar: Any = None,
) -> tuple[np.ndarray, int, int]:
    """Reward of each sequence in input order, the token positions computed and those needed.

    A sequence that occurs twice is scored once, so identical answers get identical rewards.
    """
    unique: dict[tuple[int, ...], int] = {}
    slots = [unique.setdefault(tuple(sequence), len(unique)) for sequence in sequences]
    distinct = list(unique)
    lengths = [len(sequence) for sequence in distinct]
    batches = plan_batches(lengths, max_batch_tokens)
    rewards = np.zeros(len(distinct))
    for batch in batches:
        rewards[batch] = forward_rewards(
            loaded, [distinct[i] for i in batch], side=side, label_index=label_index
        ).numpy()
        if bar is not None:
            bar.update(sum(lengths[i] for i in batch))
        batch_done()
    return rewards[slots], padded_size(batches, lengths), sum(lengths)
