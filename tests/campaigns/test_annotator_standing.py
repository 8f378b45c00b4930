"""An annotator's own progress: done, available to them, and the difference between "finished"
and "others hold the last pairs, check back", as figures and as the pages say it."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from prb_annotate.campaigns.annotating import parse_submission, skip, submit
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.progress import annotator_standing
from prb_annotate.models import Assignment, Campaign, CampaignItem
from tests.support.pages import active_campaign, form_answers, reserve, submit_url


def _submit(client, campaign, token: str) -> Assignment:
    assignment = reserve(client, campaign)
    response = client.post(submit_url(assignment), form_answers(campaign, client_token=token))
    assert response.status_code == 302
    return assignment


def test_it_counts_done_and_available_without_a_quota(dataset, annotator, login) -> None:
    """12 pairs, k = 3: everything is open to a new annotator; the item in hand stays counted."""
    campaign = active_campaign(dataset, annotator)
    standing = annotator_standing(campaign, annotator)
    assert (standing.done, standing.in_hand, standing.open_items, standing.held_items) == (
        0,
        False,
        12,
        0,
    )
    assert (standing.available, standing.finished, standing.waiting) == (12, False, False)
    client = login(annotator)
    _submit(client, campaign, "t1")
    reserve(client, campaign)
    standing = annotator_standing(campaign, annotator)
    assert (standing.done, standing.in_hand, standing.open_items) == (1, True, 10)
    assert standing.available == 12
    assert round(standing.percent, 2) == round(100 / 12, 2)


def test_it_caps_what_is_available_at_the_quota(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator, quota_per_annotator=3)
    client = login(annotator)
    for token in ("t1", "t2"):
        _submit(client, campaign, token)
    standing = annotator_standing(campaign, annotator)
    assert (standing.done, standing.available, standing.finished) == (2, 3, False)
    _submit(client, campaign, "t3")
    standing = annotator_standing(campaign, annotator)
    assert (standing.done, standing.available, standing.quota_reached) == (3, 3, True)
    assert (standing.finished, standing.waiting) == (True, False)


def test_it_leaves_out_skipped_pairs_and_pairs_others_completed(
    dataset, annotator, other_annotator
) -> None:
    campaign = active_campaign(dataset, annotator, other_annotator)
    campaign.annotations_per_pair = 1
    campaign.save(update_fields=["annotations_per_pair"])
    theirs = next_assignment(campaign, other_annotator)
    assert theirs is not None
    data = form_answers(campaign, client_token="bob-1")
    submit(
        theirs.pk,
        other_annotator,
        parse_submission(data, assignment=theirs).answers,
        client_token="bob-1",
    )
    mine = next_assignment(campaign, annotator)
    assert mine is not None
    assert mine.item_id != theirs.item_id
    skip(mine.pk, annotator, reason="I cannot judge this topic")
    standing = annotator_standing(campaign, annotator)
    assert (standing.done, standing.open_items, standing.available) == (0, 10, 10)


def test_it_tells_finished_from_waiting_for_others(
    dataset, annotator, other_annotator, login
) -> None:
    """k = 1 over 12 pairs: alice does 11, bob holds the last one. Alice waits; when bob's
    reservation runs out the pair is open to her again; once bob submits it, she is finished."""
    campaign = active_campaign(dataset, annotator, other_annotator)
    campaign.annotations_per_pair = 1
    campaign.save(update_fields=["annotations_per_pair"])
    client = login(annotator)
    for index in range(11):
        _submit(client, campaign, f"a{index}")
    held = next_assignment(campaign, other_annotator)
    assert held is not None

    standing = annotator_standing(campaign, annotator)
    assert (standing.done, standing.open_items, standing.held_items) == (11, 0, 1)
    assert (standing.finished, standing.waiting, standing.available) == (False, True, 11)
    done_url = reverse("annotate_done", args=[campaign.pk])
    response = client.get(reverse("annotate", args=[campaign.pk]))
    assert response.status_code == 302
    assert response["Location"] == done_url
    html = client.get(done_url).content.decode()
    assert 'data-state="waiting"' in html
    assert "Others are still working on the last pairs" in html
    assert "1 pair in" in html
    assert 'href="/"' in html  # home

    later = timezone.now() + timedelta(minutes=campaign.reservation_minutes + 1)
    standing = annotator_standing(campaign, annotator, now=later)
    assert (standing.open_items, standing.waiting, standing.finished) == (1, False, False)

    data = form_answers(campaign, client_token="bob-1")
    submit(
        held.pk,
        other_annotator,
        parse_submission(data, assignment=held).answers,
        client_token="bob-1",
    )
    standing = annotator_standing(campaign, annotator)
    assert (standing.finished, standing.waiting, standing.available) == (True, False, 11)
    html = client.get(done_url).content.decode()
    assert 'data-state="finished"' in html
    assert "You're finished, thank you!" in html
    assert "Check again" not in html


def test_it_shows_progress_on_the_home_page(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator, quota_per_annotator=4)
    client = login(annotator)
    _submit(client, campaign, "t1")
    html = client.get(reverse("home")).content.decode()
    assert '<progress max="4" value="1"' in html
    assert '<strong class="progress-done">1</strong> done of' in html
    assert '<strong class="progress-available">4</strong> available to you' in html


def test_the_home_page_lists_a_campaign_not_started_yet(dataset, annotator, login) -> None:
    """The sign-up invite makes accounts for a draft campaign; its members were told they
    belonged to no campaign."""
    campaign = active_campaign(dataset, annotator)
    campaign.status = Campaign.Status.DRAFT
    campaign.save(update_fields=["status"])
    html = login(annotator).get(reverse("home")).content.decode()
    assert f'href="{reverse("annotate", args=[campaign.pk])}">{campaign.name}</a>' in html
    assert "It has not started yet" in html
    assert "You are not part of any campaign yet" not in html


def test_it_shows_the_item_id_the_previous_item_and_answers_given(
    dataset, annotator, login
) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    first = _submit(client, campaign, "t1")
    response = client.get(reverse("annotate", args=[campaign.pk]))
    html = response.content.decode()
    shown = response.context["assignment"]
    assert f'id="item-id" class="item-id">{shown.item.pair.external_id}</code>' in html
    back = reverse("annotate_assignment", args=[campaign.pk, first.pk])
    assert f'id="previous-item" href="{back}"' in html
    # form_answers: 5 for every criterion of A, 4 of B, A fits, preference, high confidence.
    assert "A 5·5·5, B 4·4·4; fits A; preference; high confidence" in html
    # The revision page goes back further, to the item before it (none here).
    revision = client.get(back)
    assert revision.context["previous"] is None
    assert "Save revision" in revision.content.decode()


def test_it_singularizes_one_past_post(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    html = login(annotator).get(reverse("annotate", args=[campaign.pk])).content.decode()
    assert "(1 past post)" in html


@pytest.mark.parametrize("raised_by", ["extra_annotations", "replacement_annotations"])
def test_it_counts_pairs_whose_target_the_audit_raised(
    dataset, annotator, other_annotator, raised_by: str
) -> None:
    """k = 1: a pair bob answered is full, until the audit asks for one more annotation, for a
    split vote or to replace answers that left the audit (the standing once ignored those, and
    told an annotator "finished" while the queue still had a slot for them)."""
    campaign = active_campaign(dataset, annotator, other_annotator)
    campaign.annotations_per_pair = 1
    campaign.save(update_fields=["annotations_per_pair"])
    answered = next_assignment(campaign, other_annotator)
    assert answered is not None
    data = form_answers(campaign, client_token="bob-1")
    submit(
        answered.pk,
        other_annotator,
        parse_submission(data, assignment=answered).answers,
        client_token="bob-1",
    )
    held = next_assignment(campaign, other_annotator)
    assert held is not None
    standing = annotator_standing(campaign, annotator)
    assert (standing.open_items, standing.held_items) == (10, 1)
    CampaignItem.objects.filter(pk__in=[answered.item_id, held.item_id]).update(**{raised_by: 1})
    standing = annotator_standing(campaign, annotator)
    assert (standing.open_items, standing.held_items) == (12, 0)


def test_it_sends_back_to_work_when_pairs_are_open_again(dataset, annotator, login) -> None:
    """The completion page opened while pairs are open (a reservation ran out meanwhile)."""
    campaign = active_campaign(dataset, annotator)
    html = login(annotator).get(reverse("annotate_done", args=[campaign.pk])).content.decode()
    assert 'data-state="open"' in html
    assert "Continue annotating" in html


def test_it_may_show_others_work_a_little_late_on_the_item_page(
    dataset, annotator, other_annotator
) -> None:
    """The campaign-wide count of full pairs may come from a copy a few seconds old; the
    annotator's own figures never do."""
    campaign = active_campaign(dataset, annotator, other_annotator)
    campaign.annotations_per_pair = 1
    campaign.save(update_fields=["annotations_per_pair"])
    assert annotator_standing(campaign, annotator).open_items == 12  # counted afresh, kept
    held = next_assignment(campaign, other_annotator)
    assert held is not None
    mine = next_assignment(campaign, annotator)
    assert mine is not None
    late = annotator_standing(campaign, annotator, fresh=False)
    assert (late.in_hand, late.open_items) == (True, 11)  # bob's pair not yet seen as full
    assert annotator_standing(campaign, annotator).open_items == 10
