"""Where a judge is shown the chosen answer: as A or as B, for each judgement of each pair.

By default the order is drawn per pair from the seed and the pair's id, so that a pair gets the
same order on any number of processes and in any record order; ``both_orders`` asks both. With
``paper_settings`` it is drawn as the benchmark draws it (:func:`paper_positions`). Either way
the orders of the whole run are drawn before its pairs are shared out between processes.
"""

import random
from collections.abc import Sequence
from dataclasses import dataclass

from evaluation.config import ScoreConfig
from evaluation.records import PairRecord

__all__ = ["JudgeOrder", "chosen_positions", "judge_order", "judge_positions", "paper_positions"]


@dataclass(frozen=True)
class JudgeOrder:
    """How a run decides where the chosen answer is shown: ``key`` for code, ``words`` for the
    run card. :func:`judge_positions` draws the orders by it, so the card says what was done."""

    key: str
    words: str


# The card's words stay those of earlier runs' cards, so that cards can be compared.
BOTH_ORDERS = JudgeOrder("both", "both orders")
BENCHMARK_ORDER = JudgeOrder("benchmark", "the benchmark's")
SEEDED_ORDER = JudgeOrder("per-pair", "per pair, from the seed")


def judge_order(config: ScoreConfig) -> JudgeOrder:
    """The rule that decides the run's judge orders: both orders when asked (also with the
    paper's settings), else the benchmark's draw with the paper's settings, else per pair."""
    if config.both_orders:
        return BOTH_ORDERS
    if config.paper_settings:
        return BENCHMARK_ORDER
    return SEEDED_ORDER


def chosen_positions(pair_id: str, seed: int, both_orders: bool) -> list[str]:
    """Where the chosen answer is shown in each of the pair's judgements."""
    if both_orders:
        return ["A", "B"]
    # Seeded by the pair, not by its place in the run, so sharding cannot change it.
    return ["A" if random.Random(f"{seed}:{pair_id}").random() < 0.5 else "B"]


def paper_positions(records: Sequence[PairRecord], seed: int) -> dict[str, list[str]]:
    """Where the chosen answer is shown, drawn as the benchmark draws it: one generator seeded
    once per subset, one draw per pair in file order, chosen first when the draw is below 0.5.

    The benchmark scores each of its configs (subsets) in a run of its own, so the generator
    starts again for each config a folder holds; a single file is one subset.
    """
    generators: dict[str, random.Random] = {}
    positions = {}
    for record in records:
        subset = record.labels.get("config", "")
        generator = generators.setdefault(subset, random.Random(seed))
        positions[record.id] = ["A" if generator.random() < 0.5 else "B"]
    return positions


def judge_positions(records: Sequence[PairRecord], config: ScoreConfig) -> dict[str, list[str]]:
    """Each pair's judgements: where the chosen answer is shown in each, for the whole run
    (drawn before the pairs are shared out between processes)."""
    order = judge_order(config)
    if order is BENCHMARK_ORDER:
        return paper_positions(records, config.seed)
    both = order is BOTH_ORDERS
    return {r.id: chosen_positions(r.id, config.seed, both) for r in records}
