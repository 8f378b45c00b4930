"""Every JSON the audit writes is strict, also where a figure is undefined: the audit page's
JSON, the API's audit, the audit command's JSON. Two annotators who answer every pair alike
leave agreement undefined (no variation to agree on): NaN in the arithmetic, null on the wire."""

import json
import math
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.models import Campaign, Dataset
from tests.support.campaigns import active_campaign, annotators, submit_form
from tests.views.test_quality_pages import NOW


def refuse(constant: str) -> Any:
    raise AssertionError(f"bare {constant} in JSON")


def strict_load(text: str) -> Any:
    """``json.loads`` that fails on NaN, Infinity and -Infinity."""
    return json.loads(text, parse_constant=refuse)


def finite_everywhere(value: Any) -> int:
    """Walks the document; counts the nulls (undefined figures) and asserts every number is
    finite."""
    if isinstance(value, dict):
        return sum(finite_everywhere(item) for item in value.values())
    if isinstance(value, list):
        return sum(finite_everywhere(item) for item in value)
    if isinstance(value, float):
        assert math.isfinite(value)
    return int(value is None)


@pytest.fixture
def unanimous(dataset: Dataset) -> Campaign:
    campaign = active_campaign(dataset, k=2)
    for user in annotators(campaign, 2):
        while (assignment := next_assignment(campaign, user, now=NOW)) is not None:
            submit_form(assignment, now=NOW, rubric_fit=assignment.chosen_position)
    return campaign


def test_the_audit_json_is_strict_where_agreement_is_undefined(
    unanimous: Campaign, manager: User, login: Any
) -> None:
    client: Client = login(manager)
    page = client.get(reverse("campaign_audit_json", args=[unanimous.pk]) + "?resamples=50")
    api = client.get(f"/api/campaigns/{unanimous.pk}/audit/?resamples=50")
    out = StringIO()
    call_command(
        "audit", f"--campaign={unanimous.pk}", "--format=json", "--resamples=50", stdout=out
    )
    documents = [page.content.decode(), api.content.decode(), out.getvalue()]
    assert (page.status_code, api.status_code) == (200, 200)
    for text in documents:
        assert "NaN" not in text
        assert "Infinity" not in text
        # Undefined agreement is there, as null.
        assert finite_everywhere(strict_load(text)) > 0
