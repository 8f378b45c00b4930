"""Who may call what: every API endpoint x every role -> the expected status.

The table below is the specification. A test checks that it covers every operation of the
served OpenAPI schema, and another that docs/api.md shows it unchanged.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.authtoken.models import Token

from prb_annotate.api.docs import openapi_schema
from prb_annotate.audit.exclusions import exclude_annotator
from prb_annotate.audit.sampling import PlanTargets, plan_sample
from prb_annotate.campaigns.annotating import Answers
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member, create_campaign, set_status
from prb_annotate.campaigns.qualification.flow import submit_answers
from prb_annotate.campaigns.qualification.setup import choose_item
from prb_annotate.models import (
    Assignment,
    Campaign,
    Dataset,
    Job,
    Membership,
    Pair,
    QualificationItem,
    QualificationRecord,
)
from tests.conftest import make_pairs
from tests.support.exports import jsonl, records

ROLES = ("anonymous", "annotator (other campaign)", "annotator (this campaign)", "manager")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
TABLE_START = "<!-- permission-matrix:start -->"
TABLE_END = "<!-- permission-matrix:end -->"


@dataclass
class World:
    dataset: Dataset
    campaign: Campaign
    assignment: Assignment
    users: dict[str, User | None]
    excluded: User  # an annotator of the campaign left out of its audit, who failed its
    # qualification
    practice_item: QualificationItem  # answered by the annotator of the campaign
    job: Job  # a finished background job of the campaign, with its result file

    def url(self, template: str) -> str:
        return template.format(
            campaign_id=self.campaign.pk,
            dataset_id=self.dataset.pk,
            pair_id=self.campaign.items.first().pair_id,  # type: ignore[union-attr]
            assignment_id=self.assignment.pk,
            annotator_id=self.excluded.pk,
            link="signup",
            item_id=self.practice_item.pk,
            job_id=self.job.pk,
        )


def submit_body(world: World) -> dict[str, Any]:
    body: dict[str, Any] = {
        "rubric_fit": "A",
        "differentiator": "preference",
        "confidence": "high",
        "client_token": "matrix-1",
    }
    for criterion in world.campaign.quality_criteria:
        body[f"quality_A_{criterion}"] = 5
        body[f"quality_B_{criterion}"] = 4
    return body


def upload_body(world: World) -> dict[str, Any]:
    return {"file": SimpleUploadedFile("more.jsonl", jsonl(records())), "name": "uploaded"}


Body = Callable[[World], dict[str, Any]] | None


def answers_body(world: World) -> dict[str, Any]:
    return {"file": SimpleUploadedFile("answers.csv", b"pair_id,annotator\n")}


def adjudication_body(world: World) -> dict[str, Any]:
    return {"decision": "excluded", "reason": "adjudicator_judgement", "note": "matrix"}


# (method, path, body, expected status per role in ROLES order)
MATRIX: list[tuple[str, str, Body, tuple[int, int, int, int]]] = [
    ("GET", "/api/", None, (403, 200, 200, 200)),
    ("GET", "/api/schema/", None, (200, 200, 200, 200)),
    ("GET", "/api/docs/", None, (200, 200, 200, 200)),
    ("POST", "/api/token/", lambda w: {"username": "x", "password": "y"}, (400, 400, 400, 400)),
    ("GET", "/api/datasets/", None, (403, 403, 403, 200)),
    ("POST", "/api/datasets/", upload_body, (403, 403, 403, 201)),
    ("GET", "/api/datasets/{dataset_id}/", None, (403, 403, 403, 200)),
    ("GET", "/api/datasets/{dataset_id}/pairs/", None, (403, 403, 403, 200)),
    ("GET", "/api/datasets/{dataset_id}/pairs/{pair_id}/", None, (403, 403, 403, 200)),
    (
        "POST",
        "/api/datasets/{dataset_id}/sample-plan/",
        lambda w: {"half_width": 0.1},
        (403, 403, 403, 200),
    ),
    ("GET", "/api/campaigns/", None, (403, 200, 200, 200)),
    (
        "POST",
        "/api/campaigns/",
        lambda w: {"dataset": w.dataset.pk, "name": "second"},
        (403, 403, 403, 201),
    ),
    ("GET", "/api/campaigns/{campaign_id}/", None, (403, 404, 404, 200)),
    ("PUT", "/api/campaigns/{campaign_id}/", lambda w: {"name": "renamed"}, (403, 404, 404, 200)),
    (
        "PATCH",
        "/api/campaigns/{campaign_id}/",
        lambda w: {"guidelines": "Read twice."},
        (403, 404, 404, 200),
    ),
    ("POST", "/api/campaigns/{campaign_id}/start/", None, (403, 404, 404, 200)),
    ("POST", "/api/campaigns/{campaign_id}/pause/", None, (403, 404, 404, 200)),
    ("POST", "/api/campaigns/{campaign_id}/close/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/members/", None, (403, 404, 404, 200)),
    (
        "POST",
        "/api/campaigns/{campaign_id}/members/",
        lambda w: {"username": "carol", "role": "annotator"},
        (403, 404, 404, 201),
    ),
    (
        "POST",
        "/api/campaigns/{campaign_id}/annotators/",
        lambda w: {"text": "erin"},
        (403, 404, 404, 201),
    ),
    # The excluded annotator has a password: no new set-password link, which says so with 400.
    (
        "POST",
        "/api/campaigns/{campaign_id}/members/{annotator_id}/set-password-link/",
        None,
        (403, 404, 404, 400),
    ),
    (
        "POST",
        "/api/campaigns/{campaign_id}/members/{annotator_id}/remove/",
        lambda w: {"answers": "keep"},
        (403, 404, 404, 200),
    ),
    ("POST", "/api/campaigns/{campaign_id}/links/{link}/rotate/", None, (403, 404, 404, 200)),
    # The campaign is active: nothing to reopen, which the manager is told with a 400.
    (
        "POST",
        "/api/campaigns/{campaign_id}/reopen-for-replacements/",
        None,
        (403, 404, 404, 400),
    ),
    ("GET", "/api/campaigns/{campaign_id}/progress/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/audit/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/audit/paper/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/agreement/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/annotator-quality/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/exclusions/", None, (403, 404, 404, 200)),
    (
        "POST",
        "/api/campaigns/{campaign_id}/exclusions/",
        lambda w: {"annotator": "alice", "reason": "answers in two seconds"},
        (403, 404, 404, 201),
    ),
    (
        "POST",
        "/api/campaigns/{campaign_id}/exclusions/{annotator_id}/lift/",
        None,
        (403, 404, 404, 200),
    ),
    ("GET", "/api/campaigns/{campaign_id}/verdicts/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/leaderboard/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/jobs/", None, (403, 404, 404, 200)),
    (
        "POST",
        "/api/campaigns/{campaign_id}/jobs/",
        lambda w: {"kind": "paper"},
        (403, 404, 404, 202),
    ),
    ("GET", "/api/jobs/{job_id}/", None, (403, 404, 404, 200)),
    ("DELETE", "/api/jobs/{job_id}/", None, (403, 404, 404, 204)),
    # The job is over: cancelling it is refused.
    ("POST", "/api/jobs/{job_id}/cancel/", None, (403, 404, 404, 400)),
    ("GET", "/api/jobs/{job_id}/file/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/export/", None, (403, 404, 404, 200)),
    # The campaign has a queue, so the manager's file is refused (400), never written.
    ("POST", "/api/campaigns/{campaign_id}/answers/import/", answers_body, (403, 404, 404, 400)),
    ("GET", "/api/campaigns/{campaign_id}/long-table/", None, (403, 404, 404, 200)),
    (
        "GET",
        "/api/campaigns/{campaign_id}/pairs/{pair_id}/adjudications/",
        None,
        (403, 404, 404, 200),
    ),
    (
        "POST",
        "/api/campaigns/{campaign_id}/pairs/{pair_id}/adjudications/",
        adjudication_body,
        (403, 404, 404, 201),
    ),
    ("GET", "/api/campaigns/{campaign_id}/adjudication-queue/", None, (403, 404, 404, 200)),
    ("POST", "/api/campaigns/{campaign_id}/extend-sample/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/qualification/", None, (403, 404, 404, 200)),
    (
        "PATCH",
        "/api/campaigns/{campaign_id}/qualification/",
        lambda w: {"screen_out_url": "https://study.example/screened"},
        (403, 404, 404, 200),
    ),
    # The pair is a regular item an annotator holds: it cannot be set apart (400).
    (
        "PUT",
        "/api/campaigns/{campaign_id}/qualification/items/{pair_id}/",
        lambda w: {"phase": "practice", "expected_answers": {"rubric_fit": "chosen"}},
        (403, 404, 404, 400),
    ),
    (
        "DELETE",
        "/api/campaigns/{campaign_id}/qualification/items/{pair_id}/",
        None,
        (403, 404, 404, 400),
    ),
    ("GET", "/api/campaigns/{campaign_id}/qualification/members/", None, (403, 404, 404, 200)),
    (
        "POST",
        "/api/campaigns/{campaign_id}/qualification/members/{annotator_id}/admit/",
        lambda w: {"reason": "a second look"},
        (403, 404, 404, 200),
    ),
    ("GET", "/api/campaigns/{campaign_id}/prolific/bonus-rule/", None, (403, 404, 404, 200)),
    (
        "PUT",
        "/api/campaigns/{campaign_id}/prolific/bonus-rule/",
        lambda w: {"per_item": "0.10"},
        (403, 404, 404, 200),
    ),
    ("GET", "/api/campaigns/{campaign_id}/prolific/approvals/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/prolific/bonuses/", None, (403, 404, 404, 200)),
    ("GET", "/api/campaigns/{campaign_id}/prolific/payments/", None, (403, 404, 404, 200)),
    (
        "POST",
        "/api/campaigns/{campaign_id}/prolific/payments/settle/",
        lambda w: {"prolific_payment_id": "none-such", "paid": False},
        (403, 404, 404, 404),
    ),
    ("POST", "/api/campaigns/{campaign_id}/next/", None, (403, 404, 200, 404)),
    ("GET", "/api/campaigns/{campaign_id}/my-progress/", None, (403, 404, 200, 404)),
    ("GET", "/api/campaigns/{campaign_id}/consent/", None, (403, 404, 200, 404)),
    (
        "POST",
        "/api/campaigns/{campaign_id}/consent/",
        lambda w: {"accept": True},
        (403, 404, 200, 404),
    ),
    ("POST", "/api/assignments/{assignment_id}/submit/", submit_body, (403, 404, 201, 404)),
    ("POST", "/api/assignments/{assignment_id}/skip/", None, (403, 404, 200, 404)),
    ("POST", "/api/qualification-items/{item_id}/submit/", submit_body, (403, 404, 201, 404)),
    ("GET", "/api/campaigns/{campaign_id}/my-qualification/", None, (403, 404, 200, 404)),
]


@pytest.fixture
def world(db: None, tmp_path: Path) -> World:
    # No passwords: hashing one takes a second; the clients log in with force_login / tokens.
    manager = User.objects.create(username="manager", is_staff=True)
    alice = User.objects.create(username="alice")
    bob = User.objects.create(username="bob")
    User.objects.create(username="carol")
    dataset = Dataset.objects.create(name="demo", source="tests")
    make_pairs(dataset, 6)
    campaign = create_campaign(dataset, "pilot", k=2, seed=1)
    # A plan that already holds every pair, so that extending the sample is allowed and adds
    # nothing that would change the other rows.
    census = plan_sample({"Lifestyle": 6}, PlanTargets(category_half_width=0.01), k=2)
    Campaign.objects.filter(pk=campaign.pk).update(sample_plan=census.as_json())
    campaign.refresh_from_db()
    set_status(campaign, Campaign.Status.ACTIVE)
    add_member(campaign, alice)
    other = create_campaign(dataset, "elsewhere", k=2, seed=2)
    set_status(other, Campaign.Status.ACTIVE)
    add_member(other, bob)
    assignment = next_assignment(campaign, alice)
    assert assignment is not None
    users: dict[str, User | None] = dict(zip(ROLES, [None, bob, alice, manager], strict=True))
    dave = User.objects.create(username="dave")
    add_member(campaign, dave)
    exclude_annotator(campaign, dave, "never opened the guidelines", by=manager)
    QualificationRecord.objects.create(
        membership=Membership.objects.get(campaign=campaign, user=dave), outcome="failed"
    )
    practice_item = practice_answered_by(campaign, alice)
    result = tmp_path / "jobs" / "1" / "export.zip"
    result.parent.mkdir(parents=True)
    result.write_bytes(b"PK")
    job = Job.objects.create(
        campaign=campaign, kind="export", status=Job.Status.DONE, result_file=str(result)
    )
    return World(dataset, campaign, assignment, users, dave, practice_item, job)


def practice_answered_by(campaign: Campaign, user: User) -> QualificationItem:
    """A practice item on a pair outside the sample, answered by ``user`` (who stays cleared)."""
    pair = Pair.objects.create(
        dataset=campaign.dataset,
        external_id="practice-1",
        question="How do I start?",
        chosen="Start small.",
        rejected="Start big.",
        content_hash="practice-1",
    )
    item = choose_item(campaign, pair, "practice", {"rubric_fit": "chosen"}, {})
    answers = Answers(
        quality_chosen=dict.fromkeys(campaign.quality_criteria, 5),
        quality_rejected=dict.fromkeys(campaign.quality_criteria, 4),
        rubric_fit="chosen",
        differentiator="preference",
        confidence="high",
    )
    submit_answers(campaign.pk, user, item.pk, answers, client_token="practised")
    return item


def call(client: Client, method: str, url: str, body: dict[str, Any] | None) -> int:
    if method == "GET":
        return client.get(url).status_code
    if method == "POST" and body and "file" in body:
        return client.post(url, body).status_code  # multipart
    data = json.dumps(body or {})
    return client.generic(method, url, data=data, content_type="application/json").status_code


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    MATRIX,
    ids=[f"{method} {path}" for method, path, _, _ in MATRIX],
)
def test_it_answers_each_role_as_the_matrix_says(
    world: World, method: str, path: str, body: Body, expected: tuple[int, ...]
) -> None:
    """Roles are tried from the least to the most privileged, so a request that changes
    something (submit, close, create) succeeds last and the others see the state before."""
    url = world.url(path)
    got = []
    for role in ROLES:
        user = world.users[role]
        client = Client()
        if user is not None:
            client.force_login(user)
        got.append(call(client, method, url, body(world) if body else None))
    assert tuple(got) == expected, dict(zip(ROLES, got, strict=True))


def test_it_accepts_tokens_like_sessions(world: World) -> None:
    """Token authentication gives the same answers as a logged-in session."""
    manager, alice = world.users["manager"], world.users["annotator (this campaign)"]
    assert manager is not None
    assert alice is not None
    for user, expected in [(manager, 200), (alice, 404)]:
        token = Token.objects.create(user=user)
        client = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
        assert client.get(world.url("/api/campaigns/{campaign_id}/")).status_code == expected
    bad = Client(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert bad.get("/api/campaigns/").status_code in (401, 403)


def test_it_covers_every_operation_of_the_schema() -> None:
    operations = {
        (method.upper(), path.replace("{id}", "{campaign_id}"))
        for path, item in openapi_schema()["paths"].items()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    }
    in_matrix = {(method, path) for method, path, _, _ in MATRIX}
    not_in_schema = {("GET", "/api/schema/"), ("GET", "/api/docs/")}
    assert operations == in_matrix - not_in_schema


def matrix_table() -> str:
    """The matrix as the Markdown table in docs/api.md."""
    lines = [
        "| endpoint | " + " | ".join(ROLES) + " |",
        "|---|" + "---:|" * len(ROLES),
    ]
    for method, path, _, expected in MATRIX:
        lines.append(f"| `{method} {path}` | " + " | ".join(map(str, expected)) + " |")
    return "\n".join(lines)


def test_it_documents_the_matrix() -> None:
    text = DOCS.read_text(encoding="utf-8")
    documented = text.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0].strip()
    assert documented == matrix_table(), "update docs/api.md with matrix_table()"
