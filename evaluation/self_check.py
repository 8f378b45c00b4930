"""``score --self-check N``: are a run's scores those of each pair scored on its own?

A reward model's score of an answer must not depend on the other sequences of its batch: with
padding that leaks into the attention, a wrong position count or a pad token read as the last
token, it does (reward-bench's issue #137). The check draws ``N`` pairs (seeded), scores each
one on its own (a classifier: each answer alone in a batch of one, no padding and no shared
prompt; a judge: the pair alone), and compares with the batched run: the largest
``|score alone - score batched|`` and the pairs whose decision (correct, wrong, tie) flips.
A run with flips fails unless ``--allow-flips``, before anything is written; a run that goes on
prints the figures and stores them in ``summary.json`` (``self_check``).
"""

import argparse
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from evaluation.errors import EvaluationError
from evaluation.records import PairRecord
from evaluation.results import PairScore

SHOWN_FLIPS = 20
# What scoring one pair alone gives: chosen score, rejected score, outcome.
Alone = tuple[float | None, float | None, str]


@dataclass(frozen=True)
class SelfCheck:
    pairs: int
    max_abs_delta: float
    flips: int
    flipped_ids: tuple[str, ...]
    allow_flips: bool
    method: str

    @property
    def passed(self) -> bool:
        return self.flips == 0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}


def sample_indices(count: int, wanted: int, seed: int) -> list[int]:
    """``wanted`` of ``count`` pair indices (all when fewer), drawn from ``seed``, in order."""
    if wanted >= count:
        return list(range(count))
    return sorted(random.Random(f"self-check:{seed}").sample(range(count), wanted))


def compare_alone(
    pairs: Sequence[PairRecord],
    batched: Sequence[PairScore],
    indices: Sequence[int],
    alone: Sequence[Alone],
    *,
    allow_flips: bool,
    method: str,
) -> SelfCheck:
    """The check's figures from each sampled pair's batched score and its score alone."""
    delta = 0.0
    flipped = []
    for index, (chosen, rejected, outcome) in zip(indices, alone, strict=True):
        score = batched[index]
        for single, together in ((chosen, score.chosen_score), (rejected, score.rejected_score)):
            if single is not None and together is not None:
                delta = max(delta, abs(single - together))
        if outcome != score.outcome:
            flipped.append(pairs[index].id)
    return SelfCheck(
        pairs=len(indices),
        max_abs_delta=delta,
        flips=len(flipped),
        flipped_ids=tuple(flipped[:SHOWN_FLIPS]),
        allow_flips=allow_flips,
        method=method,
    )


def run_self_check(
    pairs: Sequence[PairRecord],
    batched: Sequence[PairScore],
    score_alone: Callable[[PairRecord], Alone],
    *,
    wanted: int,
    seed: int,
    allow_flips: bool,
    method: str,
) -> SelfCheck:
    """Score the sampled pairs alone and compare. Under ``torchrun`` each process scores the
    sampled pairs of its own share, and every process gets the whole check."""
    from evaluation import distributed  # torch: only runs with a model get here

    indices = sample_indices(len(pairs), wanted, seed)
    shard = distributed.current_shard()
    mine = [index for index in indices if index % shard.world_size == shard.rank]
    results = {index: score_alone(pairs[index]) for index in mine}
    if shard.world_size > 1:
        import torch.distributed as dist

        everyone: list[dict[int, Alone] | None] = [None] * shard.world_size
        dist.all_gather_object(everyone, results)
        results = {index: item for part in everyone if part for index, item in part.items()}
    return compare_alone(
        pairs,
        batched,
        indices,
        [results[index] for index in indices],
        allow_flips=allow_flips,
        method=method,
    )


def enforce(check: SelfCheck) -> None:
    """Fail the run when a decision flipped and flips were not allowed."""
    if check.passed or check.allow_flips:
        return
    shown = ", ".join(repr(pair_id) for pair_id in check.flipped_ids[:5])
    more = ", ..." if check.flips > 5 else ""
    raise EvaluationError(
        f"self-check: {check.flips} of {check.pairs} pairs change decision when scored one at "
        f"a time ({shown}{more}; max |score alone - batched| {check.max_abs_delta:.3g}): the "
        "scores depend on the batch, so nothing was written; fix the model or its padding, or "
        "keep the run with --allow-flips"
    )


def add_self_check_arguments(parser: argparse.ArgumentParser, *, failing: str, kept: str) -> None:
    """``--self-check N`` and ``--allow-flips``, as ``python -m evaluation score`` and
    ``manage.py evaluate`` both take them; ``failing`` ends the first's help (what failing
    means), ``kept`` says what the second keeps."""
    parser.add_argument(
        "--self-check",
        type=int,
        default=0,
        metavar="N",
        help="also score N pairs one at a time and compare with the batched scores; a "
        f"decision that flips fails the run{failing}",
    )
    parser.add_argument(
        "--allow-flips", action="store_true", help=f"{kept} a run whose self-check found flips"
    )
