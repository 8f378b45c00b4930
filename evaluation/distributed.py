"""Split pairs across ``torchrun`` processes and gather their results.

``torchrun --nproc_per_node N -m evaluation score ...`` starts N processes; each scores every
N-th pair (pair ``i`` goes to rank ``i % N``) and the results are gathered on every rank,
back in input order. One process per GPU (``cuda:LOCAL_RANK``); on CPU the gloo backend.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import torch
import torch.distributed as dist

T = TypeVar("T")


@dataclass(frozen=True)
class Shard:
    rank: int = 0
    world_size: int = 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def indices(self, count: int) -> list[int]:
        """This process's share of ``count`` items: every ``world_size``-th, from ``rank``.

        Interleaving rather than cutting in blocks spreads long and short pairs evenly when a
        file is ordered by category or length.
        """
        return list(range(self.rank, count, self.world_size))


def launched_by_torchrun() -> bool:
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def init_from_env(device: torch.device) -> Shard:
    """Join the process group torchrun set up (NCCL on CUDA, gloo otherwise), if any."""
    if not launched_by_torchrun():
        return Shard()
    if not dist.is_initialized():
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return current_shard()


def current_shard() -> Shard:
    if dist.is_available() and dist.is_initialized():
        return Shard(dist.get_rank(), dist.get_world_size())
    return Shard()


def gather_in_order(local: Sequence[T], shard: Shard, count: int) -> list[T]:
    """Every rank's items, placed back at their input positions (see :meth:`Shard.indices`)."""
    if shard.world_size == 1:
        return list(local)
    gathered: list[list[T] | None] = [None] * shard.world_size
    dist.all_gather_object(gathered, list(local))
    merged: list[T | None] = [None] * count
    for rank, items in enumerate(gathered):
        for index, item in zip(
            Shard(rank, shard.world_size).indices(count), items or [], strict=True
        ):
            merged[index] = item
    if any(item is None for item in merged):
        raise RuntimeError("a rank returned fewer results than it was given pairs")
    return [item for item in merged if item is not None]


def raise_if_any_failed(failure: str | None, shard: Shard) -> None:
    """Raise on every process if any process failed (``failure`` is this one's message)."""
    from evaluation.errors import EvaluationError

    if shard.world_size == 1:
        if failure is not None:
            raise EvaluationError(failure)
        return
    failures: list[str | None] = [None] * shard.world_size
    dist.all_gather_object(failures, failure)
    if failures[0] is not None and all(message == failures[0] for message in failures):
        raise EvaluationError(failures[0])  # the same on every process: say it once, plainly
    for rank, message in enumerate(failures):
        if message is not None:
            raise EvaluationError(f"process {rank}: {message}")


def finish(shard: Shard) -> None:
    if shard.world_size > 1 and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
