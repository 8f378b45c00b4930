"""Join floods: an invite link makes accounts for made-up Prolific ids, but a flood from one
address holds at most a tenth of the campaign's slots, a link from another Prolific study makes
none, and a real participant arriving during a flood still gets work."""

import threading
from collections import Counter
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.join_limits import accounts_per_address, slot_count
from prb_annotate.campaigns.lifecycle import create_campaign, set_status
from prb_annotate.models import Assignment, Campaign, Dataset, InviteJoin, Participant
from tests.conftest import make_pairs
from tests.support.pages import form_answers, reserve, submit_url

FLOOD = 130


def study_campaign(pairs: int, k: int = 3, **settings: Any) -> Campaign:
    dataset = Dataset.objects.create(name=f"flood-{pairs}-{k}")
    make_pairs(dataset, pairs)
    campaign = create_campaign(dataset, f"study {pairs}x{k}", k=k, seed=1, **settings)
    set_status(campaign, Campaign.Status.ACTIVE)
    return campaign


def join(campaign: Campaign, pid: str, address: str, study: str = "study-1") -> tuple:
    """A fresh browser joining with made-up ids, as a flood script does; (client, response)."""
    client = Client()
    params = {"PROLIFIC_PID": pid, "STUDY_ID": study, "SESSION_ID": f"s-{pid}"}
    response = client.post(
        reverse("join", args=[campaign.invite_token]), params, REMOTE_ADDR=address
    )
    return client, response


def test_it_lets_a_flood_from_one_address_hold_a_tenth_of_the_slots(db: None) -> None:
    """The reported attack: 130 forged joins against a 42-pair, k = 3 campaign (126 slots).
    Twelve accounts are made (a tenth of the slots), each reserves its item, every other join
    is refused with 429; a participant from elsewhere then joins and gets an item at once."""
    campaign = study_campaign(42)
    assert slot_count(campaign) == 126
    assert accounts_per_address(campaign) == 12
    statuses: Counter[int] = Counter()
    for index in range(FLOOD):
        client, response = join(campaign, f"forged{index}", "198.51.100.7")
        statuses[response.status_code] += 1
        if response.status_code == 302:
            reserve(client, campaign)
        else:
            assert "Too many new participants from your network" in response.content.decode()
    assert statuses == {302: 12, 429: FLOOD - 12}
    held = Assignment.objects.filter(campaign=campaign, status=Assignment.Status.RESERVED)
    assert held.count() == 12
    assert Participant.objects.filter(campaign=campaign).count() == 12

    real, response = join(campaign, "5f0c8e1e2b3a4c5d6e7f8091", "203.0.113.20")
    assert response.status_code == 302
    item = reserve(real, campaign)
    assert item.annotator.participant.participant_id == "5f0c8e1e2b3a4c5d6e7f8091"


def test_it_admits_a_new_account_from_an_address_once_one_has_answered(db: None) -> None:
    """A small campaign allows one waiting account per address: a second is refused until the
    first has submitted an answer; coming back to an existing account is never limited."""
    campaign = study_campaign(5, k=1)
    assert accounts_per_address(campaign) == 1
    first, response = join(campaign, "P1", "192.0.2.1")
    assert response.status_code == 302
    assert join(campaign, "P2", "192.0.2.1")[1].status_code == 429
    # The same participant coming back (same study session, new browser) is let in.
    _, response = join(campaign, "P1", "192.0.2.1")
    assert response.status_code == 302
    assignment = reserve(first, campaign)
    assert first.post(submit_url(assignment), form_answers(campaign)).status_code == 302
    assert join(campaign, "P2", "192.0.2.1")[1].status_code == 302
    assert join(campaign, "P3", "192.0.2.1")[1].status_code == 429
    # Another address has its own count.
    assert join(campaign, "P4", "192.0.2.2")[1].status_code == 302


def test_it_counts_an_ipv6_network_as_one_address(db: None) -> None:
    campaign = study_campaign(5, k=1)
    assert join(campaign, "P1", "2001:db8:1:2::1")[1].status_code == 302
    assert join(campaign, "P2", "2001:db8:1:2:ffff::9")[1].status_code == 429
    assert join(campaign, "P3", "2001:db8:1:3::1")[1].status_code == 302
    assert set(InviteJoin.objects.values_list("address", flat=True)) == {
        "2001:db8:1:2::/64",
        "2001:db8:1:3::/64",
    }


def test_it_refuses_a_link_from_another_study(db: None) -> None:
    """With the campaign's Prolific study named, another STUDY_ID (or none) makes no account:
    said on the start page already, and refused on the join itself; the study's own
    participants join as before."""
    campaign = study_campaign(12, prolific_study_id="study-1")
    url = reverse("join", args=[campaign.invite_token])
    for study in ("other-study", ""):
        params = {"PROLIFIC_PID": "P9", "STUDY_ID": study, "SESSION_ID": "s"}
        start = Client().get(url, params)
        assert start.status_code == 403
        assert "This link belongs to another study" in start.content.decode()
        refused = Client().post(url, params)
        assert refused.status_code == 403
    assert not User.objects.filter(username__startswith="prolific-").exists()
    assert Client().get(url, {"PROLIFIC_PID": "P9", "STUDY_ID": "study-1"}).status_code == 200
    assert join(campaign, "P9", "192.0.2.1", study="study-1")[1].status_code == 302
    # A campaign that names no study takes any.
    open_campaign = study_campaign(13)
    assert join(open_campaign, "P9", "192.0.2.1", study="anything")[1].status_code == 302


def test_a_manager_names_the_study_on_the_dashboard_and_in_the_api(
    db: None, manager: User, login
) -> None:
    campaign = study_campaign(12)
    client = login(manager)
    page = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="study-id"' in page
    assert "at most 3 new accounts waiting for a first answer" in page
    response = client.post(
        reverse("campaign_study", args=[campaign.pk]), {"prolific_study_id": "abc 1"}
    )
    assert response.status_code == 400
    client.post(reverse("campaign_study", args=[campaign.pk]), {"prolific_study_id": "abc1"})
    campaign.refresh_from_db()
    assert campaign.prolific_study_id == "abc1"
    api = client.patch(
        f"/api/campaigns/{campaign.pk}/",
        {"prolific_study_id": "study-2"},
        content_type="application/json",
    )
    assert api.status_code == 200
    assert api.json()["prolific_study_id"] == "study-2"
    bad = client.patch(
        f"/api/campaigns/{campaign.pk}/",
        {"prolific_study_id": "<x>"},
        content_type="application/json",
    )
    assert bad.status_code == 400
    assert "prolific_study_id" in bad.json()["errors"]


@pytest.mark.django_db(transaction=True)
def test_it_counts_joins_arriving_at_once_one_after_the_other() -> None:
    """Sixteen joins from one address at the same moment, each in its own thread and database
    connection: exactly as many accounts as the limit allows, the others refused."""
    campaign = study_campaign(10)  # 30 slots: 3 waiting accounts per address
    limit = accounts_per_address(campaign)
    assert limit == 3
    start = threading.Barrier(16)
    statuses: list[int] = []

    def flood(index: int) -> None:
        try:
            start.wait(timeout=30)
            statuses.append(join(campaign, f"burst{index}", "198.51.100.9")[1].status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=flood, args=(index,)) for index in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert Counter(statuses) == {302: limit, 429: 16 - limit}
    assert Participant.objects.filter(campaign=campaign).count() == limit
