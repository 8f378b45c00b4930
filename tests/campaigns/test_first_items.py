"""A participant's first items are slowed (``Campaign.first_reservation_minutes``): a member
whose account an invite link made holds each item for the short first window until they answer
a gold, practice or qualification item right, and where the campaign has gold items their first
answer is followed by gold items only until one is right. Members added by a manager, and proven
members, keep the campaign's reservation and queue; a campaign without gold items shortens the
first reservation alone; 0 turns the rule off."""

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Assignment, Campaign, CampaignItem, Membership
from tests.campaigns.test_hardening_joins import join, study_campaign
from tests.support.campaigns import submit_form
from tests.support.pages import campaign_form
from tests.support.qualification import answer_current, screening_campaign

GOLD = [f"p{index:04d}" for index in range(10, 13)]  # three gold pairs beside ten regular ones


@pytest.fixture(autouse=True)
def whole_campaign_per_network(settings: Any) -> None:
    """These campaigns are small (20-26 slots), so one participant's few items pass a tenth
    of them: the network's share of the slots, tested in test_hardening_joins, is lifted."""
    settings.PRB_SLOT_SHARE_PER_NETWORK = 1.0


def newcomer(campaign: Campaign, pid: str = "5f0c8e1e2b3a4c5d6e7f8091") -> User:
    """A participant who joined through the study link."""
    _client, response = join(campaign, pid, "203.0.113.20")
    assert response.status_code == 302
    return Membership.objects.get(campaign=campaign, participant_id=pid).user


def held_for(assignment: Assignment) -> timedelta:
    return assignment.expires_at - assignment.reserved_at


def reserve(campaign: Campaign, user: User) -> Assignment:
    assignment = next_assignment(campaign, user)
    assert assignment is not None
    return assignment


def takes_regular_items(campaign: Campaign, user: User, count: int) -> None:
    """The queue as for anyone: ``count`` regular items in a row, each held 30 minutes (the
    campaign's reservation), each answered."""
    for _ in range(count):
        assignment = reserve(campaign, user)
        assert assignment.item.kind == CampaignItem.Kind.REGULAR
        assert held_for(assignment) == timedelta(minutes=30)
        submit_form(assignment)


def answer_gold(assignment: Assignment, *, right: bool) -> None:
    """Answer a gold item as it expects (the chosen side fits, preference) or not."""
    assert assignment.item.kind == CampaignItem.Kind.GOLD
    chosen = assignment.chosen_position
    submit_form(assignment, rubric_fit=chosen if right else ("B" if chosen == "A" else "A"))


def proven(campaign: Campaign, user: User) -> bool:
    return Membership.objects.get(campaign=campaign, user=user).proven_at is not None


def test_a_newcomer_gets_one_regular_item_then_gold_until_one_is_right(db: None) -> None:
    campaign = study_campaign(13, k=2, gold_pair_ids=GOLD, reservation_minutes=30)
    assert campaign.first_reservation_minutes == 10  # the default
    user = newcomer(campaign)

    first = reserve(campaign, user)
    assert first.item.kind == CampaignItem.Kind.REGULAR  # gold rate 0: a regular item first
    assert held_for(first) == timedelta(minutes=10)
    submit_form(first)

    wrong = reserve(campaign, user)
    assert held_for(wrong) == timedelta(minutes=10)
    answer_gold(wrong, right=False)
    assert not proven(campaign, user)
    right = reserve(campaign, user)
    answer_gold(right, right=True)
    assert proven(campaign, user)

    after = reserve(campaign, user)
    assert after.item.kind == CampaignItem.Kind.REGULAR
    assert held_for(after) == timedelta(minutes=30)


def test_a_newcomer_never_right_on_gold_holds_one_regular_slot(db: None) -> None:
    """A script that answers at random is wrong on gold now and then; one that is always wrong
    ends with one regular slot, however long it asks, and then nothing."""
    campaign = study_campaign(13, k=2, gold_pair_ids=GOLD)
    user = newcomer(campaign)
    submit_form(reserve(campaign, user))
    for _ in GOLD:
        answer_gold(reserve(campaign, user), right=False)
    assert next_assignment(campaign, user) is None
    regular = Assignment.objects.filter(annotator=user, item__kind=CampaignItem.Kind.REGULAR)
    assert regular.count() == 1


def test_members_a_manager_added_keep_the_campaigns_reservation_and_queue(db: None) -> None:
    campaign = study_campaign(13, k=2, gold_pair_ids=GOLD, reservation_minutes=30)
    member = User.objects.create_user("lab-member")
    add_member(campaign, member)
    takes_regular_items(campaign, member, 3)


def test_without_gold_only_the_first_reservation_is_short(db: None) -> None:
    campaign = study_campaign(10, k=2, reservation_minutes=30, first_reservation_minutes=5)
    user = newcomer(campaign)
    first = reserve(campaign, user)
    assert held_for(first) == timedelta(minutes=5)
    submit_form(first)
    takes_regular_items(campaign, user, 2)


def test_the_short_window_is_never_longer_than_the_campaigns(db: None) -> None:
    campaign = study_campaign(10, k=2, reservation_minutes=5, first_reservation_minutes=20)
    assert held_for(reserve(campaign, newcomer(campaign))) == timedelta(minutes=5)


def test_zero_turns_it_off(db: None) -> None:
    campaign = study_campaign(
        13, k=2, gold_pair_ids=GOLD, reservation_minutes=30, first_reservation_minutes=0
    )
    takes_regular_items(campaign, newcomer(campaign), 3)


def test_a_right_practice_answer_proves_a_newcomer(dataset) -> None:
    campaign = screening_campaign(dataset, reservation_minutes=30)
    campaign.refresh_from_db()
    user = newcomer(campaign)
    answer_current(campaign, user, right=False)
    assert not proven(campaign, user)
    answer_current(campaign, user, right=True)
    assert proven(campaign, user)


def test_managers_set_it_on_the_settings_page_and_in_the_api(
    db: None, manager: User, login
) -> None:
    campaign = study_campaign(10)
    client = login(manager)
    page = client.get(reverse("campaign_settings", args=[campaign.pk])).content.decode()
    assert 'name="first_reservation_minutes"' in page
    url = f"/api/campaigns/{campaign.pk}/"
    changed = client.patch(url, {"first_reservation_minutes": 3}, content_type="application/json")
    assert changed.status_code == 200
    assert changed.json()["first_reservation_minutes"] == 3
    refused = client.patch(url, {"first_reservation_minutes": -1}, content_type="application/json")
    assert refused.status_code == 400
    assert "first_reservation_minutes" in refused.json()["errors"]


def test_the_creation_form_takes_it(dataset, manager: User, login) -> None:
    client = login(manager)
    response = client.post(
        reverse("campaign_create"), campaign_form(dataset, first_reservation_minutes="7")
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Campaign.objects.get(name="spring pilot").first_reservation_minutes == 7
