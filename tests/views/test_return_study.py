"""A study participant returns the study from the link on their pages: the items they hold go
back to the queue at once (not when the reservation times out), the page says so, and what
they submitted is kept; nobody else sees the link or can use it."""

from django.test import Client
from django.urls import reverse

from prb_annotate.models import Assignment, Membership
from tests.conftest import make_user
from tests.support.pages import active_campaign

PARAMS = {"PROLIFIC_PID": "5f1a2b3c", "STUDY_ID": "study-9", "SESSION_ID": "sess-4"}


def test_a_participant_returns_the_study_and_their_item_is_free_at_once(dataset) -> None:
    campaign = active_campaign(dataset)
    participant = Client()
    participant.post(reverse("join", args=[campaign.invite_token]), PARAMS)
    page = participant.get(reverse("annotate", args=[campaign.pk])).content.decode()
    assert 'id="return-study-link"' in page
    held = Assignment.objects.get(campaign=campaign, status=Assignment.Status.RESERVED)

    url = reverse("return_study", args=[campaign.pk])
    asked = participant.get(url).content.decode()
    assert "Return the study?" in asked
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.RESERVED
    done = participant.post(url).content.decode()
    assert "1 item you held was given back to the queue now" in done
    assert "The 0 answers you submitted are kept." in done
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.EXPIRED
    assert not Membership.objects.filter(campaign=campaign, user=held.annotator).exists()
    # Logged out: the account has no password and no campaign any more.
    assert participant.get(reverse("annotate", args=[campaign.pk])).status_code == 302


def test_only_study_participants_see_and_use_the_return_link(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    page = client.get(reverse("annotate", args=[campaign.pk])).content.decode()
    assert 'id="return-study-link"' not in page
    assert client.post(reverse("return_study", args=[campaign.pk])).status_code == 404
    assert Membership.objects.filter(campaign=campaign, user=annotator).exists()
    assert (
        login(make_user("boss", staff=True))
        .get(reverse("return_study", args=[campaign.pk]))
        .status_code
        == 404
    )
