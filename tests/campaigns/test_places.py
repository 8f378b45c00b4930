"""Places: a participant who arrives when the campaign cannot give them a single item is told
so on the join page, before consent, practice or qualification, with the campaign's no-places
URL and its code; the count is the queue's (free slots less what members at work will take),
decided under the campaign's lock, so newcomers arriving together never outnumber the places."""

import threading
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member, create_campaign, set_status
from prb_annotate.campaigns.places import places
from prb_annotate.models import Assignment, Campaign, Dataset, Membership, Participant
from tests.conftest import make_pairs
from tests.support.audit import annotate

NO_PLACES = "https://app.prolific.com/submissions/complete?cc=NOPLACES7"


def study(pairs: int, k: int, **settings: Any) -> Campaign:
    dataset = Dataset.objects.create(name=f"places-{pairs}-{k}")
    make_pairs(dataset, pairs)
    campaign = create_campaign(dataset, f"study {pairs}x{k}", k=k, seed=3, **settings)
    set_status(campaign, Campaign.Status.ACTIVE)
    return campaign


def join_url(campaign: Campaign, pid: str) -> str:
    query = f"?PROLIFIC_PID={pid}&STUDY_ID=s1&SESSION_ID=session-{pid}"
    return reverse("join", args=[campaign.invite_token]) + query


def fill(campaign: Campaign) -> None:
    """Every slot of every regular pair submitted by annotators who then stopped long ago."""
    long_ago = timezone.now() - timedelta(days=2)
    users = [User.objects.create_user(f"done{i}") for i in range(campaign.annotations_per_pair)]
    for user in users:
        Membership.objects.filter(pk=add_member(campaign, user).pk).update(joined_at=long_ago)
    for item in campaign.items.all():
        for user in users:
            annotate(item, user)
    Assignment.objects.filter(campaign=campaign).update(reserved_at=long_ago, submitted_at=long_ago)


def test_it_counts_free_slots_less_what_members_at_work_will_take(db: None) -> None:
    """k = 2 over 3 pairs: 6 slots. An answer from an earlier annotator and a member's live
    reservation occupy two; that member (quota 2, one in hand) will take one more, and a
    newcomer who joined now and has done nothing their whole quota of 2: 4 free, 3 held."""
    campaign = study(3, 2, quota_per_annotator=2)
    working, newcomer = User.objects.create_user("working"), User.objects.create_user("new")
    add_member(campaign, working)
    add_member(campaign, newcomer)
    in_hand = next_assignment(campaign, working)
    assert in_hand is not None
    annotate(in_hand.item, User.objects.create_user("earlier"))  # a non-member's old answer
    counted = places(campaign)
    assert (counted.free_slots, counted.held, counted.left) == (4, 3, 1)
    # A member gone past the reservation timeout gives their places back.
    Membership.objects.filter(user=newcomer).update(
        joined_at=timezone.now() - timedelta(minutes=campaign.reservation_minutes + 1)
    )
    assert places(campaign).held == 1


def test_a_full_campaign_says_so_before_consent_with_its_no_places_code(db: None) -> None:
    campaign = study(2, 2, consent_text="I agree.", no_places_url=NO_PLACES)
    fill(campaign)
    assert places(campaign).left == 0
    participant = Client()
    page = participant.get(join_url(campaign, "late1"))
    body = page.content.decode()
    assert page.status_code == 409
    assert "No places left" in body
    assert 'id="start-button"' not in body
    assert "I agree." not in body  # no consent asked
    assert f'href="{NO_PLACES}"' in body.replace("&amp;", "&")
    assert "<code>NOPLACES7</code>" in body
    sent = participant.post(
        reverse("join", args=[campaign.invite_token]),
        {"PROLIFIC_PID": "late1", "STUDY_ID": "s1", "SESSION_ID": "x", "consent": "yes"},
    )
    assert sent.status_code == 409
    assert not Participant.objects.filter(campaign=campaign).exists()


def test_a_paused_full_campaign_says_so_before_consent_too(db: None) -> None:
    """The join itself refuses a newcomer whatever the status; the page once offered consent
    and Start on a paused campaign, and answered 409 only after them."""
    campaign = study(2, 2, consent_text="I agree.", no_places_url=NO_PLACES)
    fill(campaign)
    set_status(campaign, Campaign.Status.PAUSED)
    page = Client().get(join_url(campaign, "late2"))
    assert page.status_code == 409
    assert "No places left" in page.content.decode()
    assert "I agree." not in page.content.decode()


def test_the_join_page_counts_the_items_the_places_allow(db: None) -> None:
    """Admitted with fewer places left than the quota, a newcomer can do at most those: the
    page once promised the whole quota."""
    campaign = study(3, 1, quota_per_annotator=5)
    body = Client().get(join_url(campaign, "early1")).content.decode()
    assert "<strong>3</strong> items" in body
    assert "You may do at most 3 items here, fewer than its quota of 5" in body
    roomy = study(8, 1, quota_per_annotator=5)
    body = Client().get(join_url(roomy, "early2")).content.decode()
    assert "<strong>5</strong> items" in body
    assert 'id="places-short"' not in body


def test_the_progress_api_gives_the_places(db: None, manager: User) -> None:
    campaign = study(2, 2)
    api = APIClient()
    api.force_authenticate(manager)
    before = api.get(f"/api/campaigns/{campaign.pk}/progress/").json()["places"]
    assert before == {"free_slots": 4, "held": 0, "left": 4, "open_pairs": 2, "for_newcomer": 2}
    fill(campaign)
    after = api.get(f"/api/campaigns/{campaign.pk}/progress/").json()["places"]
    assert after == {"free_slots": 0, "held": 0, "left": 0, "open_pairs": 0, "for_newcomer": 0}


@pytest.mark.django_db(transaction=True)
def test_newcomers_arriving_together_never_outnumber_the_places() -> None:
    """Twelve participants from twelve networks at once for 5 places (k = 1, 5 pairs, a
    quota of 1): five accounts are made, the rest told there are no places, and every account
    made gets an item."""
    campaign = study(5, 1, quota_per_annotator=1)
    start = threading.Barrier(12)
    statuses: list[int] = []

    def arrive(index: int) -> None:
        try:
            start.wait(timeout=30)
            response = Client().post(
                reverse("join", args=[campaign.invite_token]),
                {"PROLIFIC_PID": f"p{index}", "STUDY_ID": "s1", "SESSION_ID": f"s{index}"},
                REMOTE_ADDR=f"192.0.{index + 1}.7",  # twelve networks
            )
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=arrive, args=(index,)) for index in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert Counter(statuses) == {302: 5, 409: 7}
    members = Membership.objects.filter(campaign=campaign).select_related("user")
    assert members.count() == 5
    for member in members:
        assert next_assignment(campaign, member.user) is not None, member.user.username


def test_a_newcomer_is_promised_no_more_than_one_item_per_open_pair(db: None) -> None:
    """k = 3 over 12 pairs is 36 places, but one annotator answers each pair once: the join
    page once said "at most 36 items" (and three times the minutes)."""
    campaign = study(12, 3, quota_per_annotator=50)
    counted = places(campaign)
    assert (counted.left, counted.open_pairs, counted.for_newcomer) == (36, 12, 12)
    body = Client().get(join_url(campaign, "early3")).content.decode()
    assert "<strong>12</strong> items" in body
    assert "You may do at most 12 items here, fewer than its quota of 50" in body
    # A pair whose slots are all taken is no work for anyone: 11 open pairs are left.
    first = campaign.items.order_by("pk").first()
    assert first is not None
    for index in range(3):
        annotate(first, User.objects.create_user(f"full{index}"))
    assert places(campaign).for_newcomer == 11


def test_the_sign_up_page_says_what_a_newcomer_could_do(db: None) -> None:
    """It once promised the whole quota ("You will be asked for 50 items") whatever was left,
    and said nothing of a full campaign until the form was sent."""
    campaign = study(12, 3, quota_per_annotator=50)
    url = reverse("signup", args=[campaign.signup_token])
    body = Client().get(url).content.decode()
    assert "<strong>12</strong> items" in body
    assert "You may do at most 12 items here, fewer than its quota of 50" in body
    full = study(2, 2, quota_per_annotator=5)
    fill(full)
    page = Client().get(reverse("signup", args=[full.signup_token]))
    assert page.status_code == 409
    assert 'id="no-places"' in page.content.decode()
    assert 'id="signup-form"' not in page.content.decode()


def test_the_consent_page_counts_what_the_quota_leaves_the_member(db: None) -> None:
    """A member three items into a quota of 4 asked for a consent text added since: the page
    once gave the whole campaign's estimate ("4 items")."""
    campaign = study(6, 1, quota_per_annotator=4)
    member = User.objects.create_user("midway")
    add_member(campaign, member)
    for item in list(campaign.items.order_by("pk"))[:3]:
        annotate(item, member)
    Campaign.objects.filter(pk=campaign.pk).update(consent_text="I agree.")
    client = Client()
    client.force_login(member)
    body = client.get(reverse("annotate_consent", args=[campaign.pk])).content.decode()
    assert "The rest takes about <strong>5 minutes</strong>: <strong>1</strong> more item" in body
    assert "<strong>4</strong> items" not in body
