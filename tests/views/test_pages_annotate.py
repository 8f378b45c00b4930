"""The annotation page through Django's test client: the reserved item survives a reload, the
page never tells which answer is the dataset's chosen one, missing answers come back with
errors and store nothing, answers are stored in dataset orientation, a resent submit counts
once, and skip and revise work."""

from django.urls import reverse

from prb_annotate.models import Annotation, Assignment, Pair
from prb_annotate.templatetags.prb import reading_length
from tests.support.pages import active_campaign, form_answers, reserve, submit_url


def test_it_shows_the_same_reserved_item_on_reload(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    first = reserve(client, campaign)
    again = reserve(client, campaign)
    assert again.pk == first.pk
    assert Assignment.objects.filter(annotator=annotator).count() == 1


def test_it_never_reveals_which_response_is_chosen(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assignment = reserve(client, campaign)
    pages = {}
    for position in ("A", "B"):
        Assignment.objects.filter(pk=assignment.pk).update(chosen_position=position)
        pages[position] = client.get(reverse("annotate", args=[campaign.pk])).content.decode()
    pair = assignment.item.pair
    for position, html in pages.items():
        lowered = html.lower()
        assert "chosen" not in lowered, position
        assert "rejected" not in lowered, position
        assert "data-position" not in lowered
        assert "data-answer=" not in lowered
        a_part = html.split('id="response-A"', 1)[1].split('id="response-B"', 1)[0]
        expected_a = pair.chosen if position == "A" else pair.rejected
        assert expected_a in a_part
    # Apart from the two texts trading places (with their lengths), the pages are the same.
    normalize = [(pair.chosen, "@@1"), (pair.rejected, "@@1")]
    normalize += [
        (f'data-length="{reading_length(text)}"', 'data-length=""')
        for text in (pair.chosen, pair.rejected)
    ]
    stripped = {}
    for position, html in pages.items():
        for text, marker in normalize:
            html = html.replace(text, marker)
        stripped[position] = _without_tokens(html)
    assert stripped["A"] == stripped["B"]


def _without_tokens(html: str) -> str:
    import re

    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)
    return re.sub(r'name="client_token" value="[^"]+"', "", html)


def test_it_rerenders_missing_answers_with_errors_and_stores_nothing(
    dataset, annotator, login
) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assignment = reserve(client, campaign)
    data = form_answers(campaign, fit="B", comment="half done")
    criterion = campaign.quality_criteria[0]
    del data["differentiator"]
    del data[f"quality_B_{criterion}"]
    response = client.post(submit_url(assignment), data)
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was saved" in html
    assert html.count('class="error field-error"') == 2
    # What was entered is still there.
    assert 'name="rubric_fit" value="B" data-key="b" required checked' in html
    assert f'name="quality_A_{criterion}" value="5" data-key="5" required checked' in html
    assert "half done</textarea>" in html
    assert not Annotation.objects.exists()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.RESERVED


def test_it_rejects_out_of_range_ratings(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assignment = reserve(client, campaign)
    criterion = campaign.quality_criteria[-1]
    data = form_answers(campaign)
    data.update({f"quality_A_{criterion}": "9", "confidence": "sure"})
    response = client.post(submit_url(assignment), data)
    assert response.status_code == 400
    assert response.content.decode().count('class="error field-error"') == 2
    assert not Annotation.objects.exists()


def test_it_stores_answers_in_dataset_orientation(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assignment = reserve(client, campaign)
    Assignment.objects.filter(pk=assignment.pk).update(chosen_position="B")
    data = form_answers(campaign, a=2, b=5, fit="B", differentiator="quality", confidence="low")
    data.update(comment="B is better", flagged="on")
    response = client.post(submit_url(assignment), data)
    assert response.status_code == 302
    assert response["Location"] == reverse("annotate", args=[campaign.pk])
    annotation = Annotation.objects.get()
    assert annotation.rubric_fit == "chosen"
    assert annotation.quality_chosen == dict.fromkeys(campaign.quality_criteria, 5)
    assert annotation.quality_rejected == dict.fromkeys(campaign.quality_criteria, 2)
    assert (annotation.differentiator, annotation.confidence) == ("quality", "low")
    assert (annotation.comment, annotation.flagged) == ("B is better", True)
    assert annotation.time_on_task_ms == 1234
    # The next page shows another item.
    assert reserve(client, campaign).pk != assignment.pk


def test_it_stores_a_resent_submit_once(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assignment = reserve(client, campaign)
    data = form_answers(campaign, client_token="same-token-twice")
    assert client.post(submit_url(assignment), data).status_code == 302
    assert client.post(submit_url(assignment), data).status_code == 302
    assert Annotation.objects.filter(assignment=assignment).count() == 1


def test_it_skips_with_a_reason(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assignment = reserve(client, campaign)
    skip_url = reverse("annotate_skip", args=[campaign.pk, assignment.pk])
    client.post(skip_url, {"reason": ""})
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.RESERVED
    response = client.post(skip_url, {"reason": "I cannot judge this topic"})
    assert response["Location"] == reverse("annotate", args=[campaign.pk])
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SKIPPED
    assert assignment.skip_reason == "I cannot judge this topic"
    assert reserve(client, campaign).pk != assignment.pk
    assert not Annotation.objects.exists()


def test_it_revises_a_submitted_answer_in_the_orientation_seen(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assignment = reserve(client, campaign)
    Assignment.objects.filter(pk=assignment.pk).update(chosen_position="B")
    first = form_answers(campaign, a=3, b=4, fit="A", client_token="first", comment="hmm")
    client.post(submit_url(assignment), first)
    page = client.get(reverse("annotate_assignment", args=[campaign.pk, assignment.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    criterion = campaign.quality_criteria[0]
    assert f'name="quality_A_{criterion}" value="3" data-key="3" required checked' in html
    assert f'name="quality_B_{criterion}" value="4" data-key="4" required checked' in html
    assert 'name="rubric_fit" value="A" data-key="a" required checked' in html
    assert "hmm</textarea>" in html
    assert "Save revision" in html
    second = form_answers(campaign, a=3, b=4, fit="B", client_token="second", comment="sure")
    response = client.post(submit_url(assignment), second)
    assert response.status_code == 302
    current = Annotation.objects.get(assignment=assignment, is_current=True)
    assert (current.revision, current.rubric_fit, current.comment) == (2, "chosen", "sure")
    assert Annotation.objects.filter(assignment=assignment).count() == 2


def test_it_lists_recent_answers_for_revision(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assignment = reserve(client, campaign)
    client.post(submit_url(assignment), form_answers(campaign))
    html = client.get(reverse("annotate", args=[campaign.pk])).content.decode()
    assert reverse("annotate_assignment", args=[campaign.pk, assignment.pk]) in html


def test_it_shows_progress_against_the_quota(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator, quota_per_annotator=5)
    client = login(annotator)
    assignment = reserve(client, campaign)
    client.post(submit_url(assignment), form_answers(campaign))
    response = client.get(reverse("annotate", args=[campaign.pk]))
    assert (response.context["done"], response.context["quota"]) == (1, 5)
    html = response.content.decode()
    assert '<strong class="progress-done">1</strong> done of' in html
    assert '<strong class="progress-available">5</strong> available to you' in html


def test_it_renders_hostile_text_inert(dataset, annotator, login) -> None:
    Pair.objects.filter(dataset=dataset).update(
        chosen="<script>window.__pwned=1</script> **ok**",
        rejected='<img src=x onerror="window.__pwned=2"> [x](javascript:alert(1))',
        question="<script>alert(3)</script>",
    )
    campaign = active_campaign(dataset, annotator)
    html = login(annotator).get(reverse("annotate", args=[campaign.pk])).content.decode()
    assert "<script>window" not in html
    assert "<script>alert" not in html
    assert "<img" not in html
    assert 'href="javascript:' not in html
    assert "<strong>ok</strong>" in html


def test_it_tells_annotators_when_the_campaign_is_paused(dataset, annotator, login) -> None:
    from prb_annotate.campaigns.lifecycle import set_status

    campaign = active_campaign(dataset, annotator)
    set_status(campaign, "paused")
    response = login(annotator).get(reverse("annotate", args=[campaign.pk]))
    assert response.status_code == 200
    assert "paused" in response.content.decode()
    assert not Assignment.objects.exists()
