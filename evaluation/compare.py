"""Which reward model is better, on which pairs: the leaderboard of several runs.

:func:`build_leaderboard` takes each run's outcome per pair (``correct``, ``wrong``, ``tie``,
``unparsed``) and each pair's category and audit subset, and returns a :class:`Leaderboard`:
a plain data structure that the renderers of :mod:`evaluation.compare_formats` print as text,
strict JSON, CSV or LaTeX, and that the web app shows as a page. It imports no torch, so the
web process computes it from stored pair scores.

For each subset (all pairs, validated, excluded, each category):

- every model's accuracy with ties left out and with ties as wrong, each with a Wilson
  interval with continuity correction; the models are ranked by the figure the tie policy names;
- each model's difference to the best on the pairs both decided, with Tango's score interval
  for paired proportions (:mod:`evaluation.paired`), the exact McNemar p-value on the same
  pairs, Holm-adjusted over every pair of models, its significance group (group 1: not told
  apart from #1, :class:`~evaluation.significance.GroupingProcedure`), and the smallest
  difference the test would find 80 % of the time with the discordant pairs there are;

and once per leaderboard:

- per model, accuracy on validated against excluded pairs (two independent sets of pairs:
  Newcombe's interval for the difference, Fisher's exact test);
- the rank order on all pairs against validated pairs: Kendall's tau and the models that swap.

Tie policy. ``left-out`` (the default, as the scorer's ``acc%``): a tie is neither right nor
wrong; the difference to the best and McNemar then read only the pairs both models decided.
``as-wrong`` (the paper's figure): a tie is wrong, and every pair a model judged enters its
accuracy and the tests. A judge reply that named no answer (``unparsed``) is left out under
both.
"""

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from evaluation.metrics import (
    ACCURACY_INTERVAL,
    ACCURACY_INTERVAL_NAME,
    ACCURACY_INTERVAL_WORDS,
    OUTCOMES,
)
from evaluation.paired import POWER, TANGO_CC, detectable_difference, paired_difference
from evaluation.significance import (
    TWO_PROPORTIONS_NAMES,
    Code,
    Codes,
    GroupingProcedure,
    accuracy_of,
    all_pairs_holm,
    as_codes,
    corrected_wilson_interval,
    mcnemar_of,
    rank_agreement,
    significance_groups,
    two_proportions,
)

TiePolicy = Literal["left-out", "as-wrong"]
TIE_POLICIES: tuple[TiePolicy, ...] = ("left-out", "as-wrong")
POLICY_WORDS = {
    "left-out": "ties left out, neither right nor wrong",
    "as-wrong": "ties counted as wrong, the paper's figure",
}
SUBSETS = ("validated", "excluded")
ALPHA = 0.05


@dataclass(frozen=True)
class PairLabel:
    """What a pair is, the same for every run: its category and its audit subset
    (``validated``, ``excluded``, or ``None`` when the runs carry no verdict)."""

    category: str
    subset: str | None = None


@dataclass(frozen=True)
class RunOutcomes:
    """One run: its name, each pair's outcome by pair id, and what else to show of it
    (``info``: its run card, self-check, where it was read from; plain JSON values)."""

    name: str
    outcomes: Mapping[str, str]
    info: Mapping[str, Any] = field(default_factory=dict)


def code_of(outcome: str, policy: TiePolicy) -> Code:
    """1 right, 0 wrong, ``None`` left out of the accuracy, under ``policy``."""
    if outcome == "correct":
        return 1
    if outcome == "wrong" or (outcome == "tie" and policy == "as-wrong"):
        return 0
    if outcome in ("tie", "unparsed"):
        return None
    raise ValueError(f"unknown outcome {outcome!r}")


@dataclass(frozen=True)
class Estimate:
    """An accuracy with its interval; ``reason`` says why ``value`` is ``None``."""

    value: float | None
    ci_low: float | None
    ci_high: float | None
    successes: int
    n: int
    reason: str | None = None
    # How the interval was computed (``corrected_wilson_interval``), for whoever words it.
    method: str = ACCURACY_INTERVAL


def estimate(successes: int, n: int, confidence: float) -> Estimate:
    interval = corrected_wilson_interval(successes, n, confidence)
    if interval is None:
        return Estimate(None, None, None, successes, n, "no pair decided")
    return Estimate(successes / n, interval[0], interval[1], successes, n)


@dataclass(frozen=True)
class VersusBest:
    """A model against the best of its subset, on the ``pairs`` both decided: ``difference``
    is its accuracy minus the best's there, with an interval by ``method`` (Tango's score
    interval); ``better`` and ``worse`` the discordant pairs where only it / only the best was
    right, ``p_value`` the exact McNemar test and ``p_holm`` its Holm adjustment over every
    pair of models; ``detectable`` the smallest difference the test finds 80 % of the time
    with these discordant pairs at Holm's strictest step (``None``: not even all of them one
    way would be found that often), and ``power`` that sentence."""

    pairs: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    better: int
    worse: int
    p_value: float
    p_holm: float
    tied_with_best: bool
    reason: str | None = None
    method: str = TANGO_CC.key
    detectable: float | None = None
    power: str | None = None


@dataclass(frozen=True)
class Entry:
    model: str
    rank: int
    group: int
    n: int
    correct: int
    wrong: int
    ties: int
    unparsed: int
    accuracy: Estimate
    accuracy_ties_as_wrong: Estimate
    versus_best: VersusBest | None


@dataclass(frozen=True)
class SubsetBoard:
    """The leaderboard of one subset: ``kind`` is ``all``, ``subset`` or ``category``;
    ``key`` names it uniquely (``all``, ``validated``, ``excluded``, ``category:<name>``)."""

    key: str
    name: str
    kind: str
    pairs: int
    best: str | None
    entries: tuple[Entry, ...]
    reason: str | None = None


@dataclass(frozen=True)
class SubsetTest:
    """One model's accuracy (under the policy) on validated minus excluded pairs."""

    model: str
    validated: Estimate
    excluded: Estimate
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    reason: str | None = None


@dataclass(frozen=True)
class RankSwap:
    above_on_all: str
    above_on_validated: str
    accuracy_on_all: tuple[float, float]
    accuracy_on_validated: tuple[float, float]
    p_value_on_validated: float


@dataclass(frozen=True)
class RankComparison:
    """The models ranked on all pairs against on validated pairs."""

    models: int
    tau: float | None
    reason: str | None
    swaps: tuple[RankSwap, ...]


@dataclass(frozen=True)
class Settings:
    policy: TiePolicy
    confidence: float = 0.95
    alpha: float = ALPHA

    @property
    def grouping(self) -> GroupingProcedure:
        return GroupingProcedure(alpha=self.alpha)


@dataclass(frozen=True)
class Leaderboard:
    models: tuple[str, ...]
    pairs: int
    settings: Settings
    subsets: tuple[SubsetBoard, ...]
    validated_vs_excluded: tuple[SubsetTest, ...]
    ranks: RankComparison | None
    runs: tuple[Mapping[str, Any], ...] = ()
    notes: tuple[str, ...] = ()

    def subset(self, key: str) -> SubsetBoard | None:
        """The board with ``key`` (``all``, ``validated``, ``category:Art``...)."""
        return next((board for board in self.subsets if board.key == key), None)

    def as_dict(self) -> dict[str, Any]:
        """Plain values only (no NaN or infinity: an undefined figure is ``None`` beside a
        ``reason``), ready for strict JSON."""
        data = asdict(self)
        data["settings"]["policy_words"] = POLICY_WORDS[self.settings.policy]
        data["settings"]["tests"] = figure_words(self.settings, len(self.models))
        data["settings"]["difference_method"] = {
            "key": TANGO_CC.key,
            "words": TANGO_CC.words,
            "citation": TANGO_CC.citation,
        }
        # Column headers name each figure's method from the code that computes it.
        data["settings"]["column_names"] = {
            "accuracy_interval": ACCURACY_INTERVAL_NAME,
            "difference_interval": TANGO_CC.name,
            "subset_interval": TWO_PROPORTIONS_NAMES["interval"],
            "subset_test": TWO_PROPORTIONS_NAMES["test"],
        }
        data["settings"]["grouping"] = {
            "key": self.settings.grouping.key,
            "words": self.settings.grouping.words(len(self.models)),
            "tied": self.settings.grouping.tied_words(),
            "comparisons": self.settings.grouping.comparisons(len(self.models)),
        }
        return data


def figure_words(settings: Settings, models: int) -> dict[str, str]:
    """What each figure is, worded from the objects that compute them."""
    grouping = settings.grouping
    return {
        "accuracy_interval": ACCURACY_INTERVAL_WORDS,
        "difference": "accuracy minus the best's, on the pairs both decided (with ties left "
        "out, a pair either tied is not among them)",
        "difference_interval": TANGO_CC.words,
        "p_value": "exact McNemar (two-sided binomial on the pairs only one of the two got "
        "right; pairs either left out do not enter)",
        "p_holm": f"Holm step-down over {grouping.pairs_of_models(models)}",
        "group": grouping.words(models),
        "detectable": f"the smallest difference the exact McNemar test finds with probability "
        f"{POWER:g} with the discordant pairs observed, at Holm's strictest step (alpha "
        f"{grouping.strictest_level(models):.4g})",
        "validated_vs_excluded": "independent sets of pairs: Newcombe hybrid score interval "
        "for the difference, Fisher's exact test",
        "ranks": "Kendall's tau-b between the accuracies on all and on validated pairs",
    }


def build_leaderboard(
    runs: Sequence[RunOutcomes],
    labels: Mapping[str, PairLabel],
    settings: Settings,
    *,
    notes: Sequence[str] = (),
) -> Leaderboard:
    """The leaderboard of ``runs`` over the pairs in ``labels`` (every run must have an
    outcome for each of them; :func:`evaluation.runs.align_runs` sees to that)."""
    names = [run.name for run in runs]
    if len(set(names)) != len(names):
        raise ValueError(f"two runs share a name: {names}")
    pair_ids = sorted(labels)
    outcomes = {run.name: {pid: run.outcomes[pid] for pid in pair_ids} for run in runs}
    codes = {
        name: {pid: code_of(outcome, settings.policy) for pid, outcome in column.items()}
        for name, column in outcomes.items()
    }
    subsets = subset_members(labels)
    boards = [
        subset_board(name, kind, members, names, codes, outcomes, settings)
        for name, kind, members in subsets
    ]
    validated = next((members for name, kind, members in subsets if name == "validated"), None)
    return Leaderboard(
        models=tuple(names),
        pairs=len(pair_ids),
        settings=settings,
        subsets=tuple(boards),
        validated_vs_excluded=tuple(
            subset_test(name, labels, outcomes[name], settings) for name in names
        )
        if validated is not None
        else (),
        ranks=None if validated is None else rank_comparison(boards, codes, validated, settings),
        runs=tuple({"name": run.name, **run.info} for run in runs),
        notes=tuple(notes),
    )


def subset_members(labels: Mapping[str, PairLabel]) -> list[tuple[str, str, list[str]]]:
    """``(name, kind, pair ids)`` of every subset: all, validated and excluded (when pairs
    carry verdicts), then each category by name."""
    pair_ids = sorted(labels)
    found = [("all", "all", pair_ids)]
    if any(labels[pid].subset for pid in pair_ids):
        found += [
            (name, "subset", [pid for pid in pair_ids if labels[pid].subset == name])
            for name in SUBSETS
        ]
    for category in sorted({labels[pid].category for pid in pair_ids}):
        members = [pid for pid in pair_ids if labels[pid].category == category]
        found.append((category or "(none)", "category", members))
    return found


def board_key(name: str, kind: str) -> str:
    return f"category:{name}" if kind == "category" else name


def subset_board(
    name: str,
    kind: str,
    members: list[str],
    models: list[str],
    codes: Mapping[str, Mapping[str, Code]],
    outcomes: Mapping[str, Mapping[str, str]],
    settings: Settings,
) -> SubsetBoard:
    if not members or not models:
        reason = "no pair in this subset" if not members else "no run to rank"
        return SubsetBoard(board_key(name, kind), name, kind, len(members), None, (), reason)
    column = {model: as_codes([codes[model][pid] for pid in members]) for model in models}
    accuracy = {model: accuracy_of(column[model]) for model in models}
    order = sorted(models, key=lambda m: (accuracy[m] is None, -(accuracy[m] or 0.0), m))
    best = order[0]
    tests = {
        (leader, other): mcnemar_of(column[leader], column[other])
        for position, leader in enumerate(order)
        for other in order[position + 1 :]
    }
    raw = {key: test.p_value for key, test in tests.items()}
    groups = significance_groups(order, raw, settings.alpha)
    holm = all_pairs_holm(raw)
    level = settings.grouping.strictest_level(len(models))
    entries = []
    for position, model in enumerate(order):
        versus = (
            None
            if model == best
            else versus_best(column[model], column[best], holm[(best, model)], settings, level)
        )
        entries.append(
            entry(
                model,
                competition_rank(order, accuracy, position),
                groups[model],
                [outcomes[model][pid] for pid in members],
                versus,
                settings,
            )
        )
    return SubsetBoard(board_key(name, kind), name, kind, len(members), best, tuple(entries))


def competition_rank(order: list[str], accuracy: Mapping[str, float | None], index: int) -> int:
    """1-based rank; models with the same accuracy share the best of their ranks (1, 2, 2, 4)."""
    value = accuracy[order[index]]
    return 1 + next(position for position, m in enumerate(order) if accuracy[m] == value)


def versus_best(
    model: Codes, best: Codes, p_holm: float, settings: Settings, level: float
) -> VersusBest:
    """``model`` against the best of the subset, on the same pairs; ``level`` is the level
    of Holm's strictest step, at which the power line is worked out."""
    test = mcnemar_of(best, model)
    paired = paired_difference(model, best, settings.confidence)
    detectable = detectable_difference(test.discordant, paired.pairs, level)
    reason = None
    if paired.difference is None:
        reason = "no pair decided by both"
    elif test.discordant == 0:
        reason = "no pair where exactly one of the two is right: p = 1"
    return VersusBest(
        pairs=paired.pairs,
        difference=paired.difference,
        ci_low=paired.ci_low,
        ci_high=paired.ci_high,
        better=test.second_only,
        worse=test.first_only,
        p_value=test.p_value,
        p_holm=p_holm,
        tied_with_best=p_holm >= settings.alpha,
        reason=reason,
        method=paired.method,
        detectable=detectable,
        power=power_line(test.discordant, paired.pairs, detectable),
    )


def power_line(discordant: int, pairs: int, detectable: float | None) -> str | None:
    """The power line: how large a difference these discordant pairs can show."""
    if not pairs:
        return None
    if detectable is None:
        return (
            f"{discordant} discordant pair(s) of {pairs}: too few for the test to find any "
            f"difference with probability {POWER:g}"
        )
    line = (
        f"{discordant} discordant pair(s) of {pairs}: the test finds a difference of "
        f"{100 * detectable:.1f} points or more with probability {POWER:g}"
    )
    if detectable > 0.05:
        line += "; too few to tell a 5-point difference apart"
    return line


def entry(
    model: str,
    rank: int,
    group: int,
    outcomes: list[str],
    versus: VersusBest | None,
    settings: Settings,
) -> Entry:
    correct, wrong, ties, unparsed = (outcomes.count(name) for name in OUTCOMES)
    return Entry(
        model=model,
        rank=rank,
        group=group,
        n=len(outcomes),
        correct=correct,
        wrong=wrong,
        ties=ties,
        unparsed=unparsed,
        accuracy=estimate(correct, correct + wrong, settings.confidence),
        accuracy_ties_as_wrong=estimate(correct, correct + wrong + ties, settings.confidence),
        versus_best=versus,
    )


def policy_counts(outcomes: Sequence[str], policy: TiePolicy) -> tuple[int, int]:
    """Right answers and pairs counted, under ``policy``."""
    codes = [code_of(outcome, policy) for outcome in outcomes]
    decided = [code for code in codes if code is not None]
    return sum(decided), len(decided)


def subset_test(
    model: str,
    labels: Mapping[str, PairLabel],
    outcomes: Mapping[str, str],
    settings: Settings,
) -> SubsetTest:
    counts = {
        subset: policy_counts(
            [outcomes[pid] for pid, label in labels.items() if label.subset == subset],
            settings.policy,
        )
        for subset in SUBSETS
    }
    (right_v, n_v), (right_e, n_e) = counts["validated"], counts["excluded"]
    test = two_proportions(right_v, n_v, right_e, n_e, settings.confidence)
    reason = None
    if test.difference is None:
        empty = [subset for subset, (_, n) in counts.items() if n == 0]
        reason = f"no decided {' or '.join(empty)} pair"
    return SubsetTest(
        model=model,
        validated=estimate(right_v, n_v, settings.confidence),
        excluded=estimate(right_e, n_e, settings.confidence),
        difference=test.difference,
        ci_low=test.ci_low,
        ci_high=test.ci_high,
        p_value=test.p_value,
        reason=reason,
    )


def rank_comparison(
    boards: Sequence[SubsetBoard],
    codes: Mapping[str, Mapping[str, Code]],
    validated: Sequence[str],
    settings: Settings,
) -> RankComparison:
    """The order on all pairs against the order on the ``validated`` pairs."""
    on_all = _policy_values(boards, "all", settings.policy)
    on_validated = _policy_values(boards, "validated", settings.policy)
    agreement = rank_agreement(on_all, on_validated)
    swaps = []
    for swap in agreement.swaps:
        first, second = swap.above_first, swap.above_second
        test = mcnemar_of(
            [codes[first][pid] for pid in validated], [codes[second][pid] for pid in validated]
        )
        swaps.append(
            RankSwap(
                above_on_all=first,
                above_on_validated=second,
                accuracy_on_all=(on_all[first] or 0.0, on_all[second] or 0.0),
                accuracy_on_validated=(on_validated[first] or 0.0, on_validated[second] or 0.0),
                p_value_on_validated=test.p_value,
            )
        )
    return RankComparison(agreement.models, agreement.tau, agreement.reason, tuple(swaps))


def _policy_values(
    boards: Sequence[SubsetBoard], name: str, policy: TiePolicy
) -> dict[str, float | None]:
    board = next(board for board in boards if board.key == name)
    return {entry.model: policy_value(entry, policy) for entry in board.entries}


def policy_value(entry: Entry, policy: TiePolicy) -> float | None:
    """The entry's accuracy under ``policy``: the figure it is ranked by."""
    return entry.accuracy.value if policy == "left-out" else entry.accuracy_ties_as_wrong.value
