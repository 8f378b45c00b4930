"""The API's file endpoints answer a client that asks for the file's own type (``Accept:
text/csv``, ``application/zip``) instead of 406; their errors stay JSON."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from prb_annotate.models import Campaign
from tests.conftest import make_user

FILES = [
    ("api_campaign_long_table", "text/csv"),
    ("api_campaign_prolific_approvals", "text/csv"),
    ("api_campaign_prolific_bonuses", "text/csv"),
    ("api_campaign_audit_paper", "application/zip"),
    ("api_campaign_export", "application/zip"),
]


@pytest.mark.parametrize(("name", "media_type"), FILES)
def test_a_file_endpoint_honours_its_own_type(
    scored_campaign: Campaign, manager: User, login: Any, name: str, media_type: str
) -> None:
    client = login(manager)
    url = reverse(name, args=[scored_campaign.pk])
    for accept in (media_type, f"{media_type}, */*;q=0.1", "*/*"):
        response = client.get(url, HTTP_ACCEPT=accept)
        assert response.status_code == 200, (name, accept, response.status_code)
        assert response["Content-Type"].startswith(media_type)
    # Refused (not this user's campaign): the error is JSON whatever was asked for.
    outsider = login(make_user("mallory-accept"))
    refused = outsider.get(url, HTTP_ACCEPT=media_type)
    assert refused.status_code in (403, 404)
    assert refused["Content-Type"].startswith("application/json")
    assert set(refused.json()) >= {"detail"}
