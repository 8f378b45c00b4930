"""Screened out, through the pages and the API: a study participant who fails the qualification
twice reaches the campaign's screen-out URL and never gets a regular item, not through the API
either, not even with a reservation made before the qualification; a staff annotator who fails
reads a page saying so, and the manager sees it on the dashboard and can let them in."""

import re

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from prb_annotate.campaigns.lifecycle import add_member, create_campaign
from prb_annotate.models import Annotation, Assignment, Membership, QualificationItem
from tests.support.pages import form_answers
from tests.support.qualification import form_for, screening_campaign

SCREEN_OUT = "https://study.example/complete?cc=SCREENED"


def join_as_participant(campaign, pid: str) -> tuple[Client, User]:
    client = Client()
    ids = {"PROLIFIC_PID": pid, "STUDY_ID": "study1", "SESSION_ID": f"session-{pid}"}
    response = client.post(reverse("join", args=[campaign.invite_token]), ids)
    assert response.status_code == 302, response.status_code
    membership = Membership.objects.get(campaign=campaign, participant_id=pid)
    return client, membership.user


def api_client(user: User) -> Client:
    token, _ = Token.objects.get_or_create(user=user)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}")


def post_json(client: Client, url: str, data=None):
    return client.post(url, data or {}, content_type="application/json")


def answer_on_page(client: Client, campaign, *, right: bool):
    """Open the current practice or qualification item and post the form; the response."""
    page = client.get(reverse("qualification", args=[campaign.pk]))
    assert page.status_code == 200, page.status_code
    task = page.context["screening"]["task"]
    return client.post(
        reverse("qualification_submit", args=[campaign.pk, task.item.pk]),
        form_for(campaign, task, right=right),
    )


def add_qualification_on_the_page(manager_client: Client, campaign, external_ids) -> None:
    for external_id in external_ids:
        response = manager_client.post(
            reverse("campaign_qualification_item", args=[campaign.pk]),
            {
                "pair": external_id,
                "phase": "qualification",
                "expected_rubric_fit": "chosen",
                "expected_differentiator": "preference",
                "explanation_rubric_fit": "It follows the rubric.",
            },
        )
        assert response.status_code == 302, response.content.decode()


def test_it_sends_a_participant_who_fails_twice_to_the_screen_out_url(
    dataset, manager, login
) -> None:
    """A Prolific participant reserves a pair; the manager then adds a qualification; the
    participant fails both attempts on the pages and is sent to the screen-out URL. From then
    on the queue, the earlier reservation, its submit and the API all refuse them."""
    campaign = create_campaign(dataset, "prolific-study", k=2, seed=3, activate=True)
    campaign.screen_out_url = SCREEN_OUT
    campaign.save(update_fields=["screen_out_url"])
    client, participant = join_as_participant(campaign, "5f0c0ffee0c0ffee0c0ffee0")
    first = client.get(reverse("annotate", args=[campaign.pk]))
    earlier = first.context["assignment"]
    nobody_had = campaign.items.exclude(pk=earlier.item_id).order_by("order_key")[:3]
    add_qualification_on_the_page(
        login(manager), campaign, [item.pair.external_id for item in nobody_had]
    )
    assert QualificationItem.objects.filter(campaign=campaign).count() == 3

    queue = client.get(reverse("annotate", args=[campaign.pk]))
    assert queue["Location"] == reverse("qualification", args=[campaign.pk])
    for _ in range(2):
        answer_on_page(client, campaign, right=False)
    ended = answer_on_page(client, campaign, right=False)
    assert ended.url == reverse("qualification_result", args=[campaign.pk])
    result = client.get(ended.url)
    assert "Not passed yet: 0 of 3 right" in result.content.decode()
    assert result.content.decode().count("It follows the rubric.") == 3
    for _ in range(2):
        answer_on_page(client, campaign, right=False)
    last = answer_on_page(client, campaign, right=False)
    screened = client.get(last.url, follow=True)
    body = screened.content.decode()
    assert screened.redirect_chain[-1][0] == reverse(
        "qualification_screened_out", args=[campaign.pk]
    )
    assert f'content="3;url={SCREEN_OUT}"' in body
    assert re.search(rf'id="screen-out-link" href="{re.escape(SCREEN_OUT)}"', body)
    # The code itself, for a browser that does not follow the link.
    assert "<code>SCREENED</code>" in body
    assert 'id="completion-link"' not in body

    # Never a regular item again, by any way in.
    for url in (
        reverse("annotate", args=[campaign.pk]),
        reverse("annotate_assignment", args=[campaign.pk, earlier.pk]),
        reverse("annotate_done", args=[campaign.pk]),
    ):
        followed = client.get(url, follow=True)
        assert followed.redirect_chain[-1][0].endswith("/qualification/screened-out/"), url
        assert "assignment" not in (followed.context or {})
    posted = client.post(
        reverse("annotate_submit", args=[campaign.pk, earlier.pk]),
        form_answers(campaign, client_token="late-page"),
    )
    assert posted.status_code == 302
    api = api_client(participant)
    refused = post_json(api, reverse("api_next", args=[campaign.pk]))
    assert refused.status_code == 403
    assert refused.json()["screen_out_url"] == SCREEN_OUT
    late = post_json(
        api, reverse("api_submit", args=[earlier.pk]), form_answers(campaign, client_token="late")
    )
    assert late.status_code == 403
    progress = api.get(reverse("api_my_progress", args=[campaign.pk])).json()
    assert progress["qualification"] == "failed"
    mine = api.get(reverse("api_my_qualification", args=[campaign.pk])).json()
    assert (mine["stage"], mine["screen_out_url"]) == ("screened_out", SCREEN_OUT)
    assert not Annotation.objects.filter(assignment__annotator=participant).exists()
    assert Assignment.objects.get(pk=earlier.pk).status == Assignment.Status.EXPIRED
    assert not Assignment.objects.filter(annotator=participant).exclude(pk=earlier.pk).exists()


def test_it_tells_a_staff_annotator_who_fails_and_shows_the_manager(
    dataset, annotator, manager, login
) -> None:
    """No redirect for an account of the site: a page says they did not pass. The dashboard
    counts them as failed, its quality-control table says so, and its form lets them in."""
    campaign = screening_campaign(dataset, annotator, screen_out_url=SCREEN_OUT)
    client = login(annotator)
    for _ in range(2 + 2 * 3):  # practice, then two attempts at three items
        response = answer_on_page(client, campaign, right=False)
    page = client.get(response.url, follow=True)
    assert page.redirect_chain[-1][0].endswith("/qualification/screened-out/")
    body = page.content.decode()
    assert "You did not pass the qualification" in body
    assert SCREEN_OUT not in body
    assert "can let you in" in body

    manager_client = login(manager)
    dashboard = manager_client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    summary_match = re.search(r'id="qualification-summary">(.*?)</p>', dashboard, re.S)
    assert summary_match is not None
    summary = summary_match.group(1)
    assert "<strong>0</strong> passed" in summary
    assert "<strong>1</strong> failed" in summary
    row_match = re.search(r'<tr data-annotator="alice".*?</tr>', dashboard, re.S)
    assert row_match is not None
    row = row_match.group(0)
    assert 'data-outcome="failed"' in row
    assert reverse("campaign_qualification_admit", args=[campaign.pk]) in row
    assert reverse("campaign_qualification", args=[campaign.pk]) in dashboard

    let_in = manager_client.post(
        reverse("campaign_qualification_admit", args=[campaign.pk]),
        {"annotator": annotator.pk, "reason": "talked it through", "next": "dashboard"},
    )
    assert let_in.url == reverse("campaign_detail", args=[campaign.pk])
    after = manager_client.get(let_in.url).content.decode()
    assert "by manager: talked it through" in after
    queue = client.get(reverse("annotate", args=[campaign.pk]))
    assert queue.status_code == 200
    assert queue.context["assignment"].item.campaign_id == campaign.pk


def test_it_hands_practice_and_qualification_first_through_the_api(dataset, annotator) -> None:
    """next says which kind an item is and where its answer goes; a practice submit returns
    the feedback; a failed first attempt returns feedback on every item; a pass opens the
    queue, whose items say regular."""
    campaign = screening_campaign(dataset, annotator)
    api = api_client(annotator)
    kinds = []
    first_post: tuple[str, dict[str, str], int] | None = None
    while True:
        served = post_json(api, reverse("api_next", args=[campaign.pk]))
        assert served.status_code == 200, served.content
        item = served.json()
        kinds.append(item["kind"])
        if item["kind"] == "regular":
            break
        assert item["assignment"] is None
        assert "chosen" not in served.content.decode()
        right = item["kind"] == "practice" or item["attempt"] == 2
        side = (
            "A"
            if item["response_a"] == dataset.pairs.get(question=item["question"]).chosen
            else "B"
        )
        other = "B" if side == "A" else "A"
        answers = form_answers(
            campaign, fit=side if right else other, client_token=f"api-{len(kinds)}"
        )
        submitted = post_json(api, item["submit_url"], answers)
        assert submitted.status_code == 201, submitted.content
        first_post = first_post or (item["submit_url"], answers, submitted.json()["answer"])
        body = submitted.json()
        if item["kind"] == "practice":
            assert body["feedback"]["correct"] is True
            assert body["feedback"]["questions"][0]["explanation"]
        elif body["attempt_result"] is not None and body["attempt"] == 1:
            assert body["attempt_result"]["passed"] is False
            assert [f["correct"] for f in body["attempt_feedback"]] == [False, False, False]
        else:
            assert body["feedback"] is None
    assert kinds == ["practice"] * 2 + ["qualification"] * 6 + ["regular"]
    mine = api.get(reverse("api_my_qualification", args=[campaign.pk])).json()
    assert (mine["stage"], mine["outcome"]) == ("queue", "passed")
    assert [a["right"] for a in mine["attempts"]] == [0, 3]
    assert len(mine["feedback"]) == 3
    assert first_post is not None
    url, answers, answer_id = first_post
    replay = post_json(api, url, answers)
    assert replay.status_code == 200
    assert (replay.json()["created"], replay.json()["answer"]) == (False, answer_id)


def test_it_answers_4xx_for_what_is_not_the_callers(dataset, annotator, other_annotator) -> None:
    """Another member's campaign item, a missing item, a bad form: 404, 404, 400."""
    campaign = screening_campaign(dataset, annotator)
    stranger = api_client(other_annotator)
    item = QualificationItem.objects.filter(campaign=campaign).earliest("pk")
    url = reverse("api_qualification_submit", args=[item.pk])
    assert post_json(stranger, url, {"client_token": "x"}).status_code == 404
    missing = reverse("api_qualification_submit", args=[item.pk + 1000])
    assert post_json(api_client(annotator), missing, {}).status_code == 404
    bad = post_json(api_client(annotator), url, {"client_token": "y", "rubric_fit": "Z"})
    assert bad.status_code == 400
    assert "rubric_fit" in bad.json()["errors"]
    add_member(campaign, other_annotator)
    assert post_json(stranger, reverse("api_next", args=[campaign.pk])).json()["kind"] == "practice"
