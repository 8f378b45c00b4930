"""The annotators' work cycle (``next`` then ``submit`` through the API) runs a pinned number of
statements, authentication and transaction control included, for a member of a plain campaign,
of a campaign that asks for consent, of one with practice and qualification, and for a member
whose account the study link made (first items slowed, and its network's share of the slots
counted): a new gate on the hot path must find room in a statement the cycle already runs, or
say here why it could not.

Counted as the server runs them (no test transaction around the requests, whose savepoints
would add statements). SQLite and PostgreSQL differ: SQLite plans before its immediate
transaction and runs BEGIN IMMEDIATE as a statement; PostgreSQL locks rows by statements of
their own."""

from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from prb_annotate.campaigns.briefing import record_consent
from prb_annotate.campaigns.join_limits import admit_new_account, record_new_account
from prb_annotate.models import Campaign, Dataset, Membership
from tests.api.test_api_work import post_json, token_client
from tests.support.campaigns import active_campaign, annotators, form_data
from tests.support.qualification import pass_first, screening_campaign


@dataclass(frozen=True)
class Cycle:
    next: int
    submit: int


# Statements of one steady cycle (the member's second), by database. The qualification
# campaign's plan reads two more windows of free items: its practice and qualification pairs
# leave a regular sample of fewer items than the plan's first window wants. A member whose
# account the study link made (whose first items are slowed) is read in the queue's own
# statement, and runs one more: the slots its network's accounts hold (campaigns/network_share.py;
# as a column of the queue's statement its planning cost every member's cycle a fifth more
# PostgreSQL CPU).
EXPECTED = {
    "sqlite": {
        "plain": Cycle(next=9, submit=6),
        "consent": Cycle(next=9, submit=6),
        "qualification": Cycle(next=11, submit=6),
        "newcomer": Cycle(next=10, submit=6),
    },
    "postgresql": {
        "plain": Cycle(next=10, submit=7),
        "consent": Cycle(next=10, submit=7),
        "qualification": Cycle(next=12, submit=7),
        "newcomer": Cycle(next=11, submit=7),
    },
}
# A member who owes consent is refused by the queue's own reads, before any plan.
EXPECTED_CONSENT_OWED = {"sqlite": 5, "postgresql": 5}


NETWORK = "203.0.113.0/24"


def member_of(kind: str, dataset: Dataset) -> tuple[Campaign, User]:
    if kind == "qualification":
        user = User.objects.create_user("qualified")
        campaign = screening_campaign(dataset, user)
        pass_first(campaign, user)
        return campaign, user
    consent = {"consent_text": "I agree to take part."} if kind == "consent" else {}
    campaign = active_campaign(dataset, k=2, **consent)
    (user,) = annotators(campaign, 1)
    if kind == "consent":
        record_consent(Membership.objects.get(campaign=campaign, user=user))
    if kind == "newcomer":
        with transaction.atomic():  # as the join does
            admit_new_account(campaign, NETWORK)
            record_new_account(campaign, user, NETWORK)
    return campaign, user


def cycle(client: Client, campaign: Campaign) -> Cycle:
    """One next and one submit; the statements each ran."""
    with CaptureQueriesContext(connection) as reserving:
        reserved = post_json(client, reverse("api_next", args=[campaign.pk]))
    assert reserved.status_code == 200, reserved.content
    assignment = reserved.json()["assignment"]
    with CaptureQueriesContext(connection) as submitting:
        stored = post_json(client, reverse("api_submit", args=[assignment]), form_data(campaign))
    assert stored.status_code == 201, stored.content
    return Cycle(next=len(reserving), submit=len(submitting))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["plain", "consent", "qualification", "newcomer"])
def test_it_runs_the_pinned_statements_per_cycle(dataset: Dataset, kind: str) -> None:
    campaign, user = member_of(kind, dataset)
    client = token_client(user)
    cycle(client, campaign)  # the first: the plan starts from nothing
    assert cycle(client, campaign) == EXPECTED[connection.vendor][kind]


@pytest.mark.django_db(transaction=True)
def test_it_refuses_a_member_who_owes_consent_in_the_queues_own_statements(
    dataset: Dataset,
) -> None:
    campaign = active_campaign(dataset, k=2, consent_text="I agree to take part.")
    (user,) = annotators(campaign, 1)
    client = token_client(user)
    with CaptureQueriesContext(connection) as refusing:
        refused = post_json(client, reverse("api_next", args=[campaign.pk]))
    assert refused.status_code == 403
    assert refused.json()["consent_text"] == "I agree to take part."
    assert len(refusing) == EXPECTED_CONSENT_OWED[connection.vendor]
    # Nothing was reserved for them.
    assert not campaign.assignments.exists()
