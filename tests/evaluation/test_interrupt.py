"""A caller can stop a model pass between two batches (``evaluation.interrupt``): its check
runs at every batch of a real tiny reward model's pass and of a judge's generation, and the
error it raises ends the pass there, with no result."""

from pathlib import Path
from typing import Any

import pytest

from evaluation.config import ScoreConfig
from evaluation.interrupt import batch_done, between_batches
from evaluation.scoring import score_records
from tests.support import tiny


class Stop(Exception):
    pass


class Counting:
    """A check that counts the batches it is called at, and raises at ``stop_at`` if given."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.calls = 0
        self.stop_at = stop_at

    def __call__(self) -> None:
        self.calls += 1
        if self.calls == self.stop_at:
            raise Stop()


def config(model: Path, **options: Any) -> ScoreConfig:
    # A small budget: the 12 pairs' 24 answers take many batches.
    return ScoreConfig(model=str(model), max_batch_tokens=256, prefix_reuse="off", **options)


def test_a_check_runs_at_every_batch_and_stops_the_pass_where_it_raises(
    reward_model_dir: Path,
) -> None:
    whole = Counting()
    with between_batches(whole):
        result = score_records(tiny.records(12), config(reward_model_dir))
    assert len(result.pairs) == 12
    assert whole.calls > 3  # one per batch

    stopped = Counting(stop_at=2)
    with between_batches(stopped), pytest.raises(Stop):
        score_records(tiny.records(12), config(reward_model_dir))
    assert stopped.calls == 2  # no batch after the one it stopped at


def test_a_judges_generation_is_stopped_too(causal_judge_dir: Path) -> None:
    stopped = Counting(stop_at=1)
    with between_batches(stopped), pytest.raises(Stop):
        score_records(tiny.records(6), config(causal_judge_dir, judge=True))
    assert stopped.calls == 1


def test_the_checks_nest_and_end_with_their_block() -> None:
    order: list[str] = []
    with between_batches(lambda: order.append("outer")):
        with between_batches(lambda: order.append("inner")):
            batch_done()
        batch_done()
    batch_done()  # outside every block: nothing runs
    assert order == ["outer", "inner", "outer"]
