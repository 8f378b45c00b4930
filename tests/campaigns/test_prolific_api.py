"""Prolific's API from the Prolific page, when ``PROLIFIC_API_TOKEN`` is set: decisions sent as
submission transitions (only to submissions awaiting review), the bonus list paid as one bulk
bonus, and statuses read back, a returned participant's reservation freed at once. Without the
token the page offers the CSVs alone.

``ProlificStandIn`` (``tests/support/prolific.py``) is the only part that is not the real thing:
a local HTTP server that answers the documented endpoints with their documented shapes."""

from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.test import override_settings
from django.urls import reverse

from prb_annotate.audit.exclusions import exclude_annotator
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Assignment, Campaign
from tests.support.campaigns import submit_form
from tests.support.prolific import STUDY, TOKEN, ProlificStandIn, prolific_stand_in
from tests.support.qualification import pass_first, screening_campaign


@pytest.fixture
def prolific_server() -> Iterator[str]:
    with prolific_stand_in() as base:
        yield base


@pytest.fixture
def study(dataset, manager) -> Campaign:
    campaign = screening_campaign(
        dataset, bonus_rule={"per_item": "0.10", "items_beyond": 1}, prolific_study_id=STUDY
    )
    people = {name: User.objects.create_user(name) for name in ("good", "bad", "gone")}
    for name, user in people.items():
        add_member(campaign, user, participant_id=f"PID{name.upper()}")
        pass_first(campaign, user)
    for name in ("good", "bad"):
        for _ in range(3):
            assignment = next_assignment(campaign, people[name])
            assert assignment is not None
            submit_form(assignment)
    exclude_annotator(campaign, people["bad"], "copied answers", by=manager)
    assert next_assignment(campaign, people["gone"]) is not None  # held, never submitted
    ProlificStandIn.submissions = [
        {"id": "s-good", "participant_id": "PIDGOOD", "status": "AWAITING REVIEW"},
        {"id": "s-bad", "participant_id": "PIDBAD", "status": "AWAITING REVIEW"},
        {"id": "s-gone", "participant_id": "PIDGONE", "status": "RETURNED"},
    ]
    return campaign


def send(client, campaign: Campaign, action: str) -> str:
    url = reverse("campaign_prolific_send", args=[campaign.pk, action])
    return client.post(url, follow=True).content.decode()


def test_it_sends_decisions_pays_bonuses_and_reads_statuses_back(
    study: Campaign, manager, login, prolific_server: str
) -> None:
    client = login(manager)
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        page = send(client, study, "decisions")
        assert "Sent to Prolific: 1 approved, 1 rejected; 1 not awaiting review there" in page
        transitions = {path: body for _, path, body in ProlificStandIn.calls}
        assert transitions["/api/v1/submissions/s-good/transition/"] == {"action": "APPROVE"}
        rejected = transitions["/api/v1/submissions/s-bad/transition/"]
        assert rejected["action"] == "REJECT"
        assert "copied answers" in rejected["message"]
        assert "/api/v1/submissions/s-gone/transition/" not in transitions

        ProlificStandIn.calls = []
        assert "Bonuses paid on Prolific to 1 participant(s)." in send(client, study, "bonuses")
        assert ProlificStandIn.calls[0][2] == {"study_id": STUDY, "csv_bonuses": "PIDGOOD,0.20"}
        assert ProlificStandIn.calls[1][1] == "/api/v1/bulk-bonus-payments/bonus-1/pay/"

        held = Assignment.objects.get(annotator__username="gone", status="reserved")
        page = send(client, study, "statuses")
        assert "Read 3 submission(s) back from Prolific." in page
        assert '<tr data-participant="PIDGONE"><td><code>PIDGONE</code></td><td>RETURNED' in page
        held.refresh_from_db()
        assert held.status == Assignment.Status.EXPIRED


def test_it_says_why_prolific_refused_and_changes_nothing(
    study: Campaign, manager, login, prolific_server: str
) -> None:
    client = login(manager)
    with override_settings(PROLIFIC_API_TOKEN="wrong", PROLIFIC_API_URL=prolific_server):
        page = send(client, study, "decisions")
    assert "Prolific answered 401 to GET studies/study-1/submissions/" in page
    assert ProlificStandIn.calls == []


def test_without_a_token_the_page_offers_the_csvs_alone(study: Campaign, manager, login) -> None:
    client = login(manager)
    page = client.get(reverse("campaign_prolific", args=[study.pk])).content.decode()
    assert 'id="prolific-api"' not in page
    assert 'id="approvals-csv"' in page
    assert "not configured: use the CSVs" in send(client, study, "decisions")
