"""Batching by token budget and padding, checked against literal tensors."""

import random

import torch

from evaluation.batching import last_real_token, pad_batch, padded_size, plan_batches, positions


def test_it_pads_on_either_side_and_reads_the_last_real_token():
    """Pad id 2 is also the EOS that ends the second sequence: the mask, not the id, says
    which token is the last real one; positions count real tokens only."""
    sequences = [[5, 6, 7, 8], [9, 2]]
    ids, mask = pad_batch(sequences, pad_id=2, side="right")
    assert ids.tolist() == [[5, 6, 7, 8], [9, 2, 2, 2]]
    assert mask.tolist() == [[1, 1, 1, 1], [1, 1, 0, 0]]
    assert last_real_token(mask).tolist() == [3, 1]
    assert positions(mask).tolist() == [[0, 1, 2, 3], [0, 1, 1, 1]]

    ids, mask = pad_batch(sequences, pad_id=2, side="left")
    assert ids.tolist() == [[5, 6, 7, 8], [2, 2, 9, 2]]
    assert mask.tolist() == [[1, 1, 1, 1], [0, 0, 1, 1]]
    assert last_real_token(mask).tolist() == [3, 3]
    assert positions(mask).tolist() == [[0, 1, 2, 3], [0, 0, 0, 1]]
    assert positions(mask, torch.tensor([10, 20])).tolist() == [[10, 11, 12, 13], [20, 20, 20, 21]]


def test_it_plans_batches_within_the_budget():
    """Every index once, longest first, no batch over budget unless a sequence alone is, and
    no member much shorter than its batch's longest."""
    rng = random.Random(0)
    lengths = [rng.randint(1, 300) for _ in range(500)] + [900]
    batches = plan_batches(lengths, max_tokens=1024)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert batches[0] == [500]
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) * longest <= 1024
        assert min(lengths[i] for i in batch) >= 0.95 * longest
    waste = padded_size(batches, lengths) / sum(lengths) - 1
    assert waste < 0.05
    assert plan_batches([10, 10, 10], max_tokens=100, max_rows=2) == [[0, 1], [2]]
    assert plan_batches([5000, 10], max_tokens=100) == [[0], [1]]
