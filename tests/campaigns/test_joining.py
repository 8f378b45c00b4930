"""Invite links and study participants: a Prolific id is not a password.

An account made by an invite link reaches only the campaign it joined; a participant comes back
only with the resume key their first join gave their browser, or with the same PROLIFIC_PID,
STUDY_ID and SESSION_ID; anyone else gets a clear page and no login. Staff and password
accounts are never opened by a link. Bad values are a 400 and write nothing.
"""

import pytest
from django.contrib.auth.models import User
from django.http import Http404
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.joining import RESUME_COOKIE_PREFIX
from prb_annotate.campaigns.lifecycle import CampaignSetupError, add_member
from prb_annotate.models import Dataset, Membership, Participant
from prb_annotate.security.access import annotator_campaign_or_404, annotator_membership_or_404
from tests.conftest import PASSWORD
from tests.support.pages import active_campaign, reserve

VICTIM = {"PROLIFIC_PID": "P1abc", "STUDY_ID": "study-1", "SESSION_ID": "session-1"}


def join_url(campaign) -> str:
    return reverse("join", args=[campaign.invite_token])


def attacker_client() -> Client:
    # The curl attack runs with CSRF checks on: the attacker fetches a token first.
    client = Client(enforce_csrf_checks=True)
    client.get(reverse("login"))
    return client


def post_join(client: Client, campaign, params: dict[str, str]):
    data = dict(params)
    if "csrftoken" in client.cookies:
        data["csrfmiddlewaretoken"] = client.cookies["csrftoken"].value
    return client.post(join_url(campaign), data)


@pytest.fixture
def two_campaigns(dataset: Dataset):
    first = active_campaign(dataset, name="first")
    second = active_campaign(dataset, name="second")
    return first, second


def test_it_does_not_hand_a_participants_items_to_whoever_knows_their_id(two_campaigns) -> None:
    """The issue's reproduction: any invite link plus a participant's PROLIFIC_PID used to log
    in as that participant and open their items in another campaign."""
    first, second = two_campaigns
    victim = Client()
    assert post_join(victim, first, VICTIM).status_code == 302
    item = reserve(victim, first)
    item_url = reverse("annotate_assignment", args=[first.pk, item.pk])
    assert victim.get(item_url).status_code == 200

    # Through the other campaign's link: a new account for that campaign only.
    attacker = attacker_client()
    response = post_join(attacker, second, {"PROLIFIC_PID": "P1abc"})
    assert response.status_code == 302
    assert attacker.get(item_url).status_code == 404
    assert attacker.get(reverse("annotate", args=[first.pk])).status_code == 404
    assert Participant.objects.filter(participant_id="P1abc").count() == 2

    # Through the victim's own campaign link, without the study session's values: refused.
    attacker = attacker_client()
    for guess in [{"PROLIFIC_PID": "P1abc"}, {**VICTIM, "SESSION_ID": "session-2"}]:
        refused = post_join(attacker, first, guess)
        assert refused.status_code == 403
        assert "cannot start or resume" in refused.content.decode()
        assert "_auth_user_id" not in attacker.session
        assert attacker.get(item_url).status_code == 302  # to the login page
    assert Participant.objects.filter(campaign=first).count() == 1


def test_it_resumes_with_the_same_study_session_or_the_browsers_key(two_campaigns) -> None:
    first, _ = two_campaigns
    browser = Client()
    post_join(browser, first, VICTIM)
    user = Participant.objects.get(campaign=first).user
    cookie = browser.cookies[f"{RESUME_COOKIE_PREFIX}{first.pk}"]
    assert cookie["httponly"]
    assert cookie["path"] == join_url(first)
    assert Participant.objects.get().resume_key_hash not in cookie.value

    # The same browser after its session ended: its key resumes, whatever the link says.
    browser.logout()
    browser.cookies[f"{RESUME_COOKIE_PREFIX}{first.pk}"] = cookie.value
    assert post_join(browser, first, {"PROLIFIC_PID": "P1abc"}).status_code == 302
    assert browser.session["_auth_user_id"] == str(user.pk)

    # A new browser reopening the same study link (all three values): the same account.
    other = Client()
    assert post_join(other, first, VICTIM).status_code == 302
    assert other.session["_auth_user_id"] == str(user.pk)
    # A forged cookie is no key.
    forged = Client()
    forged.cookies[f"{RESUME_COOKIE_PREFIX}{first.pk}"] = "not-a-signed-key"
    assert post_join(forged, first, {"PROLIFIC_PID": "P1abc"}).status_code == 403


def test_it_resumes_only_with_the_key_when_the_first_join_lacked_the_study_values(
    two_campaigns,
) -> None:
    first, _ = two_campaigns
    post_join(Client(), first, {"PROLIFIC_PID": "P2"})
    assert post_join(Client(), first, {"PROLIFIC_PID": "P2"}).status_code == 403
    assert post_join(Client(), first, {**VICTIM, "PROLIFIC_PID": "P2"}).status_code == 403


def test_it_never_opens_staff_or_password_accounts_through_a_link(
    two_campaigns, manager: User, annotator: User
) -> None:
    first, _ = two_campaigns
    for name in (manager.username, annotator.username, f"{first.pk}-{annotator.username}"):
        User.objects.create_user(f"prolific-{first.pk}-{name}", password=PASSWORD, is_staff=True)
        client = attacker_client()
        response = post_join(client, first, {"PROLIFIC_PID": name})
        assert response.status_code == 403
        assert "_auth_user_id" not in client.session
    assert not Participant.objects.exists()


def test_it_scopes_participant_accounts_to_their_campaign(two_campaigns) -> None:
    first, second = two_campaigns
    post_join(Client(), first, VICTIM)
    participant = Participant.objects.get().user
    # However a membership elsewhere came about, it opens nothing.
    Membership.objects.create(campaign=second, user=participant)
    with pytest.raises(Http404):
        annotator_membership_or_404(participant, second.pk)
    with pytest.raises(Http404):
        annotator_campaign_or_404(participant, second.pk)
    assert annotator_membership_or_404(participant, first.pk).campaign == first
    client = Client()
    client.force_login(participant)
    assert client.get(reverse("annotate", args=[second.pk])).status_code == 404
    assert client.post(f"/api/campaigns/{second.pk}/next/").status_code == 404
    assert client.post(f"/api/campaigns/{first.pk}/next/").status_code == 200
    # And nobody can make it a member elsewhere, or a manager.
    Membership.objects.filter(campaign=second).delete()
    with pytest.raises(CampaignSetupError):
        add_member(second, participant)
    with pytest.raises(CampaignSetupError):
        add_member(first, participant, role="manager")


def test_it_gives_a_participant_of_one_campaign_a_new_account_in_another(two_campaigns) -> None:
    first, second = two_campaigns
    client = Client()
    post_join(client, first, VICTIM)
    # The start page says which account Start joins with: not the one logged in.
    page = client.get(join_url(second), VICTIM).content.decode()
    assert 'id="join-as-participant"' in page
    assert "an account of another campaign: Start joins this study with an account" in page
    assert 'id="join-as-account"' not in page
    response = post_join(client, second, VICTIM)
    assert response["Location"] == reverse("annotate", args=[second.pk])
    accounts = {p.campaign_id: p.user_id for p in Participant.objects.all()}
    assert accounts[first.pk] != accounts[second.pk]
    assert client.session["_auth_user_id"] == str(accounts[second.pk])
    assert not Membership.objects.filter(campaign=second, user_id=accounts[first.pk]).exists()


@pytest.mark.parametrize(
    "bad",
    [
        {**VICTIM, "STUDY_ID": "study\x00"},
        {**VICTIM, "SESSION_ID": "\x00"},
        {**VICTIM, "PROLIFIC_PID": "P1\x00abc"},
        {**VICTIM, "SESSION_ID": "x" * 101},
        {**VICTIM, "STUDY_ID": "<script>"},
    ],
)
def test_it_refuses_bad_participant_values_and_writes_nothing(two_campaigns, bad) -> None:
    first, _ = two_campaigns
    users_before = User.objects.count()
    has_nul = any("\x00" in value for value in bad.values())
    for response in (Client().get(join_url(first), bad), post_join(Client(), first, bad)):
        assert response.status_code == 400
        # A NUL in the query is refused before the view, for every URL (request_limits.py).
        in_query = has_nul and response.wsgi_request.method == "GET"
        expected = "holds a NUL character" if in_query else "cannot start or resume"
        assert expected in response.content.decode()
        if not in_query:
            assert "No account was made for you, and you are not logged in." in (
                response.content.decode()
            )
    assert User.objects.count() == users_before
    assert not Participant.objects.exists()
    assert not Membership.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_migration_scopes_accounts_made_before_participants_had_rows() -> None:
    """A ``prolific-<PID>`` account from before becomes a participant of the campaign it joined
    first, so that its owner resumes it there with the same study link, and only there."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before = [("prb_annotate", "0003_audit_decisions")]
    executor = MigrationExecutor(connection)
    # Forward to every leaf, not just this migration: the models below are today's.
    after = executor.loader.graph.leaf_nodes()
    executor.migrate(before)
    apps = executor.loader.project_state(before).apps
    old_user = apps.get_model("auth", "User")
    old_dataset = apps.get_model("prb_annotate", "Dataset")
    old_campaign = apps.get_model("prb_annotate", "Campaign")
    old_membership = apps.get_model("prb_annotate", "Membership")
    dataset = old_dataset.objects.create(name="d")
    first = old_campaign.objects.create(dataset=dataset, name="first", invite_token="t1")
    second = old_campaign.objects.create(dataset=dataset, name="second", invite_token="t2")
    legacy = old_user.objects.create(username="prolific-P9", password="!unusable")
    kept = old_user.objects.create(username="prolific-staff", password="!x", is_staff=True)
    for campaign in (first, second):
        old_membership.objects.create(
            campaign=campaign, user=legacy, participant_id="P9", study_id="s", session_id="x"
        )
    old_membership.objects.create(campaign=first, user=kept)

    executor = MigrationExecutor(connection)
    executor.migrate(after)
    participant = Participant.objects.get()
    assert (participant.user_id, participant.campaign_id) == (legacy.pk, first.pk)
    assert (participant.participant_id, participant.study_id, participant.session_id) == (
        "P9",
        "s",
        "x",
    )
    user = User.objects.get(pk=legacy.pk)
    with pytest.raises(Http404):
        annotator_membership_or_404(user, second.pk)
    assert annotator_membership_or_404(user, first.pk).campaign_id == first.pk


def test_managers_cannot_add_a_participant_account_to_another_campaign(
    two_campaigns, manager: User, login
) -> None:
    first, second = two_campaigns
    post_join(Client(), first, VICTIM)
    participant = Participant.objects.get().user
    client = login(manager)
    page = client.post(
        reverse("campaign_add_member", args=[second.pk]), {"username": participant.username}
    )
    assert page.status_code == 400
    assert "can only annotate that campaign" in page.content.decode()
    api = client.post(
        f"/api/campaigns/{second.pk}/members/",
        {"username": participant.username, "role": "annotator"},
        content_type="application/json",
    )
    assert api.status_code == 400
    assert "can only annotate that campaign" in api.json()["errors"]["username"][0]
    promote = client.post(
        f"/api/campaigns/{first.pk}/members/",
        {"username": participant.username, "role": "manager"},
        content_type="application/json",
    )
    assert promote.status_code == 400
    assert not Membership.objects.filter(campaign=second).exists()
    assert Membership.objects.get(user=participant).role == "annotator"
