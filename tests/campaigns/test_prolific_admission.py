"""With Prolific's API token and the campaign's study named, a study link admits only the
participants Prolific lists in that study: anyone else is refused before consent, on the start
page and on the join alike, with a page that says why, and the refusal is logged. When Prolific
cannot say (throttled, unreachable), the join is refused with 503 and "try again". A network
over its share is refused before Prolific is asked. Without the token, or without a study id,
nothing is asked.

``ProlificStandIn`` (``tests/support/prolific.py``) is the only part that is not the real thing:
a local HTTP server that answers Prolific's documented submissions endpoint."""

import io
import logging
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from prb_annotate.models import Campaign, FailedLogin, Participant
from tests.campaigns.test_hardening_joins import join, study_campaign
from tests.support.pages import reserve
from tests.support.prolific import STUDY, TOKEN, ProlificStandIn, listed, prolific_stand_in

REAL = "5f0c8e1e2b3a4c5d6e7f8091"
LATE = "6a1d9f2f3c4b5d6e7f809102"


@pytest.fixture
def prolific() -> Iterator[str]:
    """The stand-in listing two participants (on two pages) and one who returned the study."""
    rows = listed(REAL, LATE) + listed("returned-one", status="RETURNED")
    with (
        prolific_stand_in(rows) as base,
        override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=base),
    ):
        yield base


def start_page(campaign: Campaign, pid: str) -> tuple[int, str]:
    url = reverse("join", args=[campaign.invite_token])
    params = {"PROLIFIC_PID": pid, "STUDY_ID": STUDY, "SESSION_ID": f"s-{pid}"}
    response = Client().get(url, params, REMOTE_ADDR="203.0.113.20")
    return response.status_code, response.content.decode()


def test_it_admits_only_participants_prolific_lists(
    db: None, prolific: str, caplog: pytest.LogCaptureFixture
) -> None:
    campaign = study_campaign(42, consent_text="I agree to take part.", prolific_study_id=STUDY)
    status, page = start_page(campaign, "made-up-id")
    assert status == 403
    assert "Prolific does not list you as a participant of this study" in page
    assert "I agree to take part." not in page  # refused before consent
    with caplog.at_level(logging.WARNING, logger="prb_annotate.campaigns.join_limits"):
        _, refused = join(campaign, "made-up-id", "203.0.113.20", study=STUDY)
    assert refused.status_code == 403
    assert "Prolific does not list you" in refused.content.decode()
    assert "Prolific does not list participant made-up-id in study study-1" in caplog.text
    # Listed, but returned the study: not taking part any more.
    assert join(campaign, "returned-one", "203.0.113.20", study=STUDY)[1].status_code == 403
    assert not Participant.objects.filter(campaign=campaign).exists()

    status, page = start_page(campaign, LATE)  # on Prolific's second page
    assert status == 200
    assert "I agree to take part." in page
    client = Client()
    params = {"PROLIFIC_PID": REAL, "STUDY_ID": STUDY, "SESSION_ID": "s-1", "consent": "yes"}
    response = client.post(reverse("join", args=[campaign.invite_token]), params)
    assert response.status_code == 302
    assert reserve(client, campaign).annotator.participant.participant_id == REAL
    asked = f"/api/v1/studies/{STUDY}/submissions/"
    assert asked in ProlificStandIn.reads


@pytest.mark.parametrize("failure", ["throttled", "unreachable"])
def test_it_refuses_when_prolific_cannot_say(
    db: None, prolific: str, failure: str, caplog: pytest.LogCaptureFixture
) -> None:
    campaign = study_campaign(12, prolific_study_id=STUDY)
    if failure == "throttled":
        ProlificStandIn.refuse_with = 429
        address = prolific
    else:
        address = "http://127.0.0.1:9/api/v1/"  # the discard port: nothing answers there
    with (
        override_settings(PROLIFIC_API_URL=address),
        caplog.at_level(logging.WARNING, logger="prb_annotate.campaigns.join_limits"),
    ):
        status, page = start_page(campaign, REAL)
        _, response = join(campaign, REAL, "203.0.113.20", study=STUDY)
    assert status == 503
    assert "could not check your place in this study with Prolific" in page
    assert response.status_code == 503
    assert response["Retry-After"] == "120"
    assert f"Prolific could not check participant {REAL} of study study-1" in caplog.text
    assert not Participant.objects.filter(campaign=campaign).exists()


def test_a_network_over_its_share_is_refused_before_prolific_is_asked(
    db: None, prolific: str
) -> None:
    """Accounts made and joins Prolific refused both count against a network's share: past
    it, nothing more is asked of Prolific for that network in the window."""
    campaign = study_campaign(10, k=1, prolific_study_id=STUDY)  # one account per network
    assert join(campaign, REAL, "198.51.100.7", study=STUDY)[1].status_code == 302
    asked = len(ProlificStandIn.reads)
    for index in range(20):
        assert join(campaign, f"forged{index}", "198.51.100.8", study=STUDY)[1].status_code == 429
    assert len(ProlificStandIn.reads) == asked
    # Another network: its first made-up id costs one reading of the list, then 429.
    assert join(campaign, "forged-a", "192.0.2.1", study=STUDY)[1].status_code == 403
    assert join(campaign, "forged-b", "192.0.2.2", study=STUDY)[1].status_code == 429
    assert len(ProlificStandIn.reads) == asked + 2  # the list's two pages, once
    # A participant Prolific lists, from that network, once the window has passed.
    FailedLogin.objects.update(at=timezone.now() - timedelta(minutes=61))
    assert join(campaign, LATE, "192.0.2.3", study=STUDY)[1].status_code == 302


def test_without_a_token_or_a_study_id_nothing_is_asked(db: None, prolific: str) -> None:
    no_study = study_campaign(12)
    assert join(no_study, "made-up-id", "203.0.113.20")[1].status_code == 302
    with override_settings(PROLIFIC_API_TOKEN=""):
        campaign = study_campaign(13, prolific_study_id=STUDY)
        assert join(campaign, "made-up-id", "203.0.113.20", study=STUDY)[1].status_code == 302
    assert ProlificStandIn.reads == []
    assert User.objects.filter(username__startswith="prolific-").count() == 2


@override_settings(PRB_JOIN_WINDOW_MINUTES=120)
def test_a_refused_join_counts_for_the_whole_join_window_whatever_logins_do(
    db: None, prolific: str
) -> None:
    """The refusals are kept as failed-login rows, but they are not logins: a login's pruning
    (past the login windows, an hour) and ``unlock_logins --all`` leave them, so a join window
    longer than an hour still counts them; the join's own writer forgets them past its window."""
    campaign = study_campaign(10, k=1, prolific_study_id=STUDY)  # one account per network
    assert join(campaign, "forged-a", "192.0.2.1", study=STUDY)[1].status_code == 403
    FailedLogin.objects.update(at=timezone.now() - timedelta(minutes=90))
    # A wrong password elsewhere prunes the login rows older than an hour, and a manager
    # forgets every failed login.
    Client().post(reverse("login"), {"username": "nobody", "password": "wrong"})
    call_command("unlock_logins", "--all", stdout=io.StringIO())
    asked = len(ProlificStandIn.reads)
    assert join(campaign, "forged-b", "192.0.2.2", study=STUDY)[1].status_code == 429
    assert len(ProlificStandIn.reads) == asked  # still over its share: Prolific not asked

    # Past the join window, the next refusal from anywhere forgets it.
    FailedLogin.objects.update(at=timezone.now() - timedelta(minutes=121))
    assert join(campaign, "forged-c", "198.51.100.9", study=STUDY)[1].status_code == 403
    assert list(FailedLogin.objects.values_list("address", flat=True)) == ["198.51.100.0/24"]
    assert join(campaign, LATE, "192.0.2.3", study=STUDY)[1].status_code == 302
