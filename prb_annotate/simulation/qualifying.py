"""Simulated annotators through a campaign's practice and qualification, before the queue: each
answers every step ``qualification.flow.next_step`` hands them, through ``flow.submit_answers``,
the path of the annotation page and the API.

People take a test they know they are taking seriously: every behaviour answers practice and
qualification items as a careful annotator would (the expected answers), except ``careless``,
who answers them as every other pair, at random, and is screened out.
"""

import random
from dataclasses import replace
from datetime import datetime, timedelta

from django.contrib.auth.models import User

from prb_annotate.campaigns.annotating import Answers
from prb_annotate.campaigns.qualification import flow
from prb_annotate.models import Campaign
from prb_annotate.simulation.behaviours import Behaviour, Pairing, respond, sound_answer

PAUSE = timedelta(seconds=5)
# More steps than any campaign has: practice items, then two attempts at the qualification.
MAX_STEPS = 1000


def qualify(
    campaign: Campaign, user: User, behaviour: Behaviour, *, seed: int, now: datetime
) -> tuple[bool, datetime]:
    """Answer the member's practice and qualification steps; (cleared for the queue, clock)."""
    for _ in range(MAX_STEPS):
        step = flow.next_step(campaign, user, now=now)
        if step.task is None:
            return step.stage == flow.Stage.QUEUE, now
        now = _answer(campaign, user, behaviour, step.task, seed=seed, now=now)
    raise RuntimeError(f"{user.username} did not get through the qualification")


def _answer(
    campaign: Campaign,
    user: User,
    behaviour: Behaviour,
    task: flow.Task,
    *,
    seed: int,
    now: datetime,
) -> datetime:
    pair = task.item.pair
    rng = random.Random(f"{seed}:{user.username}:{pair.external_id}:{task.attempt}")
    truth: Answers = replace(
        sound_answer(campaign.quality_criteria, campaign.rating_scale_max),
        **task.item.expected_answers,
    )
    pairing = Pairing(task.chosen_position, len(pair.chosen), len(pair.rejected))
    how = Behaviour.CARELESS if behaviour == Behaviour.CARELESS else Behaviour.CAREFUL
    response = respond(
        how,
        truth,
        pairing,
        rng,
        threshold=campaign.quality_threshold,
        scale_max=campaign.rating_scale_max,
    )
    done = now + timedelta(milliseconds=response.time_on_task_ms)
    flow.submit_answers(
        campaign.pk,
        user,
        task.item.pk,
        response.answers,
        client_token=f"simulated-q-{task.item.pk}-{user.pk}-{task.attempt}",
        time_on_task_ms=response.time_on_task_ms,
        now=done,
    )
    return done + PAUSE
