"""A bulk bonus whose pay call Prolific never answered may have been paid, and Prolific's pay
call pays again each time it is sent: its shares stay recorded as sent, not confirmed, count
as paid so that no press sends them again, and wait for a manager's word (on the page or
through the API) after they looked it up on Prolific. A call that cannot have been carried out
(refused with a 4xx answer, never connected) still records nothing, and a press that finds its
shares withdrawn while it waited pays nothing, or records them again once Prolific paid.

``ProlificStandIn`` (``tests/support/prolific.py``) is the only part that is not the real
thing."""

import socket
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token

from prb_annotate.campaigns import prolific, prolific_api
from prb_annotate.models import BonusPayment, Campaign
from tests.support.prolific import TOKEN, ProlificStandIn, send

PAY = "/api/v1/bulk-bonus-payments/bonus-1/pay/"
SETUP = "/api/v1/submissions/bonus-payments/"


def states(campaign: Campaign) -> list[tuple[str, str, str]]:
    return list(
        BonusPayment.objects.filter(campaign=campaign)
        .order_by("pk")
        .values_list("participant_id", "prolific_payment_id", "state")
    )


def out_of_flight(campaign: Campaign) -> None:
    """The shares claimed long enough ago that no press can still be waiting for them."""
    BonusPayment.objects.filter(campaign=campaign).update(
        paid_at=timezone.now() - prolific_api.IN_FLIGHT - timedelta(seconds=1)
    )


def settle(client, campaign: Campaign, payment: str, outcome: str) -> str:
    url = reverse("campaign_prolific_settle", args=[campaign.pk])
    return client.post(url, {"payment": payment, "outcome": outcome}, follow=True).content.decode()


def failed_payment(campaign: Campaign, manager, address: str) -> prolific_api.ProlificError:
    """The error a press on "Pay the bonuses" fails with, Prolific's API at ``address``."""
    with (
        override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=address),
        pytest.raises(prolific_api.ProlificError) as failed,
    ):
        prolific_api.pay_bonuses(campaign, by=manager)
    return failed.value


def press(client: Client, campaign: Campaign, address: str) -> str:
    """A press on "Pay the bonuses", Prolific's API at ``address``; the page it lands on."""
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=address):
        return send(client, campaign, "bonuses")


@pytest.fixture
def lost(study: Campaign, manager, login, prolific_server: str) -> tuple[Client, str]:
    """The manager's client after a press whose pay call Prolific carried out but never
    answered, and the page it landed on (later calls are answered again)."""
    client = login(manager)
    ProlificStandIn.lose_paths = frozenset({PAY})
    page = press(client, study, prolific_server)
    ProlificStandIn.lose_paths = frozenset()
    return client, page


def test_a_lost_answer_to_the_pay_call_is_kept_unconfirmed_and_never_paid_again(
    study: Campaign, lost: tuple[Client, str], prolific_server: str
) -> None:
    client, page = lost
    assert "Prolific may have paid bulk bonus bonus-1 all the same" in page
    assert "its 1 share is recorded as sent, not confirmed, and will not be paid again" in page
    assert states(study) == [("PIDGOOD", "bonus-1", "unconfirmed")]
    again = press(client, study, prolific_server)
    assert "Nothing owed: every bonus due under the rule is paid already." in again
    assert [path for _, path, _ in ProlificStandIn.calls] == [SETUP, PAY]
    assert prolific.bonuses_csv(study) == ""
    assert 'id="bonus-unconfirmed"' in again
    assert "Its press may still be waiting for Prolific" in again  # just claimed: no buttons
    assert 'name="outcome"' not in again
    assert '<td data-state="unconfirmed"><span class="tag warn">sent, not confirmed</span>' in again


def test_a_manager_withdraws_an_unpaid_bulk_bonus_and_it_is_owed_again(
    study: Campaign, lost: tuple[Client, str], prolific_server: str
) -> None:
    client, _ = lost
    out_of_flight(study)
    page = client.get(reverse("campaign_prolific", args=[study.pk])).content.decode()
    assert 'name="outcome" value="unpaid"' in page
    done = settle(client, study, "bonus-1", "unpaid")
    assert "1 share of bulk bonus bonus-1 withdrawn: it is owed again." in done
    assert prolific.bonuses_csv(study) == "PIDGOOD,0.20\n"
    assert "Bonuses paid on Prolific to 1 participant." in press(client, study, prolific_server)
    assert states(study) == [("PIDGOOD", "bonus-2", "paid")]


def test_a_manager_records_a_bulk_bonus_prolific_paid(
    study: Campaign, lost: tuple[Client, str]
) -> None:
    client, _ = lost
    out_of_flight(study)
    done = settle(client, study, "bonus-1", "paid")
    assert "1 share of bulk bonus bonus-1 recorded as paid." in done
    assert states(study) == [("PIDGOOD", "bonus-1", "paid")]
    assert 'id="bonus-unconfirmed"' not in done
    # Said twice (a double submit): nothing is left to settle, and the page says why.
    twice = settle(client, study, "bonus-1", "unpaid")
    assert "No share of bulk bonus bonus-1 is waiting for your word" in twice
    assert states(study) == [("PIDGOOD", "bonus-1", "paid")]


def test_shares_a_press_may_still_be_waiting_for_are_not_settled(
    study: Campaign, lost: tuple[Client, str]
) -> None:
    """A press waits up to each call's timeout: withdrawing its claim meanwhile would let a
    second press pay the same shares while the first is still being paid."""
    client, _ = lost
    page = settle(client, study, "bonus-1", "unpaid")
    assert "its press may still be waiting for Prolific" in page
    assert states(study) == [("PIDGOOD", "bonus-1", "unconfirmed")]


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_server_error_on_the_pay_call_may_have_paid(
    study: Campaign, manager, prolific_server: str, status: int
) -> None:
    """A proxy in front of Prolific may answer 5xx after passing the call on."""
    ProlificStandIn.fail_paths = {PAY: status}
    failure = failed_payment(study, manager, prolific_server)
    assert f"Prolific answered {status} to POST bulk-bonus-payments/bonus-1/pay/" in str(failure)
    assert failure.maybe_done
    assert states(study) == [("PIDGOOD", "bonus-1", "unconfirmed")]


def test_a_refusal_of_the_pay_call_records_nothing(
    study: Campaign, manager, prolific_server: str
) -> None:
    ProlificStandIn.fail_paths = {PAY: 402}
    assert not failed_payment(study, manager, prolific_server).maybe_done
    assert states(study) == []


def withdrawn_now(campaign: Campaign, payment: str) -> Callable[[], None]:
    """A manager's withdrawal of the press's shares, as if the press had outlived IN_FLIGHT,
    run by the stand-in (on its own connection) while the press waits for its answer."""

    def withdraw() -> None:
        try:
            out_of_flight(campaign)
            assert prolific_api.settle(campaign, payment, paid=False) == 1
        finally:
            connection.close()

    return withdraw


@pytest.mark.django_db(transaction=True)
def test_a_press_whose_shares_were_withdrawn_during_the_set_up_pays_nothing(
    study: Campaign, manager, prolific_server: str
) -> None:
    """It once sent the pay call all the same, with the shares owed again: a second press
    then paid them twice."""
    ProlificStandIn.before_paths = {SETUP: withdrawn_now(study, "")}
    failure = failed_payment(study, manager, prolific_server)
    assert "The shares were withdrawn while Prolific set bulk bonus bonus-1 up" in str(failure)
    assert [path for _, path, _ in ProlificStandIn.calls] == [SETUP]  # no pay call
    assert states(study) == []
    assert prolific.bonuses_csv(study) == "PIDGOOD,0.20\n"


@pytest.mark.django_db(transaction=True)
def test_shares_withdrawn_while_the_pay_call_was_out_are_recorded_paid_again(
    study: Campaign, manager, prolific_server: str
) -> None:
    ProlificStandIn.before_paths = {PAY: withdrawn_now(study, "bonus-1")}
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        assert prolific_api.pay_bonuses(study, by=manager).participants == 1
    assert states(study) == [("PIDGOOD", "bonus-1", "paid")]
    assert prolific.bonuses_csv(study) == ""  # not owed again


def test_a_prolific_that_cannot_be_reached_records_nothing(
    study: Campaign,
    manager,
) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    # Nothing listens there now: the connection is refused before anything is sent.
    failure = failed_payment(study, manager, f"http://127.0.0.1:{port}/api/v1/")
    assert "Prolific could not be reached" in str(failure)
    assert not failure.maybe_done
    assert states(study) == []
    assert prolific.bonuses_csv(study) == "PIDGOOD,0.20\n"


def test_the_api_lists_the_payments_and_settles_an_unconfirmed_one(
    study: Campaign,
    manager,
    prolific_server: str,
) -> None:
    ProlificStandIn.lose_paths = frozenset({PAY})
    assert failed_payment(study, manager, prolific_server).maybe_done
    token, _ = Token.objects.get_or_create(user=manager)
    client = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
    listed = client.get(f"/api/campaigns/{study.pk}/prolific/payments/")
    assert listed.status_code == 200
    (row,) = listed.json()
    assert {key: row[key] for key in ("participant_id", "amount", "state")} == {
        "participant_id": "PIDGOOD",
        "amount": "0.20",
        "state": "unconfirmed",
    }
    assert (row["prolific_payment_id"], row["paid_by"]) == ("bonus-1", manager.username)
    settle_url = f"/api/campaigns/{study.pk}/prolific/payments/settle/"
    body = {"prolific_payment_id": "bonus-1", "paid": True}
    assert (
        client.post(settle_url, body, content_type="application/json").status_code == 404
    )  # still in flight
    out_of_flight(study)
    answer = client.post(settle_url, body, content_type="application/json")
    assert (answer.status_code, answer.json()) == (200, {"settled": 1})
    assert client.post(settle_url, body, content_type="application/json").status_code == 404
    assert (
        client.post(
            settle_url, {"prolific_payment_id": "bonus-1"}, content_type="application/json"
        ).status_code
        == 400
    )
    assert states(study) == [("PIDGOOD", "bonus-1", "paid")]
    assert Decimal(prolific.paid_bonuses(study)["PIDGOOD"]) == Decimal("0.20")


def test_the_guide_states_how_long_a_press_may_wait() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "qualification.md").read_text()
    minutes = int(prolific_api.IN_FLIGHT.total_seconds() // 60)
    assert f"For\n  the first {minutes} minutes after a press" in guide
