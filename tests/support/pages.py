"""Set-up shared by the page tests: an active campaign and a complete set of form answers."""

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.lifecycle import add_member, create_campaign, set_status
from prb_annotate.models import Assignment, Campaign, Dataset


def active_campaign(
    dataset: Dataset, *annotators: User, name: str = "pilot", **settings
) -> Campaign:
    campaign = create_campaign(dataset, name, k=3, seed=7, **settings)
    set_status(campaign, Campaign.Status.ACTIVE)
    for user in annotators:
        add_member(campaign, user)
    campaign.refresh_from_db()
    return campaign


def form_answers(
    campaign: Campaign,
    *,
    a: int = 5,
    b: int = 4,
    fit: str = "A",
    differentiator: str = "preference",
    confidence: str = "high",
    client_token: str = "token-1",
    **extra: str,
) -> dict[str, str]:
    """Every answer the page asks for, as the browser posts them (A/B orientation)."""
    data = {
        "rubric_fit": fit,
        "differentiator": differentiator,
        "confidence": confidence,
        "comment": "",
        "client_token": client_token,
        "time_on_task_ms": "1234",
    }
    for criterion in campaign.quality_criteria:
        data[f"quality_A_{criterion}"] = str(a)
        data[f"quality_B_{criterion}"] = str(b)
    data.update(extra)
    return data


def reserve(client: Client, campaign: Campaign) -> Assignment:
    """Open the annotation page and return the item it shows."""
    response = client.get(reverse("annotate", args=[campaign.pk]))
    assert response.status_code == 200, response.status_code
    assignment: Assignment = response.context["assignment"]
    return assignment


def submit_url(assignment: Assignment) -> str:
    return reverse("annotate_submit", args=[assignment.campaign_id, assignment.pk])


def campaign_form(dataset, **changes) -> dict[str, str]:
    data = {
        "dataset": str(dataset.pk),
        "name": "spring pilot",
        "guidelines": "Read **carefully**.",
        "annotations_per_pair": "2",
        "reservation_minutes": "20",
        "sample": "5",
        "seed": "11",
        "gold_rate": "0",
        "quota_per_annotator": "4",
        "completion_url": "https://app.prolific.com/submissions/complete?cc=ABC",
    }
    data.update(changes)
    return data
