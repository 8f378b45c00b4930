"""What a newcomer is told and asked before the first item: the estimated time (the median time
on task, worked by hand) and consent, required when the campaign sets a text, on the join page,
the consent page and the API, with its time kept and shown where the members are."""

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.briefing import (
    DEFAULT_SECONDS_PER_ITEM,
    TimeEstimate,
    median_seconds_per_item,
    record_consent,
    time_estimate,
)
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Campaign, Dataset, Membership, Participant
from tests.api.test_api_work import post_json, token_client
from tests.campaigns.test_study_replacement_slots import settings_form
from tests.conftest import PASSWORD
from tests.support.campaigns import active_campaign, annotators
from tests.support.pages import form_answers, reserve, submit_url
from tests.support.qualification import screening_campaign

CONSENT = "You take part of your own will."


def test_the_median_time_per_item_is_worked_by_hand() -> None:
    # Sorted: 30, 40, 60, 90, 600 seconds; the middle one is 60 s, whatever the slow outlier.
    assert median_seconds_per_item([60_000, 30_000, 600_000, 40_000, 90_000]) == 60.0
    # An even count: the mean of the two middle ones, (40 + 60) / 2.
    assert median_seconds_per_item([30_000, 40_000, 60_000, 90_000, 20_000, 95_000]) == 50.0
    assert median_seconds_per_item([60_000] * 4) is None  # too few to say


def test_the_estimate_rounds_the_whole_work_up_to_five_minutes() -> None:
    assert TimeEstimate(60.0, 5, 12).total_minutes == 15  # 12 minutes
    assert TimeEstimate(60.0, 5, 1).total_minutes == 5
    assert TimeEstimate(120.0, 0, None).total_minutes is None
    assert TimeEstimate(90.0, 5, None).minutes_per_item == 1.5


def test_the_estimate_uses_the_campaigns_answers_once_there_are_enough(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, k=3, quota_per_annotator=10)
    assert time_estimate(campaign) == TimeEstimate(DEFAULT_SECONDS_PER_ITEM, 0, 10)
    for index, user in enumerate(annotators(campaign, 5)):
        client = Client()
        client.force_login(user)
        assignment = reserve(client, campaign)
        data = form_answers(campaign, client_token=f"t{index}")
        data["time_on_task_ms"] = str((index + 1) * 30_000)  # 30, 60, 90, 120, 150 s
        assert client.post(submit_url(assignment), data).status_code == 302
    assert time_estimate(campaign) == TimeEstimate(90.0, 5, 10)
    assert time_estimate(campaign).total_minutes == 15


def test_the_estimate_counts_the_practice_and_qualification_items(dataset: Dataset) -> None:
    """Two practice and three qualification items before a quota of 4: nine items of two
    minutes, 18 minutes, said as 20; the join page names the five items asked first."""
    campaign = screening_campaign(dataset, name="screened first", quota_per_annotator=4)
    estimate = time_estimate(campaign)
    assert estimate == TimeEstimate(DEFAULT_SECONDS_PER_ITEM, 0, 4, 5)
    assert estimate.total_minutes == 20
    assert TimeEstimate(DEFAULT_SECONDS_PER_ITEM, 0, 4).total_minutes == 10
    page = Client().get(join_url(campaign)).content.decode()
    assert "about <strong>20 minutes</strong>" in page
    assert "after <strong>5</strong> practice and qualification items" in page


def join_url(campaign: Campaign, pid: str = "p1") -> str:
    return (
        reverse("join", args=[campaign.invite_token])
        + f"?PROLIFIC_PID={pid}&STUDY_ID=s&SESSION_ID=one"
    )


def test_the_join_page_refuses_a_start_without_consent_and_writes_nothing(
    dataset: Dataset,
) -> None:
    campaign = active_campaign(dataset, consent_text=CONSENT, guidelines="Read *both*.")
    client = Client()
    page = client.get(join_url(campaign))
    assert page.status_code == 200
    body = page.content.decode()
    assert CONSENT in body
    assert "<em>both</em>" in body
    assert "an estimate until the first answers are in" in body
    refused = client.post(join_url(campaign), {"PROLIFIC_PID": "p1", "STUDY_ID": "s"})
    assert refused.status_code == 400
    assert "Tick the box" in refused.content.decode()
    assert not Participant.objects.filter(campaign=campaign).exists()
    joined = client.post(
        join_url(campaign), {"PROLIFIC_PID": "p1", "STUDY_ID": "s", "consent": "yes"}
    )
    assert joined.status_code == 302
    member = Membership.objects.get(campaign=campaign, participant_id="p1")
    assert member.consent_given_at is not None


def test_a_campaign_without_consent_text_asks_none(dataset: Dataset) -> None:
    campaign = active_campaign(dataset)
    client = Client()
    assert "consent" not in client.get(join_url(campaign)).content.decode().lower()
    assert client.post(join_url(campaign), {"PROLIFIC_PID": "p1"}).status_code == 302
    assert Membership.objects.get(campaign=campaign).consent_given_at is None


def test_an_account_joining_by_the_link_gives_consent_with_the_start_button(
    dataset: Dataset, annotator: User
) -> None:
    campaign = active_campaign(dataset, consent_text=CONSENT)
    client = Client()
    assert client.login(username=annotator.username, password=PASSWORD)
    url = reverse("join", args=[campaign.invite_token])
    assert client.post(url).status_code == 400
    assert not Membership.objects.filter(campaign=campaign, user=annotator).exists()
    assert client.post(url, {"consent": "yes"}).status_code == 302
    assert Membership.objects.get(campaign=campaign, user=annotator).consent_given_at


def test_a_member_without_consent_is_sent_to_the_consent_page_first(
    dataset: Dataset, annotator: User
) -> None:
    campaign = active_campaign(dataset, consent_text=CONSENT)
    add_member(campaign, annotator)
    client = Client()
    client.force_login(annotator)
    consent_url = reverse("annotate_consent", args=[campaign.pk])
    assert client.get(reverse("annotate", args=[campaign.pk]))["Location"] == consent_url
    assert client.get(reverse("qualification", args=[campaign.pk]))["Location"] == consent_url
    assert client.post(consent_url, {}).status_code == 400
    accepted = client.post(consent_url, {"consent": "yes"})
    assert accepted["Location"] == reverse("annotate", args=[campaign.pk])
    first = Membership.objects.get(campaign=campaign, user=annotator).consent_given_at
    assert first is not None
    assert client.get(reverse("annotate", args=[campaign.pk])).status_code == 200
    # Accepting again keeps the first time.
    record_consent(Membership.objects.get(campaign=campaign, user=annotator))
    assert Membership.objects.get(campaign=campaign, user=annotator).consent_given_at == first


def test_the_api_asks_for_consent_before_the_next_item_and_shows_its_time(
    dataset: Dataset, annotator: User, manager: User
) -> None:
    campaign = active_campaign(dataset, consent_text=CONSENT)
    add_member(campaign, annotator)
    client = token_client(annotator)
    next_url = reverse("api_next", args=[campaign.pk])
    refused = post_json(client, next_url)
    assert refused.status_code == 403
    body = refused.json()
    assert "consent" in body["errors"]
    assert body["consent_text"] == CONSENT
    progress = client.get(reverse("api_my_progress", args=[campaign.pk])).json()
    assert progress["consent_required"] is True
    assert progress["consent_given_at"] is None
    consent_url = reverse("api_consent", args=[campaign.pk])
    assert post_json(client, consent_url, {"accept": False}).status_code == 400
    accepted = post_json(client, consent_url, {"accept": True})
    assert accepted.status_code == 200
    assert accepted.json()["consent_given_at"]
    assert post_json(client, next_url).status_code == 200
    members = token_client(manager).get(reverse("api_campaign_members", args=[campaign.pk]))
    rows = {row["username"]: row for row in members.json()["results"]}
    assert rows[annotator.username]["consent_given_at"] == accepted.json()["consent_given_at"]


def test_the_settings_page_and_the_api_set_the_reading_check_and_the_consent_text(
    dataset: Dataset, manager: User
) -> None:
    campaign = active_campaign(dataset)
    assert campaign.reading_check is False
    assert campaign.consent_text == ""
    client = Client()
    client.force_login(manager)
    data = settings_form(campaign)
    data.update(reading_check="on", consent_text=CONSENT)
    saved = client.post(reverse("campaign_settings", args=[campaign.pk]), data)
    assert saved.status_code == 302
    campaign.refresh_from_db()
    assert campaign.reading_check is True
    assert campaign.consent_text == CONSENT
    patched = token_client(manager).patch(
        reverse("api_campaign_detail", args=[campaign.pk]),
        {"reading_check": False},
        content_type="application/json",
    )
    assert patched.status_code == 200
    assert patched.json()["reading_check"] is False
    assert patched.json()["consent_text"] == CONSENT
