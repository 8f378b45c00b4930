"""Simulated annotators working through a campaign the way people do: each asks the real queue
(``assignment.next_assignment``) for a pair and answers it through ``annotating.submit``, so
every rule of a live campaign holds (exact k overlap, counterbalancing, gold slots).

Deterministic: the queue is seeded by the campaign, each answer is drawn from a generator
seeded by (seed, annotator, pair), and time is a simulated clock per annotator, so the same
seed gives the same rows on every fresh database. The queue's A/B sides and gold slots are
seeded by row ids, as in a live campaign: in a database whose id sequences have moved on (a
PostgreSQL test database reused across tests, whose sequences a rollback does not reset) the
sides differ, and with them the answers of the position-biased behaviour and the split votes.
"""

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import User

from prb_annotate.campaigns.annotating import Answers, submit
from prb_annotate.campaigns.assignment import QualificationFirst, next_assignment
from prb_annotate.campaigns.lifecycle import submitted_count
from prb_annotate.models import Assignment, Campaign
from prb_annotate.simulation.behaviours import Behaviour, Pairing, respond, sound_answer
from prb_annotate.simulation.qualifying import qualify

# Time between one submit and the next request, on an annotator's clock.
PAUSE = timedelta(seconds=5)


@dataclass(frozen=True)
class SimulatedAnnotator:
    """A user answering with ``behaviour``; ``pace`` is how many pairs they answer per round
    (relative speed: careful annotators of a real campaign do most of the work) and ``limit``
    the most they answer in the whole campaign."""

    user: User
    behaviour: Behaviour
    pace: int = 1
    limit: int | None = None


def run_campaign(
    campaign: Campaign,
    annotators: Sequence[SimulatedAnnotator],
    expected: Mapping[str, Answers],
    *,
    seed: int,
    start: datetime,
) -> int:
    """Let the annotators answer, round after round, until the queue has nothing left for any
    of them; returns the number of answers submitted.

    ``expected`` maps a pair's external id to the answer a careful annotator gives; pairs not
    in it are taken as sound (see ``sound_answer``).
    """
    clocks = {annotator.user.pk: start for annotator in annotators}
    waiting = [annotator for annotator in annotators if _room(campaign, annotator)]
    submitted = 0
    while waiting:
        for annotator in list(waiting):
            for _ in range(annotator.pace):
                clock = answer_next(campaign, annotator, expected, seed, clocks[annotator.user.pk])
                if clock is not None:
                    clocks[annotator.user.pk] = clock
                    submitted += 1
                if clock is None or not _room(campaign, annotator):
                    waiting.remove(annotator)
                    break
    return submitted


def _room(campaign: Campaign, annotator: SimulatedAnnotator) -> bool:
    """Whether the annotator is still below their own limit in this campaign."""
    if annotator.limit is None:
        return True
    return submitted_count(campaign, annotator.user) < annotator.limit


def answer_next(
    campaign: Campaign,
    annotator: SimulatedAnnotator,
    expected: Mapping[str, Answers],
    seed: int,
    now: datetime,
) -> datetime | None:
    """Reserve and answer the annotator's next pair; returns their clock afterwards, or None
    when the queue has nothing for them. Practice and qualification come first, when the
    campaign has them (``qualifying.py``)."""
    try:
        assignment = next_assignment(campaign, annotator.user, now=now)
    except QualificationFirst:
        cleared, now = qualify(campaign, annotator.user, annotator.behaviour, seed=seed, now=now)
        if not cleared:
            return None
        assignment = next_assignment(campaign, annotator.user, now=now)
    if assignment is None:
        return None
    pair = assignment.item.pair
    rng = random.Random(f"{seed}:{annotator.user.username}:{pair.external_id}")
    truth = expected.get(pair.external_id) or sound_answer(
        campaign.quality_criteria, campaign.rating_scale_max
    )
    response = respond(
        annotator.behaviour,
        truth,
        pairing_of(assignment),
        rng,
        threshold=campaign.quality_threshold,
        scale_max=campaign.rating_scale_max,
    )
    done = now + timedelta(milliseconds=response.time_on_task_ms)
    submit(
        assignment.pk,
        annotator.user,
        response.answers,
        client_token=f"simulated-{assignment.pk}",
        time_on_task_ms=response.time_on_task_ms,
        now=done,
    )
    return done + PAUSE


def pairing_of(assignment: Assignment) -> Pairing:
    pair = assignment.item.pair
    return Pairing(assignment.chosen_position, len(pair.chosen), len(pair.rejected))
