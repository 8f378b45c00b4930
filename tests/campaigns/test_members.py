"""The members table repaired from the dashboard and the API: an annotator removed with their
answers kept in the audit or left out of it (the page says which, and their reserved items go
back to the queue at once), a new set-password link for an account whose link was lost, and the
admin linked for staff."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.audit.exclusions import manager_excluded
from prb_annotate.campaigns.accounts import add_annotators, parse_annotators
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.campaigns.members import (
    KEEP,
    LEAVE_OUT,
    MemberError,
    reissue_set_password_link,
    remove_member,
)
from prb_annotate.models import Assignment, Campaign, Dataset, Membership
from tests.conftest import make_user
from tests.support.campaigns import active_campaign, annotators, submit_form

NEW_PASSWORD = "a-long-new-password-42"


@pytest.fixture
def campaign(dataset: Dataset) -> Campaign:
    return active_campaign(dataset)


def _one_done_one_held(campaign: Campaign, user: User) -> Assignment:
    """``user`` submits one item and holds the next; the held one is returned."""
    done = next_assignment(campaign, user)
    assert done is not None
    submit_form(done)
    held = next_assignment(campaign, user)
    assert held is not None
    assert held.status == Assignment.Status.RESERVED
    return held


def test_it_removes_a_member_keeping_or_leaving_out_their_answers(campaign: Campaign) -> None:
    kept, dropped = annotators(campaign, 2)
    held = _one_done_one_held(campaign, kept)
    _one_done_one_held(campaign, dropped)

    removed = remove_member(campaign, kept, KEEP, by=None)
    assert (removed.submitted, removed.freed, removed.left_out) == (1, 1, False)
    assert removed.statement == (
        "annotator00 is no longer a member: their 1 answer stays in the audit; "
        "1 reserved item freed."
    )
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED
    assert not Membership.objects.filter(campaign=campaign, user=kept).exists()
    assert Assignment.objects.filter(annotator=kept, status="submitted").count() == 1
    assert "annotator00" not in manager_excluded(campaign)

    removed = remove_member(campaign, dropped, LEAVE_OUT, by=None)
    assert removed.left_out
    assert "their 1 answer is left out of the audit" in removed.statement
    assert "annotator01" in manager_excluded(campaign)
    # The freed item is handed to the next annotator at once, not when the clock frees it.
    (newcomer,) = annotators(campaign, 1, prefix="late")
    assert next_assignment(campaign, newcomer) is not None


def test_it_refuses_a_removal_it_cannot_make_and_writes_nothing(
    campaign: Campaign, manager: User
) -> None:
    (member,) = annotators(campaign, 1)
    with pytest.raises(MemberError, match="answers must be one of"):
        remove_member(campaign, member, "maybe", by=None)
    assert Membership.objects.filter(campaign=campaign, user=member).exists()
    add_member(campaign, manager, Membership.Role.MANAGER)
    with pytest.raises(MemberError, match="manager is not an annotator"):
        remove_member(campaign, manager, KEEP, by=None)


def test_it_reissues_a_link_only_to_an_account_without_a_password(
    campaign: Campaign, manager: User
) -> None:
    add_annotators(campaign, parse_annotators("dave"), site="http://testserver")
    dave = User.objects.get(username="dave")
    row = reissue_set_password_link(campaign, dave, site="http://testserver", by=manager)
    assert row.set_password_url.startswith("http://testserver/set-password/")
    browser = Client()
    page = browser.get(row.set_password_url, follow=True)
    assert "Your username is <strong>dave</strong>" in page.content.decode()
    browser.post(
        page.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    with pytest.raises(MemberError, match="has set a password already"):
        reissue_set_password_link(
            campaign, User.objects.get(username="dave"), site="http://x", by=manager
        )
    outsider = make_user("outsider")
    with pytest.raises(MemberError, match="not an annotator of this campaign"):
        reissue_set_password_link(campaign, outsider, site="http://x", by=manager)


def test_the_members_table_removes_and_reissues_and_says_what_it_did(
    campaign: Campaign, manager: User, login
) -> None:
    add_annotators(campaign, parse_annotators("dave erin"), site="http://testserver")
    dave, erin = User.objects.get(username="dave"), User.objects.get(username="erin")
    client = login(manager)
    dashboard = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert reverse("campaign_reissue_link", args=[campaign.pk, dave.pk]) in dashboard
    assert "Leave their answers out of the audit" in dashboard
    assert 'id="admin-link"' in dashboard

    page = client.post(reverse("campaign_reissue_link", args=[campaign.pk, dave.pk]))
    assert page.status_code == 200
    assert page["Cache-Control"] == "no-store"
    assert "New set-password link" in page.content.decode()
    assert "/set-password/" in page.content.decode()

    url = reverse("campaign_remove_member", args=[campaign.pk, erin.pk])
    answer = client.post(url, {"answers": LEAVE_OUT}, follow=True).content.decode()
    assert "erin is no longer a member: their 0 answers are left out of the audit" in answer
    refused = client.post(url, {"answers": KEEP}, follow=True).content.decode()
    assert "erin is not an annotator of this campaign." in refused


def test_the_api_removes_a_member_and_reissues_a_link(
    campaign: Campaign, manager: User, login
) -> None:
    add_annotators(campaign, parse_annotators("dave erin"), site="http://testserver")
    dave, erin = User.objects.get(username="dave"), User.objects.get(username="erin")
    client = login(manager)
    base = f"/api/campaigns/{campaign.pk}/members"
    link = client.post(f"{base}/{dave.pk}/set-password-link/")
    assert link.status_code == 201
    assert link.json()["set_password_url"].startswith("http://testserver/set-password/")
    bad = client.post(
        f"{base}/{erin.pk}/remove/", {"answers": "x"}, content_type="application/json"
    )
    assert bad.status_code == 400
    assert "answers" in bad.json()["errors"]
    done = client.post(
        f"{base}/{erin.pk}/remove/", {"answers": KEEP}, content_type="application/json"
    )
    assert done.status_code == 200
    assert done.json()["left_out"] is False
    # Removed with no answer and no exclusion, erin is none of the campaign's accounts now:
    # 404, naming no one, as for any account outside it.
    again = client.post(
        f"{base}/{erin.pk}/remove/", {"answers": KEEP}, content_type="application/json"
    )
    assert again.status_code == 404
    assert "erin" not in again.content.decode()


def test_annotators_see_no_admin_link_and_the_dead_link_page_names_the_members_table(
    campaign: Campaign, login
) -> None:
    (member,) = annotators(campaign, 1)
    page = login(member).get(reverse("home")).content.decode()
    assert 'id="admin-link"' not in page
    dead = Client().get(reverse("set_password", args=["MQ", "no-such-token"])).content.decode()
    assert "members table of the campaign" in dead
