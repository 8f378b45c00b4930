"""Built-in reward models that need no weights: reference lines to report next to any RM.

- ``builtin:length`` gives each answer its length in characters as its reward, so the longer
  answer wins and answers of equal length tie. Length is the best-known spurious cue of
  preference data (RMs and people both drift towards longer answers), so a benchmark on which
  this baseline scores well measures length as much as preference.
- ``builtin:profile-overlap`` gives each answer the number of distinct content words it shares
  with the user's question and profile posts (the first ``--top-k``, the posts profile mode
  shows a model), so the answer that echoes the user's own words wins; equal counts tie. It asks
  whether a surface match to the profile already solves a personalised benchmark. It inherits
  part of the length cue: a longer answer has more words that can match.
- ``builtin:random`` gives each answer a number drawn from ``--seed``, the pair's id and the
  answer's side: accuracy near 50%, what no signal looks like on a leaderboard.

They need no model, no tokenizer and no torch, and run anywhere
``python -m evaluation score`` or ``manage.py evaluate`` runs::

    python -m evaluation score --data export/ --model builtin:length --out runs/length
"""

import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from evaluation.config import ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.inputs import check_mode
from evaluation.metrics import accuracy_summary, outcome_of
from evaluation.records import PairRecord, as_pair_records
from evaluation.results import PairScore, RunStats, ScoreResult, with_groups
from evaluation.run_card import baseline_card
from evaluation.run_summary import grouping
from evaluation.self_check import compare_alone, sample_indices

PREFIX = "builtin:"

# A reward: (the pair, which answer, its text, the run's settings) -> a number.
Reward = Callable[[PairRecord, str, str, ScoreConfig], float]

WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
# Words that carry no content: English function words, and a few that every answer uses.
STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further had has have having he her here hers herself him himself his how i if
    in into is it its itself just me more most my myself no nor not now of off on once only
    or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves i'm it's don't can't you're i've i'd i'll let's one get got
    like really much many may might must shall us
"""
STOP_WORDS = frozenset(STOP_WORDS_TEXT.split())


def content_words(text: str) -> set[str]:
    """The distinct words of ``text`` that carry content: lower-cased letters, stop words out.

    >>> sorted(content_words("The tent I'd take: a light tent, not a heavy one."))
    ['heavy', 'light', 'take', 'tent']
    """
    return {word for word in WORD.findall(text.lower()) if word not in STOP_WORDS}


def answer_length(pair: PairRecord, side: str, answer: str, config: ScoreConfig) -> float:
    """The length baseline's reward: the answer's length in characters."""
    return float(len(answer))


def profile_overlap(pair: PairRecord, side: str, answer: str, config: ScoreConfig) -> float:
    """Distinct content words the answer shares with the question and the first ``top_k``
    profile posts."""
    user = content_words(pair.question)
    for post in pair.profile[: config.top_k]:
        user |= content_words(post.text)
    return float(len(content_words(answer) & user))


def random_reward(pair: PairRecord, side: str, answer: str, config: ScoreConfig) -> float:
    """A number in [0, 1) drawn from the seed, the pair's id and the side: the same on any
    machine and in any order (string seeds are hashed with SHA-512, never Python's hash)."""
    return random.Random(f"{config.seed}:{pair.id}:{side}").random()


BASELINES: dict[str, Reward] = {
    "length": answer_length,
    "profile-overlap": profile_overlap,
    "random": random_reward,
}


def is_builtin(model: str) -> bool:
    return model.startswith(PREFIX)


def baseline(model: str) -> Reward:
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
    scores = [_pair_score(pair, reward, config) for pair in pairs]
    stats = RunStats(pairs=len(pairs), sequences=2 * len(pairs))
    stats.seconds = time.perf_counter() - started
    # Grouped as every run is (audit subsets for validation.verdict), so that a baseline's
    # "excluded" is the same pairs as a model's, in score and in compare.
    grouped = grouping(pairs, config.group_by)
    summary = accuracy_summary(
        [score.outcome for score in scores],
        categories=[pair.category for pair in pairs],
        groups=grouped.groups,
        group_by=grouped.label,
        confidence=config.confidence,
    )
    check = None
    if config.self_check:
        # A baseline scores each pair on its own anyway: the check shows it, at no cost.
        indices = sample_indices(len(pairs), config.self_check, config.seed)
        alone = []
        for index in indices:
            single = _pair_score(pairs[index], reward, config)
            alone.append((single.chosen_score, single.rejected_score, single.outcome))
        check = compare_alone(
            pairs, scores, indices, alone, allow_flips=config.allow_flips, method="each pair alone"
        ).as_dict()
    return ScoreResult(
        pairs=with_groups(scores, grouped.groups),
        summary=summary,
        settings=config.as_dict(),
        stats=stats,
        environment={"device": "none", "dtype": "none", "baseline": config.model},
        card=baseline_card(config, reward),
        self_check=check,
        grouping=grouped.about,
    )


def _pair_score(pair: PairRecord, reward: Reward, config: ScoreConfig) -> PairScore:
    chosen = reward(pair, "chosen", pair.chosen, config)
    rejected = reward(pair, "rejected", pair.rejected, config)
    return PairScore(
        id=pair.id,
        category=pair.category,
        outcome=outcome_of(chosen, rejected, config.tie_tolerance),
        chosen_score=chosen,
        rejected_score=rejected,
    )
