"""The benchmark's own count of a judge run, beside ours.

We keep a judge reply that names no answer apart (``unparsed``: neither right nor wrong). The
benchmark's evaluator reads such a reply as "A", so its figure counts it right when the chosen
answer was shown first and wrong otherwise, and every pair enters its accuracy. Both figures are
reported: ours in ``accuracy``, the benchmark's in ``accuracy_paper`` of ``summary.json``, with
ties counted as wrong as the paper counts them.
"""

from collections.abc import Sequence

from evaluation.metrics import AccuracySummary, accuracy_summary
from evaluation.results import PAPER_RULE as RULE
from evaluation.results import UNPARSED_READ_AS, JudgeVerdict, PairScore

__all__ = ["RULE", "UNPARSED_READ_AS", "paper_accuracy", "paper_outcome", "paper_pick"]


def paper_pick(verdict: JudgeVerdict) -> str:
    """The answer a verdict picks under the benchmark's rule: an unparsed reply names "A"."""
    named = verdict.named or UNPARSED_READ_AS
    return "chosen" if named == verdict.chosen_position else "rejected"


def paper_outcome(score: PairScore) -> str:
    """A pair's outcome when its unparsed replies are read as "A" (a classifier's is its own)."""
    if not score.verdicts:
        return score.outcome
    picks = {paper_pick(verdict) for verdict in score.verdicts}
    if picks == {"chosen"}:
        return "correct"
    if picks == {"rejected"}:
        return "wrong"
    return "tie"


def paper_accuracy(
    scores: Sequence[PairScore],
    *,
    categories: Sequence[str],
    groups: Sequence[str] | None,
    group_by: str | None,
    confidence: float,
) -> AccuracySummary:
    """Accuracy of a judge run with unparsed replies read as "A"."""
    return accuracy_summary(
        [paper_outcome(score) for score in scores],
        categories=categories,
        groups=groups,
        group_by=group_by,
        confidence=confidence,
    )
