"""A run's result from its pair scores: accuracy overall, per category and per group, a
judge's positions and the benchmark's count of it, and the length limit the inputs were fitted
to. Shared by runs in process (:mod:`evaluation.scoring`) and through an endpoint
(:mod:`evaluation.remote_judge`); no torch.
"""

from collections.abc import Sequence
from typing import Any

from evaluation.config import ScoreConfig
from evaluation.metrics import accuracy_summary, position_stats
from evaluation.paper_protocol import paper_accuracy
from evaluation.records import PairRecord
from evaluation.results import InputFit, PairScore, RunStats, ScoreResult, with_groups

AUTO_GROUP = "validation.verdict"


def ranked(pairs: list[PairRecord], config: ScoreConfig) -> list[PairRecord]:
    """``pairs`` with each user's posts ranked against the question, when the run asks."""
    if config.rank_profile is None:
        return pairs
    from evaluation.retrieval import rank_profiles

    return rank_profiles(pairs, config.rank_profile, device=config.device)


def summarize(
    pairs: Sequence[PairRecord],
    scores: Sequence[PairScore],
    stats: RunStats,
    config: ScoreConfig,
    model_limit: int | None,
    environment: dict[str, Any],
) -> ScoreResult:
    """The run's result: accuracy overall, per category and per group (and a judge's under
    the benchmark's count), positions, the length limit. ``model_limit``: the model's own
    length limit, when it is known here."""
    group_by = config.group_by
    if group_by is None and any(AUTO_GROUP in pair.labels for pair in pairs):
        group_by = AUTO_GROUP
    outcomes = [score.outcome for score in scores]
    groups = [pair.labels.get(group_by, "(none)") for pair in pairs] if group_by else None
    # Both counts (ours and, for a judge, the benchmark's) break down the same way.
    breakdown: dict[str, Any] = {
        "categories": [pair.category for pair in pairs],
        "groups": groups,
        "group_by": group_by,
        "confidence": config.confidence,
    }
    summary = accuracy_summary(outcomes, **breakdown)
    positions_seen = None
    paper = None
    fit = input_fit(pairs, scores, config, model_limit)
    if config.judge:
        positions_seen = position_stats(
            [[(verdict.named, verdict.picked) for verdict in score.verdicts] for score in scores]
        )
        paper = paper_accuracy(scores, **breakdown)
    return ScoreResult(
        pairs=with_groups(scores, groups),
        summary=summary,
        settings=config.as_dict(),
        stats=stats,
        positions=positions_seen,
        fit=fit,
        paper_summary=paper,
        environment=environment,
    )


def input_fit(
    pairs: Sequence[PairRecord],
    scores: Sequence[PairScore],
    config: ScoreConfig,
    model_limit: int | None,
) -> InputFit:
    """The length limit and, in profile mode, the posts dropped to fit it."""
    limit, source = config.length_limit(model_limit)
    dropped = [
        min(config.top_k, len(pair.profile)) - score.profile_posts
        for pair, score in zip(pairs, scores, strict=True)
        if config.mode == "profile"
    ]
    return InputFit(
        length_limit=limit,
        length_limit_source=source,
        mode=config.mode,
        pairs_with_posts_dropped=sum(1 for count in dropped if count > 0),
        posts_dropped=sum(dropped),
        model_max_positions=model_limit,
    )
