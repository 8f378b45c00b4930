"""Who may open which annotation and campaign page: annotators only their own work, managers
the dashboards, anonymous users the login page; CSRF on every POST; invite links that cannot
be guessed and that record Prolific's parameters."""

import re

from django.test import Client
from django.urls import reverse

from prb_annotate.models import Annotation, Assignment, Campaign, Membership
from tests.support.pages import active_campaign, form_answers, reserve, submit_url


def test_it_redirects_anonymous_users_to_login(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    assignment = reserve(login(annotator), campaign)
    urls = [
        reverse("annotate", args=[campaign.pk]),
        reverse("annotate_assignment", args=[campaign.pk, assignment.pk]),
        reverse("annotate_guidelines", args=[campaign.pk]),
        reverse("annotate_done", args=[campaign.pk]),
        reverse("campaign_list"),
        reverse("campaign_create"),
        reverse("campaign_detail", args=[campaign.pk]),
    ]
    for url in urls:
        response = Client().get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login")), url
    response = Client().post(submit_url(assignment), form_answers(campaign))
    assert response.status_code == 302
    assert not Annotation.objects.exists()


def test_it_hides_campaigns_the_annotator_is_not_in(dataset, annotator, outsider, login) -> None:
    campaign = active_campaign(dataset, annotator)
    assignment = reserve(login(annotator), campaign)
    client = login(outsider)
    for url in [
        reverse("annotate", args=[campaign.pk]),
        reverse("annotate_guidelines", args=[campaign.pk]),
        reverse("annotate_done", args=[campaign.pk]),
        reverse("annotate_assignment", args=[campaign.pk, assignment.pk]),
    ]:
        assert client.get(url).status_code == 404, url
    assert not Assignment.objects.filter(annotator=outsider).exists()


def test_it_hides_another_annotators_assignment(dataset, annotator, other_annotator, login) -> None:
    campaign = active_campaign(dataset, annotator, other_annotator)
    alices = reserve(login(annotator), campaign)
    bob = login(other_annotator)
    assert bob.get(reverse("annotate_assignment", args=[campaign.pk, alices.pk])).status_code == 404
    assert bob.post(submit_url(alices), form_answers(campaign)).status_code == 404
    skip_url = reverse("annotate_skip", args=[campaign.pk, alices.pk])
    assert bob.post(skip_url, {"reason": "Something else"}).status_code == 404
    assert not Annotation.objects.exists()
    alices.refresh_from_db()
    assert alices.status == Assignment.Status.RESERVED


def test_it_hides_the_dashboard_from_annotators(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assert client.get(reverse("campaign_detail", args=[campaign.pk])).status_code == 404
    assert client.get(reverse("campaign_list")).status_code == 404
    assert client.get(reverse("campaign_create")).status_code == 404
    status_url = reverse("campaign_status", args=[campaign.pk])
    assert client.post(status_url, {"status": "closed"}).status_code == 404
    members_url = reverse("campaign_add_member", args=[campaign.pk])
    assert client.post(members_url, {"username": annotator.username}).status_code == 404
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.ACTIVE


def test_it_lets_campaign_managers_in_without_staff(dataset, annotator, outsider, login) -> None:
    from prb_annotate.campaigns.lifecycle import add_member

    campaign = active_campaign(dataset, annotator)
    add_member(campaign, outsider, role="manager")
    client = login(outsider)
    assert client.get(reverse("campaign_detail", args=[campaign.pk])).status_code == 200
    assert campaign.name in client.get(reverse("campaign_list")).content.decode()
    # Managing is not annotating.
    assert client.get(reverse("annotate", args=[campaign.pk])).status_code == 404


def test_it_enforces_csrf_on_every_post(dataset, annotator, manager) -> None:
    campaign = active_campaign(dataset, annotator)
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    assignment = reserve(client, campaign)
    posts = [
        submit_url(assignment),
        reverse("annotate_skip", args=[campaign.pk, assignment.pk]),
        reverse("join", args=[campaign.invite_token]),
    ]
    for url in posts:
        response = client.post(url, {**form_answers(campaign), "reason": "Something else"})
        assert response.status_code == 403, url
    staff = Client(enforce_csrf_checks=True)
    staff.force_login(manager)
    for url, data in [
        (reverse("campaign_status", args=[campaign.pk]), {"status": "paused"}),
        (reverse("campaign_add_member", args=[campaign.pk]), {"username": "alice"}),
        (reverse("campaign_create"), {"name": "x"}),
    ]:
        assert staff.post(url, data).status_code == 403, url
    assert not Annotation.objects.exists()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.RESERVED
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.ACTIVE


def test_it_accepts_a_submit_with_the_csrf_token(dataset, annotator) -> None:
    campaign = active_campaign(dataset, annotator)
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    page = client.get(reverse("annotate", args=[campaign.pk]))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert token is not None
    data = {**form_answers(campaign), "csrfmiddlewaretoken": token.group(1)}
    response = client.post(submit_url(page.context["assignment"]), data)
    assert response.status_code == 302
    assert Annotation.objects.count() == 1


def test_it_makes_invite_tokens_unguessable(dataset, annotator, login) -> None:
    first = active_campaign(dataset, annotator, name="first")
    second = active_campaign(dataset, annotator, name="second")
    for campaign in (first, second):
        assert re.fullmatch(r"[A-Za-z0-9_-]{32,}", campaign.invite_token)
    assert first.invite_token != second.invite_token
    client = Client()
    for wrong in ["", "x", first.invite_token[:-1], first.invite_token + "x", str(first.pk)]:
        if wrong:
            assert client.get(f"/join/{wrong}/?PROLIFIC_PID=p1").status_code == 404, wrong
            assert client.post(f"/join/{wrong}/", {"PROLIFIC_PID": "p1"}).status_code == 404
    assert Membership.objects.filter(campaign=first).count() == 1


def test_it_joins_a_prolific_participant_and_stores_their_ids(dataset, annotator) -> None:
    campaign = active_campaign(dataset)
    client = Client()
    params = {"PROLIFIC_PID": "5f1a2b3c", "STUDY_ID": "study-9", "SESSION_ID": "sess-4"}
    url = reverse("join", args=[campaign.invite_token])
    page = client.get(url, params)
    assert page.status_code == 200
    assert not Membership.objects.filter(campaign=campaign).exists()  # a GET changes nothing
    response = client.post(url, params)
    assert response.status_code == 302
    assert response["Location"] == reverse("annotate", args=[campaign.pk])
    membership = Membership.objects.get(campaign=campaign)
    assert (membership.participant_id, membership.study_id, membership.session_id) == (
        "5f1a2b3c",
        "study-9",
        "sess-4",
    )
    assert membership.role == Membership.Role.ANNOTATOR
    # The new participant is logged in and gets an item.
    assert client.get(reverse("annotate", args=[campaign.pk])).status_code == 200
    # Coming back through the same link lands on the work, without a second membership.
    assert client.get(url, params)["Location"] == reverse("annotate", args=[campaign.pk])
    assert Membership.objects.filter(campaign=campaign).count() == 1


def test_it_asks_anonymous_visitors_without_prolific_ids_to_log_in(dataset, annotator) -> None:
    campaign = active_campaign(dataset)
    url = reverse("join", args=[campaign.invite_token])
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert "next=" in response["Location"]
    assert not Membership.objects.filter(campaign=campaign).exists()


def test_it_joins_a_logged_in_user(dataset, outsider, login) -> None:
    campaign = active_campaign(dataset)
    client = login(outsider)
    response = client.post(reverse("join", args=[campaign.invite_token]))
    assert response["Location"] == reverse("annotate", args=[campaign.pk])
    assert Membership.objects.filter(campaign=campaign, user=outsider).exists()


def test_it_sends_annotators_to_the_completion_url_when_the_quota_is_done(
    dataset, annotator, login
) -> None:
    """A study participant (a member with a Prolific id) is sent to the study's completion URL,
    with its code beside the link."""
    completion = "https://app.prolific.com/submissions/complete?cc=C0DE42"
    campaign = active_campaign(dataset, annotator, quota_per_annotator=1, completion_url=completion)
    Membership.objects.filter(campaign=campaign, user=annotator).update(participant_id="P1abc")
    client = login(annotator)
    done_url = reverse("annotate_done", args=[campaign.pk])
    before = client.get(done_url).content.decode()
    assert completion.replace("&", "&amp;") not in before
    assert "C0DE42" not in before
    assignment = reserve(client, campaign)
    assert client.post(submit_url(assignment), form_answers(campaign)).status_code == 302
    response = client.get(reverse("annotate", args=[campaign.pk]))
    assert response.status_code == 302
    assert response["Location"] == done_url
    html = client.get(done_url).content.decode()
    assert f'<meta http-equiv="refresh" content="3;url={completion}">' in html
    assert f'href="{completion}"' in html
    assert "<code>C0DE42</code>" in html


def test_it_keeps_invited_annotators_off_the_study_completion_url(
    dataset, annotator, login
) -> None:
    """An annotator invited by a manager (no Prolific id) finishes on the app's page: the
    completion URL is the study's, for its participants."""
    completion = "https://app.prolific.com/submissions/complete?cc=C0DE42"
    campaign = active_campaign(dataset, annotator, quota_per_annotator=1, completion_url=completion)
    client = login(annotator)
    assignment = reserve(client, campaign)
    assert client.post(submit_url(assignment), form_answers(campaign)).status_code == 302
    html = client.get(reverse("annotate_done", args=[campaign.pk])).content.decode()
    assert "You're finished" in html
    assert 'http-equiv="refresh"' not in html
    assert "C0DE42" not in html
