"""What a participant reads of a campaign that is not active: the page that replaces the item
offers the guidelines and thanks for the work only to a member who did some, and the home and
completion pages count nothing more as available and say why (closed: nothing more will come;
paused: come back later), as the API's progress does."""

import re

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.lifecycle import add_member, create_campaign, set_status
from prb_annotate.models import Campaign, Dataset
from tests.support.pages import active_campaign, form_answers, reserve, submit_url
from tests.support.qualification import pass_first, screening_campaign

THANKS = "Thank you for your work."
SAVED = "Your answers so far are saved"
GUIDELINES = "Read the guidelines"


def _campaign_with_one_answer(dataset: Dataset, annotator: User, client: Client) -> Campaign:
    """An active campaign (quota 5) where the annotator submitted one item and holds the next."""
    campaign = active_campaign(dataset, annotator, quota_per_annotator=5)
    assignment = reserve(client, campaign)
    response = client.post(submit_url(assignment), form_answers(campaign, client_token="t1"))
    assert response.status_code == 302
    reserve(client, campaign)
    return campaign


def _available(html: str) -> int:
    found = re.search(r'class="progress-available">(\d+)<', html)
    assert found is not None, html
    return int(found.group(1))


def _page(client: Client, name: str, campaign: Campaign) -> str:
    response = client.get(reverse(name, args=[campaign.pk]))
    assert response.status_code == 200
    return response.content.decode()


# The page in place of the item.


def test_a_closed_campaign_thanks_and_guides_its_member_but_not_a_visitor_at_its_link(
    dataset: Dataset, annotator: User, login
) -> None:
    member = login(annotator)
    campaign = _campaign_with_one_answer(dataset, annotator, member)
    set_status(campaign, Campaign.Status.CLOSED)
    guidelines = reverse("annotate_guidelines", args=[campaign.pk])
    html = _page(member, "annotate", campaign)
    assert THANKS in html
    assert guidelines in html
    assert member.get(guidelines).status_code == 200
    join = reverse("join", args=[campaign.invite_token])
    html = Client().get(join, {"PROLIFIC_PID": "P1"}).content.decode()
    assert "This campaign is closed." in html
    assert THANKS not in html
    assert GUIDELINES not in html
    assert guidelines not in html


def test_a_visitor_at_a_closed_sign_up_invite_reads_the_same(dataset: Dataset) -> None:
    campaign = active_campaign(dataset)
    set_status(campaign, Campaign.Status.CLOSED)
    html = Client().get(reverse("signup", args=[campaign.signup_token])).content.decode()
    assert "This campaign is closed." in html
    assert THANKS not in html
    assert GUIDELINES not in html


def test_a_logged_in_outsider_at_a_closed_study_link_gets_no_guidelines_link(
    dataset: Dataset, outsider: User, login
) -> None:
    """The guidelines answer 404 to anyone outside the campaign."""
    campaign = active_campaign(dataset)
    set_status(campaign, Campaign.Status.CLOSED)
    client = login(outsider)
    html = client.get(reverse("join", args=[campaign.invite_token])).content.decode()
    assert GUIDELINES not in html
    assert THANKS not in html
    assert client.get(reverse("annotate_guidelines", args=[campaign.pk])).status_code == 404


def test_a_member_with_no_answer_is_not_told_their_answers_are_saved_or_thanked(
    dataset: Dataset, annotator: User, other_annotator: User, login
) -> None:
    answered = login(other_annotator)
    campaign = _campaign_with_one_answer(dataset, other_annotator, answered)
    add_member(campaign, annotator)
    client = login(annotator)
    set_status(campaign, Campaign.Status.PAUSED)
    assert SAVED in _page(answered, "annotate", campaign)
    html = _page(client, "annotate", campaign)
    assert "This campaign is paused for now. Please come back later." in html
    assert SAVED not in html
    assert GUIDELINES in html
    set_status(campaign, Campaign.Status.CLOSED)
    html = _page(client, "annotate", campaign)
    assert "This campaign is closed." in html
    assert THANKS not in html


# The home page.


def test_home_counts_nothing_more_available_in_a_closed_campaign_and_says_why(
    dataset: Dataset, annotator: User, login
) -> None:
    client = login(annotator)
    campaign = _campaign_with_one_answer(dataset, annotator, client)
    assert _available(_page(client, "annotate_done", campaign)) == 5
    set_status(campaign, Campaign.Status.CLOSED)
    html = client.get(reverse("home")).content.decode()
    assert _available(html) == 1
    assert "It is closed: no more pairs will come to you here." in html
    assert THANKS in html


def test_home_counts_nothing_more_available_in_a_paused_campaign_and_says_why(
    dataset: Dataset, annotator: User, login
) -> None:
    client = login(annotator)
    campaign = _campaign_with_one_answer(dataset, annotator, client)
    set_status(campaign, Campaign.Status.PAUSED)
    html = client.get(reverse("home")).content.decode()
    assert _available(html) == 1
    assert "It is paused for now: no pairs come until a manager resumes it." in html
    assert "Others are working on the last pairs" not in html


def test_home_thanks_no_member_of_a_closed_campaign_who_did_nothing(
    dataset: Dataset, annotator: User, login
) -> None:
    campaign = active_campaign(dataset, annotator)
    set_status(campaign, Campaign.Status.CLOSED)
    html = login(annotator).get(reverse("home")).content.decode()
    assert _available(html) == 0
    assert "It is closed: no more pairs will come to you here." in html
    assert THANKS not in html


# The completion page and the API's progress.


def test_the_done_page_of_a_closed_campaign_says_it_is_closed_and_offers_no_more_work(
    dataset: Dataset, annotator: User, login
) -> None:
    client = login(annotator)
    campaign = _campaign_with_one_answer(dataset, annotator, client)
    set_status(campaign, Campaign.Status.CLOSED)
    html = _page(client, "annotate_done", campaign)
    assert 'data-state="closed"' in html
    assert "is closed: no more pairs will come to you here." in html
    assert THANKS in html
    assert "More pairs are open again" not in html
    assert 'id="check-again"' not in html
    assert _available(html) == 1


def test_the_done_page_of_a_paused_campaign_asks_to_come_back_later(
    dataset: Dataset, annotator: User, login
) -> None:
    client = login(annotator)
    campaign = _campaign_with_one_answer(dataset, annotator, client)
    set_status(campaign, Campaign.Status.PAUSED)
    html = _page(client, "annotate_done", campaign)
    assert 'data-state="paused"' in html
    assert "until a manager resumes it: please come back later." in html
    assert "More pairs are open again" not in html
    assert 'id="check-again"' not in html
    assert _available(html) == 1


def test_my_progress_names_the_status_that_holds_the_pairs_back(
    dataset: Dataset, annotator: User, login
) -> None:
    client = login(annotator)
    campaign = _campaign_with_one_answer(dataset, annotator, client)
    url = f"/api/campaigns/{campaign.pk}/my-progress/"
    set_status(campaign, Campaign.Status.PAUSED)
    paused = client.get(url).json()
    assert (paused["held"], paused["available"]) == ("paused", 1)
    assert (paused["finished"], paused["waiting"]) == (False, False)
    set_status(campaign, Campaign.Status.CLOSED)
    closed = client.get(url).json()
    assert (closed["held"], closed["available"]) == ("closed", 1)
    assert (closed["finished"], closed["waiting"]) == (True, False)


def test_the_done_page_of_a_campaign_not_started_says_so(
    dataset: Dataset, annotator: User, login
) -> None:
    campaign = create_campaign(dataset, "not yet", k=3, seed=7)
    add_member(campaign, annotator)
    html = _page(login(annotator), "annotate_done", campaign)
    assert 'data-state="draft"' in html
    assert "come once a manager starts it: please come back later." in html
    assert 'id="check-again"' not in html


def test_the_qualification_result_says_a_paused_campaign_gives_no_pairs_yet(
    dataset: Dataset, annotator: User, login
) -> None:
    """It once told a member who passed "The campaign's pairs are open to you now" and offered
    "Start annotating" on a paused campaign, and "Every pair … has the answers it needs" on a
    closed one."""
    campaign = screening_campaign(dataset, name="screened, then paused")
    add_member(campaign, annotator)
    pass_first(campaign, annotator)
    client = login(annotator)
    set_status(campaign, Campaign.Status.PAUSED)
    html = _page(client, "qualification_result", campaign)
    assert "The campaign is paused for now, though" in html
    assert "open to you now" not in html
    assert 'id="start-annotating"' not in html
    set_status(campaign, Campaign.Status.CLOSED)
    html = _page(client, "qualification_result", campaign)
    assert "The campaign is closed now, though" in html
    assert "has the answers it needs" not in html


def test_the_qualification_page_of_a_paused_campaign_speaks_to_its_member(
    dataset: Dataset, annotator: User, login
) -> None:
    """It once showed a member the visitor's page (no guidelines), unlike the item page."""
    campaign = screening_campaign(dataset, name="screened, paused before the qualification")
    add_member(campaign, annotator)
    client = login(annotator)
    set_status(campaign, Campaign.Status.PAUSED)
    html = _page(client, "qualification", campaign)
    assert "This campaign is paused for now." in html
    assert GUIDELINES in html


def test_a_closed_campaign_gives_no_completion_code_to_a_participant_who_did_nothing(
    dataset: Dataset, annotator: User, login
) -> None:
    """Closed counts as finished, and the done page once handed every study participant the
    code: approved by the decisions, one who did nothing would have been paid."""
    completion = "https://app.prolific.com/submissions/complete?cc=DONE42"
    campaign = active_campaign(dataset, quota_per_annotator=5, completion_url=completion)
    add_member(campaign, annotator, participant_id="PIDIDLE")
    client = login(annotator)
    set_status(campaign, Campaign.Status.CLOSED)
    html = _page(client, "annotate_done", campaign)
    assert "DONE42" not in html
    assert 'id="completion-link"' not in html
    row = Campaign.objects.filter(pk=campaign.pk)
    row.update(status=Campaign.Status.ACTIVE)
    assignment = reserve(client, campaign)
    answers = form_answers(campaign, client_token="t1")
    assert client.post(submit_url(assignment), answers).status_code == 302
    row.update(status=Campaign.Status.CLOSED)
    html = _page(client, "annotate_done", campaign)
    assert 'id="completion-link"' in html  # one item done: theirs to submit
