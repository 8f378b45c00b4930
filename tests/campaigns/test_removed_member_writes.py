"""An annotator removed from a campaign, in every way ``members.py`` removes one, changes
nothing there any more: a submit of an item they held, a revision of an answer they gave, a
skip and a draft are each answered 404 on the API and on the page, as for an assignment that is
not theirs, and what is stored stays as it was. A current member works on as before."""

import threading
import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import transaction
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from prb_annotate.campaigns.annotating import skip, submit
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.campaigns.members import ANSWER_CHOICES, remove_member, return_study
from prb_annotate.models import Annotation, AnswerDraft, Assignment, Campaign, Dataset, Participant
from tests.conftest import make_pairs
from tests.support.campaigns import active_campaign, annotators, answers, form_data
from tests.support.concurrency import run_threads

RETURNED_STUDY = "returned the study"
REMOVALS = [*ANSWER_CHOICES, RETURNED_STUDY]


@pytest.fixture
def campaign(dataset: Dataset, annotator: User, other_annotator: User) -> Campaign:
    campaign = active_campaign(dataset)
    add_member(campaign, annotator)
    add_member(campaign, other_annotator)
    return campaign


def _remove(campaign: Campaign, user: User, removal: str) -> None:
    if removal == RETURNED_STUDY:
        Participant.objects.create(
            user=user, campaign=campaign, participant_id="PID-alice", resume_key_hash="0" * 64
        )
        return_study(campaign, user)
    else:
        remove_member(campaign, user, removal, by=None)


def _stored(campaign: Campaign) -> tuple[list[Any], ...]:
    """Everything a write by an annotator could change."""
    annotations = Annotation.objects.filter(assignment__campaign=campaign).order_by("pk")
    assignments = Assignment.objects.filter(campaign=campaign).order_by("pk")
    drafts = AnswerDraft.objects.filter(assignment__campaign=campaign).order_by("pk")
    return (
        list(annotations.values()),
        list(assignments.values("pk", "status", "skip_reason", "submitted_at", "expires_at")),
        list(drafts.values("assignment_id", "values")),
    )


# --- the API ------------------------------------------------------------------------------


def _api(user: User) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")


def _next(client: Client, campaign: Campaign) -> Any:
    return client.post(f"/api/campaigns/{campaign.pk}/next/")


def _api_submit(client: Client, campaign: Campaign, assignment_id: int, token: str) -> Any:
    return client.post(
        f"/api/assignments/{assignment_id}/submit/",
        form_data(campaign, token=token),
        content_type="application/json",
    )


def _api_skip(client: Client, assignment_id: int) -> Any:
    return client.post(
        f"/api/assignments/{assignment_id}/skip/",
        {"reason": "I cannot judge this topic"},
        content_type="application/json",
    )


def _answered_and_held(client: Client, campaign: Campaign, who: str) -> tuple[int, int]:
    """One item answered through the API and the next one held: their assignment ids."""
    answered = _next(client, campaign).json()["assignment"]
    assert _api_submit(client, campaign, answered, f"{who}-first").status_code == 201
    held = _next(client, campaign).json()["assignment"]
    return answered, held


@pytest.mark.parametrize("removal", REMOVALS)
def test_a_removed_annotator_submits_revises_and_skips_nothing_through_the_api(
    campaign: Campaign, annotator: User, login, removal: str
) -> None:
    api = _api(annotator)
    answered, held = _answered_and_held(api, campaign, "alice")
    page = login(annotator)
    draft_url = reverse("annotate_draft", args=[campaign.pk, held])
    assert page.post(draft_url, {"comment": "half done"}).status_code == 204
    _remove(campaign, annotator, removal)
    before = _stored(campaign)

    assert _next(api, campaign).status_code == 404
    freed = _api_submit(api, campaign, held, "alice-freed")
    revised = _api_submit(api, campaign, answered, "alice-revised")
    replayed = _api_submit(api, campaign, answered, "alice-first")
    skipped = _api_skip(api, held)
    draft = page.post(draft_url, {"comment": "still typing"})

    refusals = [freed, revised, replayed, skipped, draft]
    assert [response.status_code for response in refusals] == [404] * len(refusals)
    # The same answer as for an assignment that does not exist: nothing revealed.
    nobody = _api_submit(api, campaign, held + answered + 1000, "alice-nobody")
    assert [response.json() for response in refusals[:4]] == [nobody.json()] * 4
    assert _stored(campaign) == before
    assert Annotation.objects.get(assignment_id=answered).revision == 1


@pytest.mark.parametrize("removal", REMOVALS)
def test_the_services_find_no_assignment_for_a_removed_annotator(
    campaign: Campaign, annotator: User, removal: str
) -> None:
    api = _api(annotator)
    answered, held = _answered_and_held(api, campaign, "alice")
    _remove(campaign, annotator, removal)
    before = _stored(campaign)
    for assignment_id, token in ((held, "freed"), (answered, "revised")):
        assignment = Assignment.objects.get(pk=assignment_id)
        with pytest.raises(Assignment.DoesNotExist):
            submit(assignment_id, annotator, answers(assignment), client_token=token)
    with pytest.raises(Assignment.DoesNotExist):
        skip(held, annotator, reason="I cannot judge this topic")
    assert _stored(campaign) == before


@pytest.mark.django_db(transaction=True)
def test_a_skip_and_a_submit_waiting_on_the_removal_find_nothing_once_it_is_done() -> None:
    """The removal frees the held item under its lock; a skip and a submit of that item sent
    meanwhile wait for it, and then see that the account is no longer a member."""
    dataset = Dataset.objects.create(name="removal race")
    make_pairs(dataset, 4)
    campaign = active_campaign(dataset, k=3)
    (member,) = annotators(campaign, 1)
    held = next_assignment(campaign, member)
    assert held is not None
    removing = threading.Event()
    outcomes: list[str] = []

    def work(index: int) -> None:
        user = User.objects.get(pk=member.pk)
        if index == 0:
            with transaction.atomic():
                remove_member(campaign, user, next(iter(ANSWER_CHOICES)), by=None)
                removing.set()
                time.sleep(0.5)  # the others are sent now and wait for this to end
            return
        removing.wait()
        try:
            if index == 1:
                skip(held.pk, user, reason="I cannot judge this topic")
            else:
                submit(held.pk, user, answers(held), client_token="sent-while-removed")
        except Assignment.DoesNotExist:
            outcomes.append("not found")

    errors = run_threads(3, work)
    assert not errors, "\n".join(errors)
    assert outcomes == ["not found", "not found"]
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED
    assert not Annotation.objects.exists()


def test_an_annotator_added_back_answers_again(campaign: Campaign, annotator: User) -> None:
    api = _api(annotator)
    answered, _ = _answered_and_held(api, campaign, "alice")
    remove_member(campaign, annotator, next(iter(ANSWER_CHOICES)), by=None)
    assert _api_submit(api, campaign, answered, "alice-removed").status_code == 404
    add_member(campaign, annotator)
    revised = _api_submit(api, campaign, answered, "alice-back")
    assert revised.status_code == 201
    assert revised.json()["revision"] == 2


def test_a_current_member_works_on_beside_a_removed_one(
    campaign: Campaign, annotator: User, other_annotator: User, login
) -> None:
    _answered_and_held(_api(annotator), campaign, "alice")
    remove_member(campaign, annotator, next(iter(ANSWER_CHOICES)), by=None)

    api = _api(other_annotator)
    answered, held = _answered_and_held(api, campaign, "bob")
    revised = _api_submit(api, campaign, answered, "bob-revised")
    assert (revised.status_code, revised.json()["revision"]) == (201, 2)
    draft_url = reverse("annotate_draft", args=[campaign.pk, held])
    assert login(other_annotator).post(draft_url, {"comment": "hmm"}).status_code == 204
    skipped = _api_skip(api, held)
    assert (skipped.status_code, skipped.json()["status"]) == (200, "skipped")
    again = _next(api, campaign).json()["assignment"]
    assert _api_submit(api, campaign, again, "bob-again").status_code == 201


# --- the pages ----------------------------------------------------------------------------


def _page_answered_and_held(client: Client, campaign: Campaign, who: str) -> tuple[int, int]:
    """One item answered on the page and the next one held: their assignment ids."""
    answered = client.get(reverse("annotate", args=[campaign.pk])).context["assignment"].pk
    url = reverse("annotate_submit", args=[campaign.pk, answered])
    assert client.post(url, form_data(campaign, token=f"{who}-page-first")).status_code == 302
    held = client.get(reverse("annotate", args=[campaign.pk])).context["assignment"].pk
    return answered, held


@pytest.mark.parametrize("removal", REMOVALS)
def test_a_removed_annotator_submits_revises_skips_and_drafts_nothing_on_the_page(
    campaign: Campaign, annotator: User, login, removal: str
) -> None:
    page = login(annotator)
    answered, held = _page_answered_and_held(page, campaign, "alice")
    _remove(campaign, annotator, removal)
    before = _stored(campaign)

    def url(name: str, assignment_id: int) -> str:
        return reverse(name, args=[campaign.pk, assignment_id])

    responses = [
        page.get(reverse("annotate", args=[campaign.pk])),
        page.get(url("annotate_assignment", answered)),
        page.post(url("annotate_submit", held), form_data(campaign, token="page-freed")),
        page.post(url("annotate_submit", answered), form_data(campaign, token="page-revised")),
        page.post(url("annotate_skip", held), {"reason": "Something else"}),
        page.post(url("annotate_draft", held), {"comment": "still typing"}),
    ]
    assert [response.status_code for response in responses] == [404] * len(responses)
    assert _stored(campaign) == before
    assert Annotation.objects.get(assignment_id=answered).revision == 1


def test_a_current_member_still_revises_on_the_page(
    campaign: Campaign, annotator: User, other_annotator: User, login
) -> None:
    _page_answered_and_held(login(annotator), campaign, "alice")
    remove_member(campaign, annotator, next(iter(ANSWER_CHOICES)), by=None)
    page = login(other_annotator)
    answered, held = _page_answered_and_held(page, campaign, "bob")
    url = reverse("annotate_submit", args=[campaign.pk, answered])
    assert page.post(url, form_data(campaign, token="bob-page-revised")).status_code == 302
    assert Annotation.objects.get(assignment_id=answered, is_current=True).revision == 2
    skip_url = reverse("annotate_skip", args=[campaign.pk, held])
    assert page.post(skip_url, {"reason": "Something else"}).status_code == 302
    assert Assignment.objects.get(pk=held).status == Assignment.Status.SKIPPED
