"""Bonuses paid through Prolific's API are recorded (``BonusPayment``) and only what is owed is
paid: a second press pays nothing, a raised rule pays the difference, a double submit pays
once, a refused payment records nothing; the page shows what was paid and what is owed.
Decisions stopped part way by Prolific say what was sent before, and a rejection carries a
message Prolific takes (at least 100 characters, with a category).

``ProlificStandIn`` (``tests/support/prolific.py``) is the only part that is not the real
thing."""

import threading
from decimal import Decimal

import pytest
from django.db import connection
from django.test import override_settings
from django.urls import reverse

from prb_annotate.campaigns import prolific, prolific_api
from prb_annotate.models import BonusPayment, Campaign
from tests.support.prolific import STUDY, TOKEN, ProlificStandIn, send

BONUS_SETUP = "/api/v1/submissions/bonus-payments/"


def bonus_setups() -> list[dict[str, str]]:
    return [body for _, path, body in ProlificStandIn.calls if path == BONUS_SETUP]


def raise_rule(campaign: Campaign, per_item: str) -> None:
    rule = prolific.checked_bonus_rule({"per_item": per_item, "items_beyond": 1})
    prolific.set_bonus_rule(campaign, rule)


def test_paying_twice_pays_nothing_the_second_time(
    study: Campaign,
    manager,
    login,
    prolific_server: str,
) -> None:
    client = login(manager)
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        assert "Bonuses paid on Prolific to 1 participant." in send(client, study, "bonuses")
        again = send(client, study, "bonuses")
    assert "Nothing owed: every bonus due under the rule is paid already." in again
    assert bonus_setups() == [{"study_id": STUDY, "csv_bonuses": "PIDGOOD,0.20"}]
    (payment,) = BonusPayment.objects.filter(campaign=study)
    assert (payment.participant_id, payment.amount) == ("PIDGOOD", Decimal("0.20"))
    assert (payment.paid_by, payment.prolific_payment_id) == (manager, "bonus-1")
    assert prolific.bonuses_csv(study) == ""


def test_raising_the_rule_pays_only_the_difference(
    study: Campaign,
    manager,
    prolific_server: str,
) -> None:
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        assert prolific_api.pay_bonuses(study, by=manager).participants == 1
        raise_rule(study, "0.25")  # PIDGOOD's two items beyond 1: 0.50 due, 0.20 paid
        assert prolific.bonuses_csv(study) == "PIDGOOD,0.30\n"
        paid = prolific_api.pay_bonuses(study, by=manager)
    assert (paid.participants, paid.total) == (1, Decimal("0.30"))
    assert bonus_setups()[-1] == {"study_id": STUDY, "csv_bonuses": "PIDGOOD,0.30"}
    amounts = BonusPayment.objects.filter(campaign=study).values_list("amount", flat=True)
    assert sorted(amounts) == [Decimal("0.20"), Decimal("0.30")]


def test_the_page_shows_what_was_paid_and_what_is_owed(
    study: Campaign,
    manager,
    login,
    prolific_server: str,
) -> None:
    client = login(manager)
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        send(client, study, "bonuses")
        raise_rule(study, "0.25")
        page = client.get(reverse("campaign_prolific", args=[study.pk])).content.decode()
    assert '<td class="num">0.50</td><td class="num" data-paid="0.20">0.20</td>' in page
    assert '<td class="num" data-owed="0.30">0.30</td>' in page
    assert 'id="bonus-payments"' in page
    assert f"<td>{manager.get_username()}</td><td><code>bonus-1</code></td>" in page


def test_a_refused_payment_records_nothing(
    study: Campaign,
    manager,
    login,
    prolific_server: str,
) -> None:
    client = login(manager)
    # A 4xx answer is a refusal (a 5xx one leaves the payment unconfirmed: see
    # test_prolific_unconfirmed.py).
    ProlificStandIn.fail_paths = {"/api/v1/bulk-bonus-payments/bonus-1/pay/": 400}
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        page = send(client, study, "bonuses")
        assert "Prolific answered 400 to POST bulk-bonus-payments/bonus-1/pay/" in page
        assert not BonusPayment.objects.filter(campaign=study).exists()
        ProlificStandIn.fail_paths = {}
        assert "Bonuses paid on Prolific to 1 participant." in send(client, study, "bonuses")
    assert BonusPayment.objects.get(campaign=study).amount == Decimal("0.20")


@pytest.mark.django_db(transaction=True)
def test_a_double_submit_pays_once(
    study: Campaign,
    manager,
    prolific_server: str,
) -> None:
    """Two presses at once, each on its own connection: the campaign row's lock makes the
    second wait for the first's record, so it finds nothing owed."""
    start = threading.Barrier(2)
    results: list[int] = []

    def press() -> None:
        try:
            start.wait()
            results.append(prolific_api.pay_bonuses(study, by=manager).participants)
        finally:
            connection.close()

    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        presses = [threading.Thread(target=press) for _ in range(2)]
        for thread in presses:
            thread.start()
        for thread in presses:
            thread.join()
    assert sorted(results) == [0, 1]
    assert len(bonus_setups()) == 1
    assert BonusPayment.objects.filter(campaign=study).count() == 1


def test_decisions_stopped_part_way_say_what_was_sent_and_a_rerun_sends_the_rest(
    study: Campaign,
    manager,
    login,
    prolific_server: str,
) -> None:
    """The list runs PIDBAD (reject), PIDGONE (returned there), PIDGOOD (approve); Prolific
    fails on PIDGOOD's. The page says the rejection went and the approval did not, with
    Prolific's answer; pressing again sends only the approval."""
    client = login(manager)
    ProlificStandIn.refuse_paths = frozenset({"/api/v1/submissions/s-good/transition/"})
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        page = send(client, study, "decisions")
        assert (
            "Prolific failed part way. Sent before it failed: 0 approved, 1 rejected; "
            "1 not awaiting review there, left as they are; 1 not sent." in page
        )
        assert "Prolific answered 503 to POST submissions/s-good/transition/" in page
        assert [path for _, path, _ in ProlificStandIn.calls] == [
            "/api/v1/submissions/s-bad/transition/"
        ]
        ProlificStandIn.refuse_paths = frozenset()
        again = send(client, study, "decisions")
    assert "Sent to Prolific: 1 approved, 0 rejected; 2 not awaiting review there" in again
    assert [path for _, path, _ in ProlificStandIn.calls][1:] == [
        "/api/v1/submissions/s-good/transition/"
    ]


def test_a_rejection_carries_a_message_prolific_takes(
    study: Campaign,
    manager,
    login,
    prolific_server: str,
) -> None:
    client = login(manager)
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        send(client, study, "decisions")
    rejected = {path: body for _, path, body in ProlificStandIn.calls}[
        "/api/v1/submissions/s-bad/transition/"
    ]
    assert rejected["rejection_category"] == "LOW_EFFORT"
    assert len(rejected["message"]) >= 100
    assert rejected["message"].startswith(prolific_api.REJECTION_EXPLANATION)
    assert rejected["message"].endswith("Reason: excluded by a manager: copied answers.")
    assert len(prolific_api.rejection_message("")) >= 100
