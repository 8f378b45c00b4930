"""How each kind of simulated annotator answers a pair: pure functions of the expected answer,
the side the chosen answer is shown on and a seeded random generator.

The behaviours, each a failure the audit and the quality-control panel are built to catch:

- ``careful``: gives the expected answer; ratings vary but stay on their side of the quality
  threshold (4-5 for a good answer, 1-3 for a poor one); 40 s to 4 min per pair.
- ``noisy``: the expected answer, except that on 30 % of pairs one of the two choices (better
  fit, main difference) is another one and the ratings drift by a point, across the threshold
  at times; 20 s to 3 min per pair. Lowers agreement without any pattern.
- ``favours_left``: rates like a careful annotator but names Response A (the left one) as the
  better fit on 85 % of pairs, whatever it shows. The position-bias test flags them.
- ``too_fast``: 2 to 8 s per pair, under the campaign's fast-answer limit; every rating 5, a
  random better fit, always "preference" with high confidence (straight-lining).
- ``fails_gold``: confuses the two questions: rates carefully, but names general quality as the
  main difference of every pair and the longer answer as the better fit. Gold items expect
  "preference", so their gold accuracy is low and the audit leaves them out.
- ``careless``: answers every question at random in 5 to 20 s. A qualification screens them
  out before they reach a pair.
"""

import random
from dataclasses import dataclass, replace
from enum import StrEnum

from prb_annotate.campaigns.annotating import Answers

SECOND_MS = 1000


class Behaviour(StrEnum):
    CAREFUL = "careful"
    NOISY = "noisy"
    FAVOURS_LEFT = "favours_left"
    TOO_FAST = "too_fast"
    FAILS_GOLD = "fails_gold"
    CARELESS = "careless"


DESCRIPTIONS: dict[Behaviour, str] = {
    Behaviour.CAREFUL: "gives the expected answer, ratings on the right side of the threshold",
    Behaviour.NOISY: "the expected answer, but one choice differs on 30 % of pairs",
    Behaviour.FAVOURS_LEFT: "names the left answer (A) as the better fit on 85 % of pairs",
    Behaviour.TOO_FAST: "2-8 s per pair, every rating 5, a random better fit",
    Behaviour.FAILS_GOLD: "calls every difference 'quality' and prefers the longer answer",
    Behaviour.CARELESS: "answers at random in 5-20 s; screened out by the qualification",
}

NOISY_SHARE = 0.3
LEFT_SHARE = 0.85
RUBRIC_FITS = ("chosen", "rejected", "tie")
DIFFERENTIATORS = ("preference", "quality", "both", "none")


@dataclass(frozen=True)
class Pairing:
    """What an annotator is shown: where the chosen answer is, and the two answers' lengths."""

    chosen_position: str  # "A" or "B"
    chosen_length: int
    rejected_length: int


@dataclass(frozen=True)
class Response:
    answers: Answers
    time_on_task_ms: int


def sound_answer(criteria: tuple[str, ...] | list[str], scale_max: int = 5) -> Answers:
    """The expected answer for a valid pair: both answers good, personal preference, the
    dataset's chosen answer fits the user better."""
    return Answers(
        quality_chosen=dict.fromkeys(criteria, scale_max),
        quality_rejected=dict.fromkeys(criteria, scale_max),
        rubric_fit="chosen",
        differentiator="preference",
        confidence="high",
    )


def respond(
    behaviour: Behaviour,
    expected: Answers,
    pairing: Pairing,
    rng: random.Random,
    *,
    threshold: float = 4.0,
    scale_max: int = 5,
) -> Response:
    """One simulated annotator's answer to one pair, in dataset orientation."""
    if behaviour == Behaviour.TOO_FAST:
        return _too_fast(expected, rng, scale_max)
    if behaviour == Behaviour.CARELESS:
        return _careless(expected, rng, scale_max)
    answers = _careful(expected, rng, threshold, scale_max)
    seconds = rng.randint(40, 240)
    if behaviour == Behaviour.NOISY:
        answers = _noisy(answers, rng, threshold, scale_max)
        seconds = rng.randint(20, 180)
    elif behaviour == Behaviour.FAVOURS_LEFT:
        if rng.random() < LEFT_SHARE:
            answers = replace(answers, rubric_fit=_fit_for_side("A", pairing))
    elif behaviour == Behaviour.FAILS_GOLD:
        answers = replace(answers, differentiator="quality", rubric_fit=_longer(pairing))
    return Response(answers, seconds * SECOND_MS + rng.randint(0, SECOND_MS - 1))


def _careful(expected: Answers, rng: random.Random, threshold: float, scale_max: int) -> Answers:
    def wobble(rating: int) -> int:
        if rating >= threshold:
            return rng.randint(max(1, int(threshold + 0.5)), scale_max)
        return max(1, min(int(threshold - 0.5), rating + rng.choice((-1, 0, 1))))

    return replace(
        expected,
        quality_chosen={c: wobble(r) for c, r in expected.quality_chosen.items()},
        quality_rejected={c: wobble(r) for c, r in expected.quality_rejected.items()},
    )


def _noisy(answers: Answers, rng: random.Random, threshold: float, scale_max: int) -> Answers:
    if rng.random() >= NOISY_SHARE:
        return answers

    def drift(rating: int) -> int:
        return max(1, min(scale_max, rating + rng.choice((-1, 0, 1))))

    answers = replace(
        answers,
        quality_chosen={c: drift(r) for c, r in answers.quality_chosen.items()},
        quality_rejected={c: drift(r) for c, r in answers.quality_rejected.items()},
        confidence="medium",
    )
    if rng.random() < 0.5:
        other = [fit for fit in RUBRIC_FITS if fit != answers.rubric_fit]
        return replace(answers, rubric_fit=rng.choice(other))
    other = [d for d in DIFFERENTIATORS if d != answers.differentiator]
    return replace(answers, differentiator=rng.choice(other))


def _too_fast(expected: Answers, rng: random.Random, scale_max: int) -> Response:
    answers = Answers(
        quality_chosen=dict.fromkeys(expected.quality_chosen, scale_max),
        quality_rejected=dict.fromkeys(expected.quality_rejected, scale_max),
        rubric_fit=rng.choice(RUBRIC_FITS),
        differentiator="preference",
        confidence="high",
    )
    return Response(answers, rng.randint(2 * SECOND_MS, 8 * SECOND_MS))


def _fit_for_side(side: str, pairing: Pairing) -> str:
    """The dataset-orientation answer for "the answer shown on ``side`` fits better"."""
    return "chosen" if pairing.chosen_position == side else "rejected"


def _longer(pairing: Pairing) -> str:
    if pairing.chosen_length == pairing.rejected_length:
        return "tie"
    return "chosen" if pairing.chosen_length > pairing.rejected_length else "rejected"


def _careless(expected: Answers, rng: random.Random, scale_max: int) -> Response:
    def rate() -> int:
        return rng.randint(1, scale_max)

    answers = Answers(
        quality_chosen={c: rate() for c in expected.quality_chosen},
        quality_rejected={c: rate() for c in expected.quality_rejected},
        rubric_fit=rng.choice(RUBRIC_FITS),
        differentiator=rng.choice(DIFFERENTIATORS),
        confidence="high",
    )
    return Response(answers, rng.randint(5 * SECOND_MS, 20 * SECOND_MS))
