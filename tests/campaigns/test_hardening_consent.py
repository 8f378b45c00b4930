"""Consent is checked when an answer is submitted, not only when an item is handed out: a
reservation made before the campaign set its consent text is not a way to answer without
accepting it, on the page or through the API."""

from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.briefing import record_consent
from prb_annotate.models import Annotation, Campaign, Dataset, Membership
from tests.api.test_api_work import post_json, token_client
from tests.support.campaigns import active_campaign, annotators, form_data
from tests.support.pages import form_answers, reserve, submit_url

CONSENT = "I agree that my answers are used for research."


def set_consent_text(campaign: Campaign) -> None:
    campaign.consent_text = CONSENT
    campaign.save(update_fields=["consent_text"])


def test_the_page_refuses_an_answer_until_consent_is_given(dataset: Dataset) -> None:
    campaign = active_campaign(dataset)
    (alice,) = annotators(campaign, 1)
    client = Client()
    client.force_login(alice)
    assignment = reserve(client, campaign)  # no consent text yet
    set_consent_text(campaign)
    response = client.post(submit_url(assignment), form_answers(campaign))
    assert response.status_code == 302
    assert not Annotation.objects.exists()
    # The annotation page then sends the member to the consent page.
    follow = client.get(response["Location"])
    assert follow["Location"] == reverse("annotate_consent", args=[campaign.pk])
    record_consent(Membership.objects.get(campaign=campaign, user=alice))
    assert client.post(submit_url(assignment), form_answers(campaign)).status_code == 302
    assert Annotation.objects.count() == 1


def test_the_api_refuses_an_answer_until_consent_is_given(dataset: Dataset) -> None:
    campaign = active_campaign(dataset)
    (alice,) = annotators(campaign, 1)
    client = token_client(alice)
    assignment_id = post_json(client, reverse("api_next", args=[campaign.pk])).json()["assignment"]
    set_consent_text(campaign)
    url = reverse("api_submit", args=[assignment_id])
    refused = post_json(client, url, form_data(campaign, token="t-1"))
    assert refused.status_code == 403
    assert refused.json()["detail"] == (
        "Accept the campaign's consent text before your next answer."
    )
    assert not Annotation.objects.exists()
    post_json(client, reverse("api_consent", args=[campaign.pk]), {"accept": True})
    assert post_json(client, url, form_data(campaign, token="t-1")).status_code == 201
