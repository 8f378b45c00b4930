"""An export job's with_validation option is a real boolean: the text "false" is refused, not
read as true."""

import pytest
from django.contrib.auth.models import User

from prb_annotate.jobs.kinds import check_options
from prb_annotate.models import Campaign, CampaignItem, Dataset, Job, Membership
from tests.conftest import make_pairs
from tests.support.audit import make_campaign

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign(manager: User) -> Campaign:
    dataset = Dataset.objects.create(name="jobs", source="tests")
    campaign = make_campaign(dataset)
    for index, pair in enumerate(make_pairs(dataset, 2)):
        CampaignItem.objects.create(campaign=campaign, pair=pair, order_key=index)
    Membership.objects.create(campaign=campaign, user=manager, role=Membership.Role.MANAGER)
    return campaign


@pytest.mark.parametrize("value", ["false", "true", 0, 1, None])
def test_the_api_refuses_a_with_validation_that_is_not_a_boolean(
    campaign: Campaign, manager: User, login, value: object
) -> None:
    response = login(manager).post(
        f"/api/campaigns/{campaign.pk}/jobs/",
        {"kind": "export", "options": {"with_validation": value}},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert "true or false" in errors["options.with_validation"][0]
    assert not Job.objects.exists()


@pytest.mark.parametrize("value", [True, False])
def test_the_api_queues_an_export_with_a_boolean_with_validation(
    campaign: Campaign, manager: User, login, value: bool
) -> None:
    response = login(manager).post(
        f"/api/campaigns/{campaign.pk}/jobs/",
        {"kind": "export", "options": {"with_validation": value}},
        content_type="application/json",
    )
    assert response.status_code == 202, response.content
    assert Job.objects.get().options["with_validation"] is value


def test_a_job_request_from_code_is_refused_alike() -> None:
    with pytest.raises(ValueError, match="with_validation"):
        check_options("export", {"with_validation": "false"})
