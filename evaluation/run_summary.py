"""A run's result from its pair scores: accuracy overall, per category and per group, a
judge's positions and the benchmark's count of it, and the length limit the inputs were fitted
to. Shared by runs in process (:mod:`evaluation.scoring`), through an endpoint
(:mod:`evaluation.remote_judge`) and the built-in baselines (:mod:`evaluation.baselines`);
no torch.

Audit subsets. A pair's ``validation.verdict`` is ``validated``, ``excluded`` (it failed) or
``undecided``; its audit subset is ``validated`` or ``excluded``, where excluded is every pair
that did not pass, failed or still undecided, as exports and the evaluations page count them.
:func:`evaluation.records.audit_subset` is that definition: ``score`` groups by it and
``compare`` reads runs with it (:mod:`evaluation.runs`), so "excluded" names the same pairs in
both.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evaluation.config import ScoreConfig
from evaluation.metrics import accuracy_summary, position_stats
from evaluation.paper_protocol import paper_accuracy
from evaluation.records import EXCLUDED_VERDICTS, SUBSET_OF_VERDICT, PairRecord, audit_subset
from evaluation.results import InputFit, PairScore, RunStats, ScoreResult, with_groups

# The label a run groups by when its records carry it and no --group-by is given.
AUTO_GROUP = "validation.verdict"
VERDICT_LABEL = AUTO_GROUP
EXCLUDED_WORDS = (
    "excluded: every pair that did not pass, failed or still undecided (the same pairs in "
    "score, compare, exports and the evaluations page)"
)


@dataclass(frozen=True)
class Grouping:
    """What a run groups its pairs by (``label``), each pair's group, and, when the groups are
    the audit subsets of ``validation.verdict``, what they hold (``about``, for summary.json)."""

    label: str | None
    groups: list[str] | None
    about: dict[str, Any] | None = None


def grouping(pairs: Sequence[PairRecord], group_by: str | None) -> Grouping:
    """The run's groups: by ``group_by``, else by ``validation.verdict`` when a record has it.

    Grouped by ``validation.verdict``, a pair's group is its audit subset (an undecided pair is
    excluded); a pair without a verdict is ``(none)``.
    """
    label = group_by
    if label is None and any(AUTO_GROUP in pair.labels for pair in pairs):
        label = AUTO_GROUP
    if label is None:
        return Grouping(None, None)
    values = [pair.labels.get(label, "(none)") for pair in pairs]
    if label != VERDICT_LABEL:
        return Grouping(label, values)
    groups = [audit_subset(value) or value for value in values]
    return Grouping(label, groups, _about_subsets(label, values))


def _about_subsets(label: str, verdicts: Sequence[str]) -> dict[str, Any]:
    """What the audit subsets hold, for summary.json and the table: the verdicts in each, and
    how many pairs of each verdict the excluded subset holds here."""
    counts = {verdict: verdicts.count(verdict) for verdict in EXCLUDED_VERDICTS}
    return {
        "label": label,
        "subsets": {
            subset: [v for v, s in SUBSET_OF_VERDICT.items() if s == subset]
            for subset in dict.fromkeys(SUBSET_OF_VERDICT.values())
        },
        "excluded_by_verdict": counts,
        "words": f"{EXCLUDED_WORDS}; here {_count_words(counts)}",
    }


def _count_words(counts: dict[str, int]) -> str:
    """How many pairs of each verdict the excluded subset holds: ``3 with the verdict
    excluded and 2 with the verdict undecided``."""
    return " and ".join(f"{count} with the verdict {verdict}" for verdict, count in counts.items())


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
    grouped = grouping(pairs, config.group_by)
    outcomes = [score.outcome for score in scores]
    # Both counts (ours and, for a judge, the benchmark's) break down the same way.
    breakdown: dict[str, Any] = {
        "categories": [pair.category for pair in pairs],
        "groups": grouped.groups,
        "group_by": grouped.label,
        "confidence": config.confidence,
    }
    summary = accuracy_summary(outcomes, **breakdown)
    positions_seen = None
    paper = None
    fit = input_fit(scores, config, model_limit)
    if config.judge:
        positions_seen = position_stats(
            [[(verdict.named, verdict.picked) for verdict in score.verdicts] for score in scores]
        )
        paper = paper_accuracy(scores, **breakdown)
    return ScoreResult(
        pairs=with_groups(scores, grouped.groups),
        summary=summary,
        settings=config.as_dict(),
        stats=stats,
        positions=positions_seen,
        fit=fit,
        paper_summary=paper,
        environment=environment,
        grouping=grouped.about,
    )


def input_fit(
    scores: Sequence[PairScore],
    config: ScoreConfig,
    model_limit: int | None,
) -> InputFit:
    """The length limit and the profile posts dropped to fit it, as each pair's input recorded
    them (profile mode, or a judge template's ``{profile}`` in any mode)."""
    limit, source = config.length_limit(model_limit)
    dropped = [score.profile_posts_dropped for score in scores]
    return InputFit(
        length_limit=limit,
        length_limit_source=source,
        mode=config.mode,
        pairs_with_posts_dropped=sum(1 for count in dropped if count > 0),
        posts_dropped=sum(dropped),
        model_max_positions=model_limit,
    )
