"""Property-based fuzzing of the served OpenAPI schema with Schemathesis: whatever a client
sends, no operation answers 5xx, and every answer conforms to the schema (status code, content
type, headers, body).

Every operation of ``/api/schema/`` gets ``MAX_EXAMPLES`` generated requests, sent through the
WSGI application with a manager's token, and the annotator work operations as many again with
an annotator's token. Requests are drawn from three sources: data that fits the schema with
random ids (mostly 404), the same with the ids of objects that exist (so the handlers behind
the 404 run too), and data that does not fit the schema (which must get a 4xx).
"""

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis import GenerationMode
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import positive_data_acceptance

from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.wsgi import application
from tests.export_support import annotated_campaign, import_dataset

MAX_EXAMPLES = 20
# Every check runs except positive_data_acceptance ("schema-valid data gets a 2xx"): whether a
# request is acceptable also depends on the database (does dataset 5000 exist, is the name
# taken, is the sample larger than the dataset), which no schema can say. Such requests must
# still get a documented 4xx with the error body, which the other checks verify.
WORK_PATHS = ("/next/", "/my-progress/", "/submit/", "/skip/")

pytestmark = pytest.mark.slow


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


def test_it_never_fails_whatever_a_manager_sends(world: dict[str, Any]) -> None:
    fuzz(world["manager"], world["ids"])


def test_it_never_fails_whatever_an_annotator_sends(world: dict[str, Any]) -> None:
    fuzz(world["annotator"], world["ids"], WORK_PATHS)
