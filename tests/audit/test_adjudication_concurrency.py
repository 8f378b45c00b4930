"""Managers deciding the same pair at once, on a real database (SQLite's immediate
transactions, or PostgreSQL's row lock on the item): every decision is recorded, none is lost
or half-written, and exactly one stays current. Threads use connections of their own."""

import pytest
from django.contrib.auth.models import User

from prb_annotate.audit import decisions
from prb_annotate.models import Adjudication, Dataset
from tests.conftest import make_pairs
from tests.support.audit import add_item, make_campaign
from tests.support.concurrency import run_threads

MANAGERS = 8
ROUNDS = 5


@pytest.mark.django_db(transaction=True)
def test_it_keeps_exactly_one_current_decision_when_managers_decide_at_once() -> None:
    dataset = Dataset.objects.create(name="decided")
    make_pairs(dataset, 1)
    item = add_item(make_campaign(dataset), dataset.pairs.get())
    managers = [User.objects.create(username=f"lead{n}", is_staff=True) for n in range(MANAGERS)]

    def decide(index: int) -> None:
        for round_ in range(ROUNDS):
            decision = "validated" if (index + round_) % 2 else "excluded"
            decisions.adjudicate(
                item,
                decision,
                "adjudicator_judgement",
                note=f"{index}-{round_}",
                by=managers[index],
            )

    assert run_threads(MANAGERS, decide) == []
    rows = Adjudication.objects.filter(item=item)
    assert rows.count() == MANAGERS * ROUNDS
    assert rows.filter(is_current=True).count() == 1
    # The current one is the last recorded.
    assert rows.filter(is_current=True).get() == rows.order_by("-id").first()
