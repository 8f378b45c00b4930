"""Helpers for the campaign, assignment and annotating tests: a campaign, its members, and a
complete set of answers as the A/B form sends them."""

import itertools
from datetime import datetime

from django.contrib.auth.models import User

from prb_annotate.campaigns.annotating import Answers, SubmitResult, answers_from_form, submit
from prb_annotate.campaigns.lifecycle import add_member, create_campaign
from prb_annotate.models import Assignment, Campaign, Dataset

_tokens = itertools.count()


def active_campaign(dataset: Dataset, *, name: str = "study", k: int = 3, **options) -> Campaign:
    return create_campaign(dataset, name, k=k, activate=True, **options)


def annotators(campaign: Campaign, count: int, *, prefix: str = "annotator") -> list[User]:
    users = []
    for index in range(count):
        user = User.objects.create_user(f"{prefix}{index:02d}")
        add_member(campaign, user)
        users.append(user)
    return users


def form_data(campaign: Campaign, *, rubric_fit: str = "A", token: str | None = None, **extra):
    """A valid A/B form: A rated 5 and B rated 4 on every criterion."""
    data: dict[str, object] = {}
    for criterion in campaign.quality_criteria:
        data[f"quality_A_{criterion}"] = "5"
        data[f"quality_B_{criterion}"] = "4"
    data.update(
        rubric_fit=rubric_fit,
        differentiator="preference",
        confidence="high",
        comment="",
        client_token=token or f"token-{next(_tokens)}",
        time_on_task_ms="12000",
    )
    data.update(extra)
    return data


def answers(assignment: Assignment, **form) -> Answers:
    return answers_from_form(form_data(assignment.campaign, **form), assignment=assignment)


def submit_form(
    assignment: Assignment, *, now: datetime | None = None, token: str | None = None, **form
) -> SubmitResult:
    data = form_data(assignment.campaign, token=token, **form)
    return submit(
        assignment.pk,
        assignment.annotator,
        answers_from_form(data, assignment=assignment),
        client_token=str(data["client_token"]),
        time_on_task_ms=int(str(data["time_on_task_ms"])),
        now=now,
    )
