"""Lists follow the pages' scoping: an account made by an invite link, added to another
campaign through the admin (as annotator or manager), does not see that campaign, nor its
invite token, on the campaign list, the API's list or the home page; other accounts' lists
keep their campaigns and counts."""

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.models import Dataset, Membership
from tests.conftest import PASSWORD
from tests.support.pages import active_campaign


def participant_of(campaign_token: str) -> Client:
    client = Client()
    response = client.post(
        reverse("join", args=[campaign_token]),
        {"PROLIFIC_PID": "P1", "STUDY_ID": "s", "SESSION_ID": "t"},
    )
    assert response.status_code == 302
    return client


def test_a_participant_added_elsewhere_lists_only_its_own_campaign(
    dataset: Dataset, manager: User, login
) -> None:
    own = active_campaign(dataset, name="own study")
    other = active_campaign(dataset, name="secret campaign")
    client = participant_of(own.invite_token)
    user = User.objects.get(username__startswith="prolific-")
    # What the admin's membership inline writes, with no check of its own.
    Membership.objects.create(campaign=other, user=user, role=Membership.Role.ANNOTATOR)
    third = active_campaign(dataset, name="third campaign")
    Membership.objects.create(campaign=third, user=user, role=Membership.Role.MANAGER)

    home = client.get(reverse("home")).content.decode()
    assert "own study" in home
    for campaign in (other, third):
        assert campaign.name not in home
        assert campaign.invite_token not in home
    assert client.get(reverse("campaign_list")).status_code == 404
    api = client.get("/api/campaigns/")
    assert api.status_code == 200
    assert api.json()["results"] == []
    assert client.get(reverse("campaign_detail", args=[third.pk])).status_code == 404
    assert client.get(reverse("annotate", args=[other.pk])).status_code == 404


def test_a_manager_still_lists_what_they_manage_with_its_counts(
    dataset: Dataset, annotator: User, other_annotator: User
) -> None:
    managed = active_campaign(dataset, annotator, other_annotator, name="managed")
    active_campaign(dataset, annotator, name="not managed")
    boss = User.objects.create_user("boss", password=PASSWORD)
    Membership.objects.create(campaign=managed, user=boss, role=Membership.Role.MANAGER)
    client = Client()
    client.force_login(boss)
    page = client.get(reverse("campaign_list"))
    assert page.status_code == 200
    listed = list(page.context["campaigns"])
    assert [campaign.name for campaign in listed] == ["managed"]
    assert listed[0].annotator_count == 2
    assert listed[0].item_count == managed.items.count()
    api = client.get("/api/campaigns/").json()["results"]
    assert [row["name"] for row in api] == ["managed"]
    home = client.get(reverse("home")).content.decode()
    assert "managed" in home
    assert "not managed" not in home
