"""Who may start and see a background job, and the API's answers to bad requests (no worker:
the job only waits in the queue)."""

import pytest
from django.contrib.auth.models import User
from django.test import Client

from prb_annotate.models import Campaign, CampaignItem, Dataset, Job, Membership
from tests.conftest import make_pairs
from tests.support.audit import make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(manager: User, annotator: User) -> Campaign:
    dataset = Dataset.objects.create(name="jobs", source="tests")
    campaign = make_campaign(dataset)
    for index, pair in enumerate(make_pairs(dataset, 2)):
        CampaignItem.objects.create(campaign=campaign, pair=pair, order_key=index)
    Membership.objects.create(campaign=campaign, user=manager, role=Membership.Role.MANAGER)
    Membership.objects.create(campaign=campaign, user=annotator)
    return campaign


def start(client: Client, campaign: Campaign, body: dict) -> tuple[int, dict]:
    response = client.post(
        f"/api/campaigns/{campaign.pk}/jobs/", body, content_type="application/json"
    )
    return response.status_code, response.json()


def test_it_lets_only_the_campaigns_managers_start_and_see_jobs(
    campaign: Campaign, manager: User, annotator: User, outsider: User, login
) -> None:
    for user in (annotator, outsider):
        status, body = start(login(user), campaign, {"kind": "export"})
        assert status == 404
        assert set(body) == {"detail", "errors"}
    assert not Job.objects.exists()

    status, job = start(login(manager), campaign, {"kind": "export"})
    assert status == 202
    assert job["status"] == "queued"
    assert Job.objects.get().started_by == manager
    for user in (annotator, outsider):
        assert login(user).get(job["url"]).status_code == 404
        assert login(user).post(f"{job['url']}cancel/").status_code == 404
    listed = login(manager).get(f"/api/campaigns/{campaign.pk}/jobs/").json()
    assert [row["id"] for row in listed] == [job["id"]]


def test_it_refuses_bad_jobs_with_the_field_to_blame(
    campaign: Campaign, manager: User, login
) -> None:
    client = login(manager)
    status, body = start(client, campaign, {"kind": "shell"})
    assert status == 400
    assert "kind" in body["errors"]
    status, body = start(client, campaign, {"kind": "export", "options": {"fmt": "xlsx"}})
    assert status == 400
    assert "xlsx" in body["errors"]["options"][0]
    status, body = start(client, campaign, {"kind": "export", "options": {"path": "/etc"}})
    assert status == 400
    assert "path" in body["errors"]["options"][0]
    assert not Job.objects.exists()


def test_it_keeps_a_queued_job_until_it_is_cancelled_then_removed(
    campaign: Campaign, manager: User, login
) -> None:
    client = login(manager)
    _, job = start(client, campaign, {"kind": "paper"})
    refused = client.delete(job["url"])
    assert refused.status_code == 400
    assert "Cancel" in refused.json()["errors"]["status"][0]
    assert client.get(f"{job['url']}file/").status_code == 404
    assert client.post(f"{job['url']}cancel/").json()["status"] == "cancelled"
    assert client.delete(job["url"]).status_code == 204
    assert not Job.objects.exists()
