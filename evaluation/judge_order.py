"""Where a judge is shown the chosen answer: as A or as B, for each judgement of each pair.

By default the order is drawn per pair from the seed and the pair's id, so that a pair gets the
same order on any number of processes and in any record order; ``both_orders`` asks both. With
``paper_settings`` it is drawn as the benchmark draws it (:func:`paper_positions`). Either way
the orders of the whole run are drawn before its pairs are shared out between processes.
"""

import random
from collections.abc import Sequence

from evaluation.config import ScoreConfig
from evaluation.records import PairRecord

__all__ = ["chosen_positions", "judge_positions", "paper_positions"]


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
    if config.paper_settings and not config.both_orders:
        return paper_positions(records, config.seed)
    return {r.id: chosen_positions(r.id, config.seed, config.both_orders) for r in records}
