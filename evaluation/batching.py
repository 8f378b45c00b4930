"""Group sequences into batches by a token budget and pad them, within a batch only.

Sorting by length before batching means a batch holds sequences of similar length, so little
is spent on padding; the caller puts results back in input order by index.

>>> plan_batches([38, 90, 40, 88, 39], max_tokens=200)
[[1, 3], [2, 4, 0]]
"""

from collections.abc import Sequence

import torch

# A batch closes when the next sequence is this much shorter than its longest: on small or
# spread-out data the budget alone would pad short sequences to long ones.
MAX_PADDING = 0.05


def plan_batches(
    lengths: Sequence[int],
    max_tokens: int,
    *,
    max_rows: int | None = None,
    max_padding: float = MAX_PADDING,
) -> list[list[int]]:
    """Indices into ``lengths``, longest first, in batches whose padded size fits ``max_tokens``.

    The padded size of a batch is its row count times its longest length; no member is more
    than ``max_padding`` (a share of the longest) shorter than the longest. A sequence longer
    than the budget gets a batch of its own. Equal lengths keep their input order, so the plan
    is deterministic. Longest first also means running out of memory happens at once, not
    after an hour.
    """
    order = sorted(range(len(lengths)), key=lambda index: (-lengths[index], index))
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        if current:
            # Sorted longest first, so the first member of a batch is its longest.
            longest = lengths[current[0]]
            if (
                (len(current) + 1) * longest > max_tokens
                or lengths[index] < (1 - max_padding) * longest
                or (max_rows is not None and len(current) >= max_rows)
            ):
                batches.append(current)
                current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def padded_size(batches: Sequence[Sequence[int]], lengths: Sequence[int]) -> int:
    """Token positions computed for ``batches``, padding included."""
    return sum(len(batch) * max(lengths[index] for index in batch) for batch in batches)


def pad_batch(
    sequences: Sequence[Sequence[int]], pad_id: int, side: str = "right"
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(input_ids, attention_mask)`` padded to the longest sequence, on ``side``.

    >>> ids, mask = pad_batch([[5, 6, 7], [8]], pad_id=0, side="left")
    >>> ids.tolist(), mask.tolist()
    ([[5, 6, 7], [0, 0, 8]], [[1, 1, 1], [0, 0, 1]])
    """
    if side not in ("left", "right"):
        raise ValueError(f"padding side must be 'left' or 'right', not {side!r}")
    longest = max(len(sequence) for sequence in sequences)
    ids = torch.full((len(sequences), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), longest), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        span = (
            slice(0, len(sequence)) if side == "right" else slice(longest - len(sequence), longest)
        )
        ids[row, span] = torch.tensor(sequence, dtype=torch.long)
        mask[row, span] = 1
    return ids, mask


def positions(mask: torch.Tensor, start: torch.Tensor | None = None) -> torch.Tensor:
    """Position of each token counted over real tokens only, from ``start`` (default 0).

    Left padding shifts a sequence to the right; without this it would be read at positions it
    never had when scored alone, and its score would depend on its batch.
    """
    counted = (mask.cumsum(-1) - 1).clamp(min=0)
    return counted if start is None else counted + start.unsqueeze(-1)


def last_real_token(mask: torch.Tensor) -> torch.Tensor:
    """Index of the last real token of each row, whatever the padding side.

    Read from the mask, not from the ids: when the pad id equals EOS, a sequence that ends with
    EOS would otherwise be read one token early.
    """
    columns = torch.arange(mask.shape[-1], device=mask.device)
    return (columns * mask).argmax(-1)
