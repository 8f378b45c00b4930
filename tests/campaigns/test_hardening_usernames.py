"""Usernames are compared case-insensitively on every path that makes an account: a manager
adding "MANAGER" or "Alice" reaches the existing accounts, never a look-alike of them, and a
sign-up cannot take a look-alike either; the sign-up form says a name is taken only as often
as an address may fail to log in."""

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client, override_settings
from django.urls import reverse

from prb_annotate.campaigns.accounts import add_annotators, parse_annotators
from prb_annotate.campaigns.lifecycle import create_campaign, set_status
from prb_annotate.campaigns.signup import sign_up
from prb_annotate.models import Campaign, Dataset, Membership


@pytest.fixture
def campaign(dataset: Dataset, manager: User) -> Campaign:
    made = create_campaign(dataset, "names", k=1, created_by=manager)
    set_status(made, Campaign.Status.ACTIVE)
    return made


def test_adding_a_name_in_other_letters_adds_the_existing_account(
    campaign: Campaign, manager: User, annotator: User
) -> None:
    added = add_annotators(campaign, parse_annotators("ALICE\nManager"), site="http://x")
    assert [(row.username, row.created) for row in added] == [
        ("alice", False),
        ("manager", False),
    ]
    assert User.objects.filter(username__iexact="manager").count() == 1
    assert User.objects.filter(username__iexact="alice").count() == 1
    members = Membership.objects.filter(campaign=campaign, role="annotator")
    assert set(members.values_list("user__username", flat=True)) == {"alice", "manager"}


def test_a_sign_up_cannot_take_a_look_alike(campaign: Campaign, manager: User) -> None:
    for name in ("Manager", "MANAGER"):
        with pytest.raises(ValidationError) as refused:
            sign_up(campaign.signup_token, name, "a long pass phrase 9", address="192.0.2.1")
        assert refused.value.message_dict == {"username": ["This username is taken."]}
    assert User.objects.filter(username__iexact="manager").count() == 1


@override_settings(LOGIN_FAILURES_PER_ADDRESS=3)
def test_the_sign_up_form_names_existing_accounts_only_a_few_times_per_address(
    campaign: Campaign, manager: User, annotator: User
) -> None:
    """A person must hear that a name is taken; a script asking name after name is stopped by
    the address's failed-login limit, after which the form names nothing."""
    url = reverse("signup", args=[campaign.signup_token])
    form = {"password1": "a long pass phrase 9", "password2": "a long pass phrase 9"}
    client = Client()
    for name in ("manager", "alice", "Manager"):
        response = client.post(url, {**form, "username": name}, REMOTE_ADDR="198.51.100.4")
        assert response.status_code == 400
        assert "This username is taken." in response.content.decode()
    for name in ("alice", "MANAGER"):
        response = client.post(url, {**form, "username": name}, REMOTE_ADDR="198.51.100.4")
        assert response.status_code == 429
        page = response.content.decode()
        assert "This username is taken." not in page
        # The visitor tried names, not logins: the refusal says so.
        assert "Too many names that are taken were tried from this address" in page
        assert "failed logins" not in page
    # A free name is still taken up from that address.
    fresh = Client().post(url, {**form, "username": "nobody-yet"}, REMOTE_ADDR="198.51.100.4")
    assert fresh.status_code == 302
    # Another address asks afresh.
    other = Client().post(url, {**form, "username": "alice"}, REMOTE_ADDR="203.0.113.8")
    assert other.status_code == 400
