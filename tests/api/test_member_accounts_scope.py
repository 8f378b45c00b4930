"""A manager acts on the accounts of their own campaigns only.

A new set-password link is a key to its account, so a manager without staff rights gets one
only for an account whose every tie is in campaigns they manage and that manages nothing: adding
another campaign's password-less account and asking for its link is refused with 403, and the
account's password stays unset. And an account id that is none of the campaign's accounts
answers 404 naming no one, on the API and on the pages, so that ids do not reveal usernames.
"""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.accounts import add_annotators, parse_annotators
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.campaigns.members import KEEP, may_speak_for, remove_member
from prb_annotate.models import Campaign, Dataset, Membership
from tests.conftest import make_user
from tests.support.campaigns import active_campaign, annotators

SECRET_CAMPAIGN = "Secret oncology study"
NEW_PASSWORD = "a-long-new-password-42"


@pytest.fixture
def ours(dataset: Dataset) -> Campaign:
    return active_campaign(dataset, name="Our pilot")


@pytest.fixture
def theirs(dataset: Dataset) -> Campaign:
    return active_campaign(dataset, name=SECRET_CAMPAIGN)


@pytest.fixture
def lead(ours: Campaign) -> User:
    """A manager of ``ours`` without staff rights."""
    user = make_user("lead")
    add_member(ours, user, Membership.Role.MANAGER)
    return user


def password_less(campaign: Campaign, username: str) -> User:
    """An account a manager added to ``campaign``, whose owner has not set a password yet."""
    add_annotators(campaign, parse_annotators(username), site="http://testserver")
    return User.objects.get(username=username)


def link_url(campaign: Campaign, user: User) -> str:
    return f"/api/campaigns/{campaign.pk}/members/{user.pk}/set-password-link/"


def add_by_name(client: Client, campaign: Campaign, username: str) -> None:
    added = client.post(
        f"/api/campaigns/{campaign.pk}/members/",
        {"username": username},
        content_type="application/json",
    )
    assert added.status_code == 201, added.content


def assert_unchanged(user: User) -> None:
    stored = user.password
    user.refresh_from_db()
    assert user.password == stored
    assert not user.has_usable_password()


# --- the set-password link -----------------------------------------------------------------


def test_a_manager_cannot_take_over_another_campaigns_account_through_the_api(
    ours: Campaign, theirs: Campaign, lead: User, login: Any
) -> None:
    carol = password_less(theirs, "carol")
    client = login(lead)
    add_by_name(client, ours, "carol")

    refused = client.post(link_url(ours, carol))

    assert refused.status_code == 403
    body = refused.json()
    assert body["detail"] == (
        "Only staff can give this account a new set-password link: it is not only an "
        "annotator of campaigns you manage."
    )
    assert "set_password_url" not in body
    assert SECRET_CAMPAIGN not in refused.content.decode()
    assert_unchanged(carol)


def test_a_manager_cannot_take_over_another_campaigns_manager(
    ours: Campaign, theirs: Campaign, lead: User, login: Any
) -> None:
    boss = User.objects.create_user("boss")  # no usable password
    add_member(theirs, boss, Membership.Role.MANAGER)
    client = login(lead)
    add_by_name(client, ours, "boss")

    assert client.post(link_url(ours, boss)).status_code == 403
    assert_unchanged(boss)


def test_a_manager_cannot_take_over_an_account_removed_from_another_campaign(
    ours: Campaign, theirs: Campaign, lead: User, login: Any
) -> None:
    """Its answers stay in the other campaign, whose managers may add it back."""
    carol = password_less(theirs, "carol")
    assert next_assignment(theirs, carol) is not None
    remove_member(theirs, carol, KEEP, by=None)
    client = login(lead)
    add_by_name(client, ours, "carol")

    assert client.post(link_url(ours, carol)).status_code == 403
    assert_unchanged(carol)


def test_the_members_page_refuses_the_same_link_with_403(
    ours: Campaign, theirs: Campaign, lead: User, login: Any
) -> None:
    carol = password_less(theirs, "carol")
    add_member(ours, carol)
    page = login(lead).post(reverse("campaign_reissue_link", args=[ours.pk, carol.pk]))

    assert page.status_code == 403
    html = page.content.decode()
    assert "Only staff can give this account a new set-password link" in html
    assert "/set-password/" not in html
    assert SECRET_CAMPAIGN not in html
    assert_unchanged(carol)


def test_a_manager_still_gets_a_link_for_their_own_annotator_and_it_works(
    ours: Campaign, lead: User, login: Any
) -> None:
    client = login(lead)
    made = client.post(
        f"/api/campaigns/{ours.pk}/annotators/",
        {"annotators": [{"username": "dave"}]},
        content_type="application/json",
    )
    assert made.status_code == 201
    dave = User.objects.get(username="dave")

    link = client.post(link_url(ours, dave))

    assert link.status_code == 201
    browser = Client()
    page = browser.get(link.json()["set_password_url"], follow=True)
    assert page.status_code == 200
    browser.post(
        page.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    dave.refresh_from_db()
    assert dave.check_password(NEW_PASSWORD)


def test_a_manager_of_every_campaign_an_account_is_in_may_have_its_link(
    ours: Campaign, theirs: Campaign, lead: User, login: Any
) -> None:
    carol = password_less(theirs, "carol")
    add_member(ours, carol)
    add_member(theirs, lead, Membership.Role.MANAGER)

    assert login(lead).post(link_url(ours, carol)).status_code == 201


def test_staff_may_have_the_link_of_any_account_but_a_staff_one(
    ours: Campaign, theirs: Campaign, manager: User, login: Any
) -> None:
    carol = password_less(theirs, "carol")
    add_member(ours, carol)
    client = login(manager)

    assert client.post(link_url(ours, carol)).status_code == 201
    admin = User.objects.create_user("admin2", is_staff=True)
    add_member(ours, admin)
    staff_refused = client.post(link_url(ours, admin))
    assert staff_refused.status_code == 400
    assert "staff account" in staff_refused.json()["errors"]["annotator"][0]


def test_the_rule_is_one_function(ours: Campaign, theirs: Campaign, lead: User) -> None:
    mine, shared = annotators(ours, 2)
    add_member(theirs, shared)
    admin = User.objects.create_user("admin2", is_staff=True)
    add_member(ours, admin)

    assert may_speak_for(lead, mine)
    assert not may_speak_for(lead, shared)
    assert not may_speak_for(lead, admin)
    assert not may_speak_for(make_user("nobody"), mine)


# --- account ids from outside the campaign -------------------------------------------------


@pytest.fixture
def secret_admin(db: None) -> User:
    return make_user("secret-admin", staff=True)


def outside_ids(secret_admin: User) -> list[int]:
    """An existing account outside the campaign, and an id no account has."""
    return [secret_admin.pk, secret_admin.pk + 1000]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("exclusions/{id}/lift/", None),
        ("members/{id}/remove/", {"answers": KEEP}),
        ("members/{id}/set-password-link/", None),
        ("qualification/members/{id}/admit/", {"reason": "probe"}),
    ],
)
def test_an_id_outside_the_campaign_is_404_naming_no_one_in_the_api(
    ours: Campaign, lead: User, secret_admin: User, login: Any, path: str, body: Any
) -> None:
    client = login(lead)
    answers = []
    for user_id in outside_ids(secret_admin):
        url = f"/api/campaigns/{ours.pk}/" + path.format(id=user_id)
        answer = client.post(url, body, content_type="application/json")
        assert answer.status_code == 404
        assert "secret-admin" not in answer.content.decode()
        answers.append(answer.json())
    # An account that exists and one that does not are answered alike.
    assert answers[0] == answers[1]


@pytest.mark.parametrize(
    ("name", "form"),
    [
        ("campaign_lift_exclusion", None),
        ("campaign_remove_member", {"answers": KEEP}),
        ("campaign_reissue_link", None),
    ],
)
def test_an_id_outside_the_campaign_is_404_naming_no_one_on_the_pages(
    ours: Campaign, lead: User, secret_admin: User, login: Any, name: str, form: Any
) -> None:
    client = login(lead)
    for user_id in outside_ids(secret_admin):
        page = client.post(reverse(name, args=[ours.pk, user_id]), form or {}, follow=True)
        assert page.status_code == 404
        assert "secret-admin" not in page.content.decode()


@pytest.mark.parametrize("name", ["campaign_exclude", "campaign_qualification_admit"])
def test_the_exclude_and_admit_pages_take_no_id_from_outside_the_campaign(
    ours: Campaign, lead: User, secret_admin: User, login: Any, name: str
) -> None:
    client = login(lead)
    for user_id in outside_ids(secret_admin):
        page = client.post(
            reverse(name, args=[ours.pk]),
            {"annotator": user_id, "reason": "probe"},
            follow=True,
        )
        assert page.status_code == 404
        assert "secret-admin" not in page.content.decode()


def test_the_campaigns_own_annotators_are_still_named(
    ours: Campaign, lead: User, login: Any
) -> None:
    (member,) = annotators(ours, 1)
    client = login(lead)
    answer = client.post(f"/api/campaigns/{ours.pk}/exclusions/{member.pk}/lift/")
    assert answer.status_code == 400
    assert answer.json()["errors"]["annotator"] == [
        "annotator00 is not excluded from this campaign."
    ]
    page = client.post(
        reverse("campaign_lift_exclusion", args=[ours.pk, member.pk]), follow=True
    ).content.decode()
    assert "annotator00 is not excluded from this campaign." in page


def test_excluding_by_name_says_the_same_of_any_name_outside_the_campaign(
    ours: Campaign, lead: User, secret_admin: User, login: Any
) -> None:
    client = login(lead)
    url = f"/api/campaigns/{ours.pk}/exclusions/"
    existing = client.post(
        url, {"annotator": "secret-admin", "reason": "x"}, content_type="application/json"
    )
    missing = client.post(
        url, {"annotator": "no-such-name", "reason": "x"}, content_type="application/json"
    )
    assert existing.status_code == missing.status_code == 400
    assert existing.json()["errors"]["annotator"] == [
        "secret-admin is not an annotator of this campaign."
    ]
    assert missing.json()["errors"]["annotator"] == [
        "no-such-name is not an annotator of this campaign."
    ]


def test_adding_a_member_by_a_name_no_account_has_says_so(
    ours: Campaign, lead: User, login: Any
) -> None:
    """A manager adding an annotator must be told the name is wrong; the answer repeats only
    the name they typed."""
    answer = login(lead).post(
        f"/api/campaigns/{ours.pk}/members/",
        {"username": "no-such-name"},
        content_type="application/json",
    )
    assert answer.status_code == 400
    assert answer.json()["errors"]["username"] == ["No account has the username no-such-name."]


def test_the_dashboard_offers_a_new_link_only_where_it_would_be_given(
    ours: Campaign, theirs: Campaign, lead: User, login: Any
) -> None:
    """The members table's button for a new set-password link follows the same rule as the
    link: shown for the manager's own password-less annotator, not for another campaign's."""
    carol = password_less(theirs, "carol")
    dave = password_less(ours, "dave")
    client = login(lead)
    add_by_name(client, ours, "carol")
    page = client.get(reverse("campaign_detail", args=[ours.pk])).content.decode()
    assert reverse("campaign_reissue_link", args=[ours.pk, dave.pk]) in page
    assert reverse("campaign_reissue_link", args=[ours.pk, carol.pk]) not in page
