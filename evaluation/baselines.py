"""Built-in reward models that need no weights: reference lines to report next to any RM.

``builtin:length`` gives each answer its length in characters as its reward, so the longer
answer wins and answers of equal length tie. Length is the best-known spurious cue of
preference data (RMs and people both drift towards longer answers), so a benchmark on which
this baseline scores well measures length as much as preference. It needs no model, no
tokenizer and no torch, and runs anywhere ``python -m evaluation score`` or
``manage.py evaluate`` runs::

    python -m evaluation score --data export/ --model builtin:length --out runs/length
"""

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from evaluation.config import ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.inputs import check_mode
from evaluation.metrics import accuracy_summary, outcome_of
from evaluation.records import PairRecord, as_pair_records
from evaluation.results import PairScore, RunStats, ScoreResult

PREFIX = "builtin:"
# The label a scorer groups by when records carry it (as ``scoring.summarize`` does).
AUTO_GROUP = "validation.verdict"


def answer_length(answer: str) -> float:
    """The length baseline's reward: the answer's length in characters."""
    return float(len(answer))


BASELINES: dict[str, Callable[[str], float]] = {"length": answer_length}


def is_builtin(model: str) -> bool:
    return model.startswith(PREFIX)


def baseline(model: str) -> Callable[[str], float]:
    name = model.removeprefix(PREFIX)
    if name not in BASELINES:
        known = ", ".join(PREFIX + key for key in BASELINES)
        raise EvaluationError(f"unknown built-in model {model!r} (known: {known})")
    return BASELINES[name]


def score_builtin(
    records: Iterable[Mapping[str, Any] | PairRecord], config: ScoreConfig
) -> ScoreResult:
    """What ``scoring.score_records`` returns, for a ``builtin:`` model."""
    reward = baseline(config.model)
    if config.judge:
        raise EvaluationError(f"{config.model} is a reward baseline, not a judge")
    pairs = as_pair_records(records)
    check_mode(pairs, config.mode)
    started = time.perf_counter()
    scores = [_pair_score(pair, reward, config.tie_tolerance) for pair in pairs]
    stats = RunStats(pairs=len(pairs), sequences=2 * len(pairs))
    stats.seconds = time.perf_counter() - started
    group_by = config.group_by
    if group_by is None and any(AUTO_GROUP in pair.labels for pair in pairs):
        group_by = AUTO_GROUP
    summary = accuracy_summary(
        [score.outcome for score in scores],
        categories=[pair.category for pair in pairs],
        groups=[pair.labels.get(group_by, "(none)") for pair in pairs] if group_by else None,
        group_by=group_by,
        resamples=config.resamples,
        confidence=config.confidence,
        seed=config.seed,
    )
    return ScoreResult(
        pairs=scores,
        summary=summary,
        settings=config.as_dict(),
        stats=stats,
        environment={"device": "none", "dtype": "none", "baseline": config.model},
    )


def _pair_score(pair: PairRecord, reward: Callable[[str], float], tolerance: float) -> PairScore:
    chosen, rejected = reward(pair.chosen), reward(pair.rejected)
    return PairScore(
        id=pair.id,
        category=pair.category,
        outcome=outcome_of(chosen, rejected, tolerance),
        chosen_score=chosen,
        rejected_score=rejected,
    )
