"""The sign-up invite and the study link: a sign-up makes an annotator account with a password
for one campaign alone; either link can be turned off (then it answers like no link) and
rotated (the old address ends, accounts made through it keep working)."""

import pytest
from django.contrib.auth.models import User
from django.http import Http404
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.lifecycle import CampaignSetupError, add_member, set_status
from prb_annotate.models import Campaign, Dataset, Membership, Participant
from prb_annotate.security.access import annotator_membership_or_404
from tests.support.pages import active_campaign

PASSWORD = "a-long-signup-password-7"


def signup_form(username: str, password: str = PASSWORD, again: str | None = None) -> dict:
    return {"username": username, "password1": password, "password2": again or password}


@pytest.fixture
def two_campaigns(dataset: Dataset) -> tuple[Campaign, Campaign]:
    return active_campaign(dataset, name="first"), active_campaign(dataset, name="second")


def test_it_signs_up_an_annotator_for_that_campaign_alone(two_campaigns) -> None:
    """The form makes the account and logs it in on its first item; the account logs in
    again with its password, and reaches nothing but this campaign."""
    first, second = two_campaigns
    client = Client()
    url = reverse("signup", args=[first.signup_token])
    page = client.get(url)
    assert page.status_code == 200
    assert "Sign up and start" in page.content.decode()
    response = client.post(url, signup_form("rosa"))
    assert response.status_code == 302
    assert response["Location"] == reverse("annotate", args=[first.pk])
    assert client.get(response["Location"]).status_code == 200

    rosa = User.objects.get(username="rosa")
    assert rosa.check_password(PASSWORD)
    assert Participant.objects.get(user=rosa).campaign_id == first.pk
    assert Membership.objects.get(user=rosa).role == Membership.Role.ANNOTATOR
    assert Client().login(username="rosa", password=PASSWORD)
    with pytest.raises(CampaignSetupError):
        add_member(second, rosa)
    Membership.objects.create(campaign=second, user=rosa)  # however it came about
    with pytest.raises(Http404):
        annotator_membership_or_404(rosa, second.pk)


def test_it_refuses_bad_sign_ups_and_writes_nothing(two_campaigns, annotator) -> None:
    first, _ = two_campaigns
    url = reverse("signup", args=[first.signup_token])
    cases = [
        (signup_form("alice"), "This username is taken."),
        (signup_form("prolific-1-x"), "reserved"),
        (signup_form("sam", again="something-else-1"), "The two passwords differ."),
        (signup_form("sam", password="short"), "too short"),
        (signup_form("bad/name"), "Enter a valid username"),
    ]
    for data, message in cases:
        response = Client().post(url, data)
        assert response.status_code == 400, data
        assert message in response.content.decode(), data
    assert not User.objects.filter(username__in=["sam", "prolific-1-x", "bad/name"]).exists()
    assert not Participant.objects.exists()


def test_it_asks_a_logged_in_visitor_to_log_out_first(two_campaigns, annotator, login) -> None:
    first, _ = two_campaigns
    page = login(annotator).get(reverse("signup", args=[first.signup_token]))
    assert "log out first" in page.content.decode()
    assert "signup-form" not in page.content.decode()


def test_it_turns_each_link_off_and_on_and_rotates_it(two_campaigns, manager, login) -> None:
    """From the dashboard's buttons: off answers 404 like an unknown link; a new address ends
    the old one; the accounts made before keep working."""
    first, _ = two_campaigns
    staff = login(manager)
    signup_url = reverse("signup", args=[first.signup_token])
    participant = Client()
    study_url = reverse("join", args=[first.invite_token])
    participant.post(study_url, {"PROLIFIC_PID": "P7", "STUDY_ID": "s", "SESSION_ID": "x"})
    assert participant.get(reverse("annotate", args=[first.pk])).status_code == 200

    for link, url in (("signup", signup_url), ("study", study_url)):
        staff.post(reverse("campaign_link", args=[first.pk, link, "off"]))
        assert Client().get(url, {"PROLIFIC_PID": "P8"}).status_code == 404, link
        staff.post(reverse("campaign_link", args=[first.pk, link, "on"]))
        assert Client().get(url, {"PROLIFIC_PID": "P8"}).status_code == 200, link
        staff.post(reverse("campaign_link", args=[first.pk, link, "rotate"]))
        assert Client().get(url, {"PROLIFIC_PID": "P8"}).status_code == 404, link
    first.refresh_from_db()
    assert Client().get(reverse("signup", args=[first.signup_token])).status_code == 200
    assert (
        Client().get(reverse("join", args=[first.invite_token]), {"PROLIFIC_PID": "P8"}).status_code
        == 200
    )
    assert participant.get(reverse("annotate", args=[first.pk])).status_code == 200
    dashboard = staff.get(reverse("campaign_detail", args=[first.pk])).content.decode()
    assert f"http://testserver/signup/{first.signup_token}/" in dashboard
    assert (
        f"http://testserver/join/{first.invite_token}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        in dashboard
    )
    assert staff.post(reverse("campaign_link", args=[first.pk, "other", "off"])).status_code == 404


def test_it_rotates_a_link_and_turns_it_off_through_the_api(two_campaigns, manager, login) -> None:
    first, _ = two_campaigns
    client = login(manager)
    old = first.signup_token
    body = client.post(f"/api/campaigns/{first.pk}/links/signup/rotate/").json()
    assert body["signup_token"] != old
    assert Client().get(reverse("signup", args=[old])).status_code == 404
    patched = client.patch(
        f"/api/campaigns/{first.pk}/",
        {"study_link_enabled": False},
        content_type="application/json",
    )
    assert patched.json()["study_link_enabled"] is False
    assert (
        Client().get(reverse("join", args=[first.invite_token]), {"PROLIFIC_PID": "P9"}).status_code
        == 404
    )
    bad = client.post(f"/api/campaigns/{first.pk}/links/nope/rotate/")
    assert bad.status_code == 400


def test_it_takes_no_sign_up_once_the_campaign_is_closed(two_campaigns) -> None:
    first, _ = two_campaigns
    set_status(first, Campaign.Status.CLOSED)
    url = reverse("signup", args=[first.signup_token])
    assert "This campaign is closed" in Client().get(url).content.decode()
    Client().post(url, signup_form("tom"))
    assert not User.objects.filter(username="tom").exists()


def test_it_limits_the_new_accounts_one_address_makes(two_campaigns, settings) -> None:
    """Sign-ups count against their address's share of the slots, as study-link joins do: past
    it the next sign-up from that network is refused (429, nothing written) until one of its
    accounts answers; another network still signs up."""
    first, _ = two_campaigns
    settings.PRB_JOIN_SHARE_PER_ADDRESS = 0.0  # one waiting account per address
    url = reverse("signup", args=[first.signup_token])
    flood = "198.51.100.7"
    assert Client().post(url, signup_form("flood1"), REMOTE_ADDR=flood).status_code == 302
    refused = Client().post(url, signup_form("flood2"), REMOTE_ADDR=flood)
    assert refused.status_code == 429
    assert "Too many new participants from your network" in refused.content.decode()
    assert not User.objects.filter(username="flood2").exists()
    other = Client().post(url, signup_form("elsewhere"), REMOTE_ADDR="203.0.113.50")
    assert other.status_code == 302
