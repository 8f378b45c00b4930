"""Drafts: the annotation page's unsaved answers kept on the server for the item the annotator
holds, shown again when the item is opened elsewhere (another browser, here another client
logged in as the same annotator), counted nowhere, and gone once the answers are submitted."""

from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.progress import campaign_progress
from prb_annotate.models import Annotation, AnswerDraft
from tests.support.pages import active_campaign, form_answers, reserve, submit_url


def draft_url(assignment) -> str:
    return reverse("annotate_draft", args=[assignment.campaign_id, assignment.pk])


def test_a_draft_is_restored_on_another_device_and_counted_nowhere(
    dataset, annotator, login
) -> None:
    campaign = active_campaign(dataset, annotator)
    phone = login(annotator)
    assignment = reserve(phone, campaign)
    saved = phone.post(
        draft_url(assignment),
        {"rubric_fit": "B", "comment": "B reads the profile", "client_token": "x"},
    )
    assert saved.status_code == 204
    assert AnswerDraft.objects.get(assignment=assignment).values == {
        "rubric_fit": "B",
        "comment": "B reads the profile",
    }
    assert not Annotation.objects.exists()
    assert campaign_progress(campaign, median_times=False).annotations_submitted == 0

    laptop = login(annotator)
    page = laptop.get(reverse("annotate", args=[campaign.pk]))
    assert page.context["assignment"].pk == assignment.pk
    html = page.content.decode()
    assert "B reads the profile</textarea>" in html
    assert 'name="rubric_fit" value="B" data-key="b" required checked>' in html

    done = laptop.post(submit_url(assignment), form_answers(campaign))
    assert done.status_code == 302
    assert not AnswerDraft.objects.filter(assignment=assignment).exists()


def test_a_draft_is_refused_for_an_item_that_is_not_yours(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assignment = reserve(client, campaign)
    client.post(submit_url(assignment), form_answers(campaign))
    late = client.post(draft_url(assignment), {"comment": "too late"})
    assert late.status_code == 409
    assert late.json()["detail"] == "This item is not yours to answer now."
    assert Client().post(draft_url(assignment), {"comment": "x"}).status_code == 302
    assert not AnswerDraft.objects.exists()
