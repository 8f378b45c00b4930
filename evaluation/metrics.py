"""Accuracy of reward models and judges: outcomes, accuracy with its interval, the difference
between two sets of pairs, and a judge's positions. Pure functions over outcomes; nothing here
loads a model. Relating accuracy to downstream results is :mod:`evaluation.correlation`.

A pair's outcome is one of:

- ``correct``: the chosen answer scored above the rejected one (or the judge picked it);
- ``wrong``: the rejected answer scored above;
- ``tie``: equal scores (or a judge that changes its pick when the answers swap places): neither
  right nor wrong, so it is left out of accuracy and reported as the tie rate. reward-bench
  counts a tie as wrong, which rewards nothing and hides models that cannot tell answers apart;
- ``unparsed``: a judge's reply named no answer; counted and reported, never given to a side.

Accuracy is ``correct / (correct + wrong)``; ``accuracy_ties_as_wrong`` is
``correct / (correct + wrong + ties)``, the number the benchmark's own evaluator and the paper
report. Both come with Wilson's score interval with continuity correction (Newcombe 1998,
method 4), which keeps its 95 % at the few dozen pairs a category or an audit subset holds.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from evaluation.significance import corrected_wilson_interval, two_proportions

Outcome = Literal["correct", "wrong", "tie", "unparsed"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
ACCURACY_INTERVAL = "wilson_cc"
ACCURACY_INTERVAL_WORDS = "Wilson score interval with continuity correction (Newcombe method 4)"
ACCURACY_INTERVAL_NAME = "Wilson, continuity-corrected"
# What accuracy_difference gives, as compare does for validated against excluded pairs.
DIFFERENCE_INTERVAL = "newcombe_hybrid"
DIFFERENCE_TEST = "fisher_exact"


def outcome_of(chosen: float, rejected: float, tie_tolerance: float = 0.0) -> Outcome:
    """``correct`` when chosen beats rejected by more than ``tie_tolerance``, and so on."""
    if abs(chosen - rejected) <= tie_tolerance:
        return "tie"
    return "correct" if chosen > rejected else "wrong"


@dataclass(frozen=True)
class AccuracyStats:
    """Counts and accuracies of one set of pairs. ``ci_low`` / ``ci_high`` (and the ties-as-wrong
    pair) are the bounds of the interval named by ``interval``: Wilson's score interval with
    continuity correction over the pairs that enter each figure."""

    n: int
    correct: int
    wrong: int
    ties: int
    unparsed: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    tie_rate: float | None
    accuracy_ties_as_wrong: float | None
    accuracy_ties_as_wrong_ci_low: float | None
    accuracy_ties_as_wrong_ci_high: float | None
    confidence: float
    interval: str = ACCURACY_INTERVAL

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def accuracy_stats(outcomes: Sequence[str], *, confidence: float = 0.95) -> AccuracyStats:
    """Counts, accuracy with ties left out and with ties as wrong, each with Wilson's score
    interval with continuity correction, and the tie rate.

    The interval is exact arithmetic, not resampling: at 20 pairs it covers at least 0.958 of
    the time for any accuracy from 0.5 to 0.95, and 20 right of 20 gives [0.800, 1], where a
    percentile bootstrap gives [1, 1] and covers 0.64 at an accuracy of 0.95.

    >>> s = accuracy_stats(["correct"] * 6 + ["wrong"] * 2 + ["tie"] * 2)
    >>> s.accuracy, s.tie_rate, s.accuracy_ties_as_wrong
    (0.75, 0.2, 0.6)
    >>> [round(bound, 3) for bound in (s.ci_low, s.ci_high)]
    [0.356, 0.955]
    """
    counts = Counter(outcomes)
    unknown = set(counts) - set(OUTCOMES)
    if unknown:
        raise ValueError(f"unknown outcomes: {sorted(unknown)}")
    correct, wrong, ties, unparsed = (counts[name] for name in OUTCOMES)
    decided = correct + wrong
    judged = decided + ties
    interval = corrected_wilson_interval(correct, decided, confidence)
    # Unparsed judge replies stay out of both figures; ties join the wrong answers here.
    paper_interval = corrected_wilson_interval(correct, judged, confidence)
    return AccuracyStats(
        n=len(outcomes),
        correct=correct,
        wrong=wrong,
        ties=ties,
        unparsed=unparsed,
        accuracy=correct / decided if decided else None,
        ci_low=interval[0] if interval else None,
        ci_high=interval[1] if interval else None,
        tie_rate=ties / judged if judged else None,
        accuracy_ties_as_wrong=correct / judged if judged else None,
        accuracy_ties_as_wrong_ci_low=paper_interval[0] if paper_interval else None,
        accuracy_ties_as_wrong_ci_high=paper_interval[1] if paper_interval else None,
        confidence=confidence,
    )


@dataclass(frozen=True)
class AccuracySummary:
    overall: AccuracyStats
    by_category: dict[str, AccuracyStats] = field(default_factory=dict)
    group_by: str | None = None
    by_group: dict[str, AccuracyStats] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.as_dict(),
            "by_category": {name: stats.as_dict() for name, stats in self.by_category.items()},
            "group_by": self.group_by,
            "by_group": {name: stats.as_dict() for name, stats in self.by_group.items()},
        }


def accuracy_by(
    outcomes: Sequence[str], labels: Sequence[str], *, confidence: float = 0.95
) -> dict[str, AccuracyStats]:
    """:func:`accuracy_stats` for each label's pairs, labels sorted."""
    if len(outcomes) != len(labels):
        raise ValueError("one label per outcome")
    groups: dict[str, list[str]] = {}
    for outcome, label in zip(outcomes, labels, strict=True):
        groups.setdefault(label, []).append(outcome)
    return {label: accuracy_stats(groups[label], confidence=confidence) for label in sorted(groups)}


def accuracy_summary(
    outcomes: Sequence[str],
    *,
    categories: Sequence[str] | None = None,
    groups: Sequence[str] | None = None,
    group_by: str | None = None,
    confidence: float = 0.95,
) -> AccuracySummary:
    """Accuracy overall, per category and per group (``validated`` / ``excluded``, say).

    ``categories`` and ``groups`` give one label per outcome; ``group_by`` names what the groups
    are, for the report.
    """
    return AccuracySummary(
        overall=accuracy_stats(outcomes, confidence=confidence),
        by_category=(
            accuracy_by(outcomes, categories, confidence=confidence)
            if categories is not None
            else {}
        ),
        group_by=group_by,
        by_group=(
            accuracy_by(outcomes, groups, confidence=confidence) if groups is not None else {}
        ),
    )


@dataclass(frozen=True)
class Difference:
    """Accuracy of one set of pairs minus another's. ``interval`` names how ``ci_low`` and
    ``ci_high`` were found, ``test`` how ``p_value`` was."""

    difference: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    p_value: float | None = None
    interval: str = DIFFERENCE_INTERVAL
    test: str = DIFFERENCE_TEST


def accuracy_difference(
    first: Sequence[str], second: Sequence[str], *, confidence: float = 0.95
) -> Difference:
    """Accuracy of ``first`` minus accuracy of ``second`` (validated minus excluded, say), ties
    left out as in :func:`accuracy_stats`, with the interval and test ``compare`` gives the same
    two sets of pairs: Newcombe's hybrid score interval and Fisher's exact p-value
    (:func:`evaluation.significance.two_proportions`). ``None`` figures when either set decided
    no pair.

    Two independent sets: the interval keeps its width where a percentile bootstrap of the
    observed outcomes collapses (20 right of 20 against 10 of 10 resamples to [0, 0] only).

    >>> d = accuracy_difference(["correct"] * 20, ["correct"] * 10)
    >>> d.difference, [round(bound, 3) for bound in (d.ci_low, d.ci_high)], d.p_value
    (0.0, [-0.161, 0.278], 1.0)
    """
    right_first, decided_first = _right_and_decided(first)
    right_second, decided_second = _right_and_decided(second)
    test = two_proportions(right_first, decided_first, right_second, decided_second, confidence)
    return Difference(test.difference, test.ci_low, test.ci_high, confidence, test.p_value)


def _right_and_decided(outcomes: Sequence[str]) -> tuple[int, int]:
    counts = Counter(outcomes)
    return counts["correct"], counts["correct"] + counts["wrong"]


@dataclass(frozen=True)
class PositionStats:
    """How a pairwise judge depends on where the answers are shown.

    ``first_position_share``: share of parsed verdicts naming the answer shown first (0.5 for an
    unbiased judge over randomised positions). ``consistency``: among pairs judged in both orders
    with both verdicts parsed, the share where the judge picked the same answer both times.
    """

    verdicts: int
    first_position_share: float | None
    pairs_in_both_orders: int
    consistent: int
    consistency: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def position_stats(pairs: Sequence[Sequence[tuple[str | None, str | None]]]) -> PositionStats:
    """``pairs``: for each pair, one ``(position named, answer picked)`` per verdict.

    Positions are ``"A"`` (shown first) or ``"B"``, answers ``"chosen"`` or ``"rejected"``; an
    unparsed verdict is ``(None, None)``.

    >>> consistent = [("A", "chosen"), ("B", "chosen")]
    >>> stats = position_stats([consistent, [("A", "chosen"), ("A", "rejected")]])
    >>> stats.first_position_share, stats.pairs_in_both_orders, stats.consistency
    (0.75, 2, 0.5)
    """
    named = [position for verdicts in pairs for position, _ in verdicts if position is not None]
    both = [
        [picked for _, picked in verdicts]
        for verdicts in pairs
        if len(verdicts) == 2 and all(picked is not None for _, picked in verdicts)
    ]
    consistent = sum(1 for picks in both if picks[0] == picks[1])
    return PositionStats(
        verdicts=len(named),
        first_position_share=named.count("A") / len(named) if named else None,
        pairs_in_both_orders=len(both),
        consistent=consistent,
        consistency=consistent / len(both) if both else None,
    )
