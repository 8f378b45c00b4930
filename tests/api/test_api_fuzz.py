"""Property-based fuzzing of the served OpenAPI schema with Schemathesis: whatever a client
sends, no operation answers 5xx, and every answer conforms to the schema (status code, content
type, headers, body). Two kinds of body no generator makes are sent by hand: JSON nested 1,000
levels deep, and a NUL character in every text value (the sample-plan and exclusion bodies and
the campaign's Prolific study id among them).

Every operation of ``/api/schema/`` gets ``MAX_EXAMPLES`` generated requests, sent through the
WSGI application with a manager's token, and the annotator work operations as many again with
an annotator's token. Requests are drawn from three sources: data that fits the schema with
random ids (mostly 404), the same with the ids of objects that exist (so the handlers behind
the 404 run too), and data that does not fit the schema (which must get a 4xx).
"""

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import positive_data_acceptance

from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Annotation, Campaign, Membership
from prb_annotate.wsgi import application
from tests.support.exports import annotated_campaign, import_dataset

MAX_EXAMPLES = 20
DEEP_BODIES = ["[" * 1000 + "]" * 1000, '{"a": ' * 1000 + "1" + "}" * 1000, "[" * 33 + "]" * 33]
# Every check runs except positive_data_acceptance ("schema-valid data gets a 2xx"): whether a
# request is acceptable also depends on the database (does dataset 5000 exist, is the name
# taken, is the sample larger than the dataset), which no schema can say. Such requests must
# still get a documented 4xx with the error body, which the other checks verify.
WORK_PATHS = ("/next/", "/my-progress/", "/submit/", "/skip/")


@pytest.fixture
def wsgi_requests_keep_the_connection() -> Iterator[None]:
    """The WSGI handler closes the database connection after each request, which would close
    the test's transaction; Django's own test client disconnects these handlers the same way."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def world(db: None, wsgi_requests_keep_the_connection: None) -> dict[str, Any]:
    annotators = [User.objects.create(username=name) for name in ("alice", "bob", "carol")]
    campaign = annotated_campaign(import_dataset(), annotators)
    dave = User.objects.create(username="dave")
    add_member(campaign, dave)
    assignment = next_assignment(campaign, dave)
    assert assignment is not None
    manager = User.objects.create(username="manager", is_staff=True)
    item = campaign.items.first()
    assert item is not None
    return {
        "ids": {
            "campaign_id": campaign.pk,
            "dataset_id": campaign.dataset_id,
            "pair_id": item.pair_id,
            "assignment_id": assignment.pk,
        },
        "manager": Token.objects.create(user=manager).key,
        "annotator": Token.objects.create(user=dave).key,
    }


def token_auth(token: str) -> type:
    """A Schemathesis auth provider sending ``token``: the checks then know the credentials
    are real (and probe the operation without them to see that they are required)."""

    class TokenAuth:
        def get(self, case: Any, context: Any) -> str:
            return token

        def set(self, case: Any, data: str, context: Any) -> None:
            case.headers = {**(case.headers or {}), "Authorization": f"Token {data}"}

    return TokenAuth


def requests_for(schema: Any, operation: Any, ids: dict[str, int]) -> st.SearchStrategy:
    names = {param.name for param in operation.path_parameters}
    existing = {name: value for name, value in ids.items() if name in names}
    strategies = [
        operation.as_strategy(GenerationMode.POSITIVE, auth_storage=schema.auth),
        operation.as_strategy(GenerationMode.NEGATIVE, auth_storage=schema.auth),
    ]
    if existing:
        strategies.append(
            operation.as_strategy(
                GenerationMode.POSITIVE, auth_storage=schema.auth, path_parameters=existing
            )
        )
    return st.one_of(strategies)


def fuzz(token: str, ids: dict[str, int], paths: tuple[str, ...] = ()) -> None:
    """Every operation of the served schema (those whose path ends with one of ``paths``,
    when given) gets MAX_EXAMPLES requests, each validated against the schema."""
    schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
    schema.auth()(token_auth(token))
    operations = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result  # the schema itself must be valid
        operations.append(result.ok())
    assert len(operations) > 20
    for operation in operations:
        if paths and not operation.path.endswith(paths):
            continue

        @given(case=requests_for(schema, operation, ids))
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            database=None,
            # Multipart and nested bodies generate slower than the health check expects.
            suppress_health_check=list(HealthCheck),
        )
        def run(case: Any) -> None:
            case.call_and_validate(excluded_checks=[positive_data_acceptance])

        run()


@pytest.mark.slow
def test_it_never_fails_whatever_a_manager_sends(world: dict[str, Any]) -> None:
    fuzz(world["manager"], world["ids"])


@pytest.mark.slow
def test_it_never_fails_whatever_an_annotator_sends(world: dict[str, Any]) -> None:
    fuzz(world["annotator"], world["ids"], WORK_PATHS)


def body_requests(ids: dict[str, int]) -> list[tuple[str | None, str, str]]:
    """(who, method, path) of every operation that reads a JSON body."""
    campaign, assignment, dataset = ids["campaign_id"], ids["assignment_id"], ids["dataset_id"]
    return [
        (None, "POST", "/api/token/"),
        ("manager", "POST", f"/api/datasets/{dataset}/sample-plan/"),
        ("manager", "POST", f"/api/campaigns/{campaign}/exclusions/"),
        ("annotator", "POST", f"/api/assignments/{assignment}/submit/"),
        ("annotator", "POST", f"/api/assignments/{assignment}/skip/"),
        ("manager", "POST", "/api/campaigns/"),
        ("manager", "PATCH", f"/api/campaigns/{campaign}/"),
        ("manager", "PUT", f"/api/campaigns/{campaign}/"),
        ("manager", "POST", f"/api/campaigns/{campaign}/members/"),
    ]


def send(world: dict[str, Any], who: str | None, method: str, path: str, body: str) -> Any:
    headers = {"Authorization": f"Token {world[who]}"} if who else {}
    return Client().generic(method, path, body, content_type="application/json", headers=headers)


def test_it_refuses_deeply_nested_json_with_the_error_body(world: dict[str, Any]) -> None:
    for who, method, path in body_requests(world["ids"]):
        for body in DEEP_BODIES:
            with_depth = f"{method} {path} depth {body.count(body[0])}"
            response = send(world, who, method, path, body)
            assert response.status_code == 400, with_depth
            assert response.json()["detail"].startswith("JSON parse error"), with_depth
            assert response.json()["errors"] == {}, with_depth


def with_nul(value: Any) -> Any:
    """``value`` with a NUL in every string (keys included), at any depth."""
    if isinstance(value, str):
        return f"{value}\x00x"
    if isinstance(value, list):
        return [with_nul(item) for item in value]
    if isinstance(value, dict):
        return {with_nul(key): with_nul(item) for key, item in value.items()}
    return value


def test_it_refuses_a_nul_in_any_text_value(world: dict[str, Any]) -> None:
    ids = world["ids"]
    dave = User.objects.get(username="dave")
    valid: dict[str, dict[str, Any]] = {
        "/api/token/": {"username": "dave", "password": "secret"},
        "/submit/": {
            "quality": {"A": {"helpfulness": 5}, "B": {"helpfulness": 4}},
            "rubric_fit": "A",
            "differentiator": "preference",
            "confidence": "high",
            "comment": "fine",
            "client_token": "t-1",
        },
        "/skip/": {"reason": "Something else"},
        "/api/campaigns/": {
            "dataset": ids["dataset_id"],
            "name": "fresh",
            "guidelines": "Be fair.",
            "quality_criteria": ["clarity"],
            "gold_pair_ids": ["p1"],
            "completion_url": "https://example.org/done",
        },
        "/members/": {"username": "dave", "role": "annotator"},
        "/sample-plan/": {"half_width": 0.1, "expected_share": 0.5},
        "/exclusions/": {"annotator": "dave", "reason": "careless"},
    }
    before = (User.objects.count(), Campaign.objects.count(), Annotation.objects.count())
    for who, method, path in body_requests(ids):
        fields: dict[str, Any]
        if method in ("PATCH", "PUT"):
            fields = {
                "name": "x",
                "guidelines": "y",
                "quality_criteria": ["clarity"],
                "prolific_study_id": "study-1",
            }
        else:
            fields = valid[next(k for k in valid if path.endswith(k))]
        for field, value in fields.items():
            if not isinstance(value, (str, list, dict)):  # numbers hold no text
                continue
            body = json.dumps({**fields, field: with_nul(value)})
            response = send(world, who, method, path, body)
            assert 400 <= response.status_code < 500, (method, path, field, response.status_code)
            assert "detail" in response.json(), (method, path, field)
    for query in ("q", "category"):
        response = Client().get(
            f"/api/datasets/{ids['dataset_id']}/pairs/",
            {query: "a\x00b"},
            HTTP_AUTHORIZATION=f"Token {world['manager']}",
        )
        assert response.status_code == 400, query
        assert response.json()["errors"] == {
            query: [f"The query parameter '{query}' holds a NUL character."]
        }
    assert (User.objects.count(), Campaign.objects.count(), Annotation.objects.count()) == before
    assert Membership.objects.filter(user=dave).count() == 1
