"""Helpers for the practice and qualification tests: a campaign with both, and answers given
right or wrong through the same service the pages and the API call."""

import itertools
from typing import Any

from django.contrib.auth.models import User

from prb_annotate.campaigns.lifecycle import add_member, create_campaign
from prb_annotate.campaigns.qualification import flow
from prb_annotate.models import Campaign, Dataset

_tokens = itertools.count()
PRACTICE_IDS = ("p0000", "p0001")
QUALIFICATION_IDS = ("p0002", "p0003", "p0004")


def screening_campaign(
    dataset: Dataset,
    *users: User,
    name: str = "screened",
    practice: tuple[str, ...] = PRACTICE_IDS,
    qualification: tuple[str, ...] = QUALIFICATION_IDS,
    rule: dict[str, Any] | None = None,
    **settings: Any,
) -> Campaign:
    """An active campaign (k = 2) with practice and qualification pairs; every pair expects
    the dataset's claim (chosen fits, preference), explained."""
    explained = {"rubric_fit": "The chosen one follows the rubric.", "differentiator": "Both good."}
    campaign = create_campaign(
        dataset,
        name,
        k=2,
        seed=11,
        activate=True,
        practice_pairs={pid: {"explanations": explained} for pid in practice},
        qualification_pairs={pid: {"explanations": explained} for pid in qualification},
        qualification_rule=rule or {"min_correct": 2},
        **settings,
    )
    for user in users:
        add_member(campaign, user)
    return campaign


def form_for(campaign: Campaign, task: flow.Task, *, right: bool) -> dict[str, str]:
    """The annotation form for ``task``, answered as expected or not, as a browser posts it."""
    other = "B" if task.chosen_position == "A" else "A"
    data = {
        "rubric_fit": task.chosen_position if right else other,
        "differentiator": "preference" if right else "quality",
        "confidence": "high",
        "comment": "",
        "client_token": f"q-token-{next(_tokens)}",
        "time_on_task_ms": "9000",
    }
    for criterion in campaign.quality_criteria:
        data[f"quality_A_{criterion}"] = "5"
        data[f"quality_B_{criterion}"] = "4"
    return data


def current_task(campaign: Campaign, user: User) -> flow.Task:
    """The practice or qualification item the member is to answer now (there must be one)."""
    step = flow.next_step(campaign, user)
    assert step.task is not None, step
    return step.task


def answer_current(campaign: Campaign, user: User, *, right: bool) -> flow.QualificationSubmit:
    task = current_task(campaign, user)
    return flow.submit(campaign.pk, user, task.item.pk, form_for(campaign, task, right=right))


def do_practice(campaign: Campaign, user: User) -> None:
    while flow.next_step(campaign, user).stage == flow.Stage.PRACTICE:
        answer_current(campaign, user, right=True)


def take_attempt(campaign: Campaign, user: User, *, right: int) -> flow.AttemptResult:
    """Answer every item of the current attempt, the first ``right`` of them as expected."""
    index = 0
    while True:
        stored = answer_current(campaign, user, right=index < right)
        index += 1
        if stored.result is not None:
            return stored.result


def fail_twice(campaign: Campaign, user: User) -> None:
    do_practice(campaign, user)
    take_attempt(campaign, user, right=0)
    take_attempt(campaign, user, right=1)


def pass_first(campaign: Campaign, user: User) -> None:
    do_practice(campaign, user)
    assert take_attempt(campaign, user, right=3).passed
