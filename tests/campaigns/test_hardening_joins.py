"""Join floods: an invite link makes accounts for made-up Prolific ids, but a flood from one
network (one address submitting junk, many addresses of one /24, the /64s of one /56) holds at
most a tenth of the campaign's slots in a window, a link from another Prolific study makes
none, a real participant arriving during a flood still gets work, and the burst is on the
dashboard with its accounts left out of the audit in one action. With the participant's first
items slowed (the campaign's default), each flood account holds one regular slot until a gold
answer is right, and with Prolific's API token no made-up id makes an account at all."""

import threading
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.join_limits import accounts_per_address, slot_count
from prb_annotate.campaigns.lifecycle import create_campaign, set_status
from prb_annotate.models import (
    AnnotatorExclusion,
    Assignment,
    Campaign,
    CampaignItem,
    Dataset,
    InviteJoin,
    Membership,
    Participant,
    QualificationRecord,
)
from tests.conftest import make_pairs
from tests.support.campaigns import submit_form
from tests.support.pages import form_answers, reserve, submit_url
from tests.support.prolific import STUDY, TOKEN, ProlificStandIn, listed, prolific_stand_in

FLOOD = 130
# The review's three floods: one address, many addresses of one IPv4 /24, the /64s of one /56.
FLOODS = {
    "one-address": ["198.51.100.7"] * FLOOD,
    "ipv4-24": [f"198.51.100.{host}" for host in range(1, FLOOD + 1)],
    "ipv6-56": [f"2001:db8:1:{subnet:x}::1" for subnet in range(FLOOD)],
}
REAL_PID = "5f0c8e1e2b3a4c5d6e7f8091"


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


def test_it_counts_accounts_that_answered_until_the_window_has_passed(db: None) -> None:
    """The reported flood: from one address, make accounts, submit one junk answer each, make
    more. Every account made in the window counts, answered or not: 12 of 126 slots, then
    429; accounts older than the window stop counting."""
    campaign = study_campaign(42)
    statuses: Counter[int] = Counter()
    for index in range(FLOOD):
        client, response = join(campaign, f"junk{index}", "198.51.100.7")
        statuses[response.status_code] += 1
        if response.status_code == 302:
            assignment = reserve(client, campaign)
            answers = form_answers(campaign, client_token=f"t{index}")
            assert client.post(submit_url(assignment), answers).status_code == 302
    assert statuses == {302: 12, 429: FLOOD - 12}
    assert Assignment.objects.filter(campaign=campaign).count() == 12
    # An hour later the window has moved on: the network may make accounts again.
    InviteJoin.objects.update(at=timezone.now() - timedelta(minutes=61))
    assert join(campaign, "later", "198.51.100.7")[1].status_code == 302


@pytest.mark.parametrize(
    "addresses",
    [
        [f"198.51.100.{host}" for host in range(1, 131)],  # many addresses of one IPv4 /24
        [f"2001:db8:1:{subnet:x}::1" for subnet in range(130)],  # the /64s of one /56
    ],
    ids=["ipv4-24", "ipv6-56"],
)
def test_it_counts_a_network_not_an_address(db: None, addresses: list[str]) -> None:
    campaign = study_campaign(42)
    statuses = Counter(
        join(campaign, f"spread{index}", address)[1].status_code
        for index, address in enumerate(addresses)
    )
    assert statuses == {302: 12, 429: len(addresses) - 12}
    assert len(set(InviteJoin.objects.values_list("address", flat=True))) == 1
    real, response = join(campaign, "5f0c8e1e2b3a4c5d6e7f8091", "203.0.113.20")
    assert response.status_code == 302
    assert reserve(real, campaign) is not None


def test_it_counts_an_ipv6_network_by_its_48(db: None) -> None:
    campaign = study_campaign(5, k=1)
    assert join(campaign, "P1", "2001:db8:1:2::1")[1].status_code == 302
    assert join(campaign, "P2", "2001:db8:1:ff00::9")[1].status_code == 429
    assert join(campaign, "P3", "2001:db8:2::1")[1].status_code == 302
    assert set(InviteJoin.objects.values_list("address", flat=True)) == {
        "2001:db8:1::/48",
        "2001:db8:2::/48",
    }


def test_a_screened_out_account_holds_no_share(db: None) -> None:
    """One account per network in a small campaign: screened out by the qualification, it
    leaves its place to the next participant behind the same address."""
    campaign = study_campaign(5, k=1)
    assert accounts_per_address(campaign) == 1
    assert join(campaign, "P1", "192.0.2.1")[1].status_code == 302
    assert join(campaign, "P2", "192.0.2.1")[1].status_code == 429
    # Coming back to an existing account is never limited.
    assert join(campaign, "P1", "192.0.2.1")[1].status_code == 302
    membership = Membership.objects.get(campaign=campaign, user__participant__participant_id="P1")
    QualificationRecord.objects.create(
        membership=membership, outcome=QualificationRecord.Outcome.FAILED
    )
    assert join(campaign, "P2", "192.0.2.1")[1].status_code == 302


def test_a_burst_is_on_the_dashboard_and_left_out_in_one_action(
    db: None, manager: User, login
) -> None:
    campaign = study_campaign(42)
    for index in range(20):
        client, response = join(campaign, f"junk{index}", "198.51.100.7")
        if response.status_code == 302:
            assignment = reserve(client, campaign)
            client.post(submit_url(assignment), form_answers(campaign, client_token=f"t{index}"))
    join(campaign, "real", "203.0.113.20")
    page = login(manager)
    html = page.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="join-bursts"' in html
    assert "<code>198.51.100.0/24</code>" in html
    assert "Leave all 12 out of the audit" in html
    assert "203.0.113.0/24" not in html  # one account is no burst
    assert "made through the link may hold at most 12 slots between them" in html
    response = page.post(
        reverse("campaign_exclude_burst", args=[campaign.pk]), {"network": "198.51.100.0/24"}
    )
    assert response.status_code == 302
    flood = InviteJoin.objects.filter(address="198.51.100.0/24").values_list("user_id", flat=True)
    excluded = AnnotatorExclusion.objects.filter(campaign=campaign, lifted_at__isnull=True)
    assert set(excluded.values_list("annotator_id", flat=True)) == set(flood)
    assert len(flood) == 12
    assert set(excluded.values_list("reason", flat=True)) == {
        "one of a burst of accounts made through the invite link from 198.51.100.0/24"
    }
    again = page.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert "Leave all 12 out of the audit" not in again


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
    assert "at most 3 accounts in 60 minutes (of 36 slots), answered or not" in page
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


def flood_accounts(campaign: Campaign, addresses: list[str], study: str = "study-1") -> Counter:
    """Forged joins from ``addresses``, one each; the answers' statuses."""
    return Counter(
        join(campaign, f"forged{index}", address, study)[1].status_code
        for index, address in enumerate(addresses)
    )


def wrong_on_gold(assignment: Assignment) -> str:
    """The side a script that cannot tell the answers apart picks, where it is wrong."""
    return "B" if assignment.chosen_position == "A" else "A"


@pytest.mark.parametrize("flood", FLOODS)
def test_a_flood_with_first_items_slowed_holds_one_slot_per_account(db: None, flood: str) -> None:
    """The review's floods against the 42-pair, k = 3 campaign (126 slots) with four gold items
    and the first items slowed (the default): the 12 accounts the network may make reserve for
    10 minutes, not 30, answer junk and ask again, wrong on every gold item. The flood ends
    holding 12 of 126 slots, one per account, and a participant from elsewhere gets an item."""
    gold = [f"p{index:04d}" for index in range(42, 46)]
    campaign = study_campaign(46, gold_pair_ids=gold, reservation_minutes=30)
    assert slot_count(campaign) == 126
    assert flood_accounts(campaign, FLOODS[flood]) == {302: 12, 429: FLOOD - 12}
    accounts = [join.user for join in InviteJoin.objects.filter(campaign=campaign)]
    for user in accounts:
        first = next_assignment(campaign, user)
        assert first is not None
        assert first.expires_at - first.reserved_at == timedelta(minutes=10)
        submit_form(first)
        while (asked := next_assignment(campaign, user)) is not None:
            assert asked.item.kind == CampaignItem.Kind.GOLD
            submit_form(asked, rubric_fit=wrong_on_gold(asked))
    held = Assignment.objects.filter(
        campaign=campaign, annotator__in=accounts, item__kind=CampaignItem.Kind.REGULAR
    )
    assert held.count() == 12
    assert set(Counter(held.values_list("annotator_id", flat=True)).values()) == {1}

    real, response = join(campaign, REAL_PID, "203.0.113.20")
    assert response.status_code == 302
    assert reserve(real, campaign).item.kind == CampaignItem.Kind.REGULAR


@pytest.mark.parametrize("flood", FLOODS)
def test_with_prolifics_list_a_flood_of_made_up_ids_makes_no_account(db: None, flood: str) -> None:
    """With Prolific's API token, the same floods carry the study's own STUDY_ID and made-up
    participant ids: Prolific lists none of them, so no account is made (403), the network's
    share of refusals spent, the rest get 429 without a call to Prolific; the participant
    Prolific lists then joins and gets an item."""
    campaign = study_campaign(42, prolific_study_id=STUDY)
    with (
        prolific_stand_in(listed(REAL_PID)) as base,
        override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=base),
    ):
        assert flood_accounts(campaign, FLOODS[flood], STUDY) == {403: 12, 429: FLOOD - 12}
        assert not Participant.objects.filter(campaign=campaign).exists()
        # The list read 12 times (its two pages each), never for the refused rest.
        assert len(ProlificStandIn.reads) == 2 * 12
        real, response = join(campaign, REAL_PID, "203.0.113.20", STUDY)
    assert response.status_code == 302
    assert reserve(real, campaign).annotator.participant.participant_id == REAL_PID


def right_on_gold(assignment: Assignment) -> str:
    """The side that fits the rubric: a script lucky on every gold item."""
    return assignment.chosen_position


def answer_until_refused(campaign: Campaign, users: list[User], most: int = 40) -> None:
    """Each account asks for items and answers them, right on gold, up to ``most`` times."""
    for user in users:
        for _ in range(most):
            asked = next_assignment(campaign, user)
            if asked is None:
                break
            submit_form(asked, rubric_fit=right_on_gold(asked))


@pytest.mark.parametrize("flood", FLOODS)
def test_a_flood_proven_by_gold_holds_at_most_a_tenth_of_the_slots(db: None, flood: str) -> None:
    """The same floods, now right on every gold item (as chance makes a few of them): each
    account is proven by its first gold item and may take items like anyone, but the accounts
    the link made from one network hold at most a tenth of the slots (12 of 126) between
    them, and a participant from elsewhere still gets an item."""
    gold = [f"p{index:04d}" for index in range(42, 46)]
    campaign = study_campaign(46, gold_pair_ids=gold)
    assert flood_accounts(campaign, FLOODS[flood]) == {302: 12, 429: FLOOD - 12}
    accounts = [join.user for join in InviteJoin.objects.filter(campaign=campaign)]
    answer_until_refused(campaign, accounts)
    # The first account is proven and takes the network's share; the rest get nothing new.
    assert Membership.objects.filter(campaign=campaign, proven_at__isnull=False).exists()
    held = Assignment.objects.filter(
        campaign=campaign, annotator__in=accounts, item__kind=CampaignItem.Kind.REGULAR
    ).exclude(status=Assignment.Status.EXPIRED)
    assert held.count() == 12

    real, response = join(campaign, REAL_PID, "203.0.113.20")
    assert response.status_code == 302
    assert reserve(real, campaign).item.kind == CampaignItem.Kind.REGULAR


def test_a_full_network_keeps_its_reservation_and_a_member_added_by_hand_is_not_counted(
    db: None,
) -> None:
    """At its share, a link-made account still gets its own live reservation back; members a
    manager added are not link-made and take items whatever their network holds; with the
    share set to 1.0 the network may hold every slot."""
    campaign = study_campaign(10, k=1)  # 10 slots: one per network
    first, second = (join(campaign, f"pid{n}", "198.51.100.7")[1] for n in (1, 2))
    assert (first.status_code, second.status_code) == (302, 429)
    user = InviteJoin.objects.get(campaign=campaign).user
    held = next_assignment(campaign, user)
    assert held is not None
    assert next_assignment(campaign, user) == held  # its own reservation comes back
    submit_form(held)
    assert next_assignment(campaign, user) is None  # the network's one slot is used
    added = User.objects.create_user("added-by-hand")
    Membership.objects.create(campaign=campaign, user=added, role=Membership.Role.ANNOTATOR)
    assert next_assignment(campaign, added) is not None
    with override_settings(PRB_SLOT_SHARE_PER_NETWORK=1.0):
        cache.clear()
        assert next_assignment(campaign, user) is not None


def done_page(client: Client, campaign: Campaign) -> str:
    return client.get(reverse("annotate_done", args=[campaign.pk])).content.decode()


def test_the_completion_page_says_which_rule_holds_a_link_made_account_back(db: None) -> None:
    """The standing counts open items, not the queue's rules about the member: the completion
    page said "More pairs are open again" to an account its network's share or the gold rule
    held back, and "Continue annotating" led back to it."""
    campaign = study_campaign(10, k=1)  # 10 slots: one per network
    client, _ = join(campaign, "pid1", "198.51.100.7")
    user = InviteJoin.objects.get(campaign=campaign).user
    submit_form(reserve(client, campaign))
    assert next_assignment(campaign, user) is None
    page = done_page(client, campaign)
    assert 'data-state="held" data-held="network"' in page
    assert "Others from your network hold their share for now" in page
    assert "More pairs are open again" not in page
    assert 'progress-done">1</strong> done of <strong class="progress-available">1<' in page
    progress = client.get(f"/api/campaigns/{campaign.pk}/my-progress/").json()
    assert (progress["held"], progress["waiting"], progress["finished"]) == ("network", True, False)
    assert progress["available"] == 1


@override_settings(PRB_SLOT_SHARE_PER_NETWORK=1.0)
def test_the_completion_page_tells_a_newcomer_out_of_gold_that_nothing_more_comes(
    db: None,
) -> None:
    """A newcomer is given gold items only until one is right; wrong on every one of them,
    they get nothing more, and the page says so instead of "More pairs are open again"."""
    campaign = study_campaign(12, k=1, gold_pair_ids=["p0010", "p0011"])
    client, _ = join(campaign, "pid1", "198.51.100.7")
    user = InviteJoin.objects.get(campaign=campaign).user
    first = reserve(client, campaign)
    submit_form(first, rubric_fit=wrong_on_gold(first))
    while (asked := next_assignment(campaign, user)) is not None:
        assert asked.item.kind == CampaignItem.Kind.GOLD
        submit_form(asked, rubric_fit=wrong_on_gold(asked))
    page = done_page(client, campaign)
    assert 'data-state="finished" data-held="gold-spent"' in page
    assert "no check pair is left for you: no more pairs will come to you here" in page
    assert "More pairs are open again" not in page
    progress = client.get(f"/api/campaigns/{campaign.pk}/my-progress/").json()
    assert (progress["held"], progress["finished"]) == ("gold-spent", True)
    assert "Finished, thank you." in client.get(reverse("home")).content.decode()
