"""The manager endpoints read JSON bodies only (docs/api.md): a form-encoded or multipart body
answers 415 with the shared error body, and nothing is started."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import get_resolver
from rest_framework.views import APIView

from prb_annotate.api.parsers import JSONParser
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.models import Campaign, Dataset, Job
from tests.conftest import make_pairs

# What may read another media type: the uploads (multipart), the token login (a form), and the
# annotators' own endpoints, which take what the annotation page's drafts send.
NOT_JSON_ONLY = {
    "DatasetList",
    "CampaignAnswersImportView",
    "TokenView",
    "next_item",
    "consent",
    "submit_answers",
    "skip_item",
    "submit_qualification_answer",
    "not_found",
}


def api_views(patterns: list[Any]) -> set[type[APIView]]:
    found: set[type[APIView]] = set()
    for pattern in patterns:
        if hasattr(pattern, "url_patterns"):
            found |= api_views(pattern.url_patterns)
        elif isinstance(getattr(pattern.callback, "cls", None), type):
            cls = pattern.callback.cls
            if issubclass(cls, APIView):
                found.add(cls)
    return found


def test_every_manager_endpoint_that_takes_a_body_parses_json_only() -> None:
    writers = [
        view
        for view in api_views(get_resolver().url_patterns)
        if any(hasattr(view, method) for method in ("post", "put", "patch"))
        and view.__name__ not in NOT_JSON_ONLY
    ]
    assert len(writers) > 15
    wrong = [view.__name__ for view in writers if list(view.parser_classes) != [JSONParser]]
    assert not wrong, wrong


@pytest.mark.parametrize("encoding", ["form", "multipart"])
def test_a_job_started_with_a_form_body_is_refused(db: None, encoding: str) -> None:
    manager = User.objects.create(username="manager", is_staff=True)
    dataset = Dataset.objects.create(name="demo", source="tests")
    make_pairs(dataset, 4)
    campaign: Campaign = create_campaign(dataset, "c", k=1, created_by=manager)
    client = Client()
    client.force_login(manager)
    url = f"/api/campaigns/{campaign.pk}/jobs/"
    if encoding == "form":
        response = client.post(url, "kind=export", content_type="application/x-www-form-urlencoded")
    else:
        response = client.post(url, {"kind": "export"})
    assert response.status_code == 415
    assert "Unsupported media type" in response.json()["detail"]
    assert not Job.objects.exists()
