"""The Prolific tests' study: a campaign over a Prolific study whose three participants passed
the qualification; ``good`` answered three items, ``bad`` three and was excluded, ``gone``
holds one and returned the study on Prolific. ``prolific_server`` serves the stand-in of
Prolific's API (``tests/support/prolific.py``)."""

from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User

from prb_annotate.audit.exclusions import exclude_annotator
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Campaign
from tests.support.campaigns import submit_form
from tests.support.prolific import STUDY, ProlificStandIn, prolific_stand_in
from tests.support.qualification import pass_first, screening_campaign


@pytest.fixture
def prolific_server() -> Iterator[str]:
    with prolific_stand_in() as base:
        yield base


@pytest.fixture
def study(dataset, manager) -> Campaign:
    campaign = screening_campaign(
        dataset, bonus_rule={"per_item": "0.10", "items_beyond": 1}, prolific_study_id=STUDY
    )
    people = {name: User.objects.create_user(name) for name in ("good", "bad", "gone")}
    for name, user in people.items():
        add_member(campaign, user, participant_id=f"PID{name.upper()}")
        pass_first(campaign, user)
    for name in ("good", "bad"):
        for _ in range(3):
            assignment = next_assignment(campaign, people[name])
            assert assignment is not None
            submit_form(assignment)
    exclude_annotator(campaign, people["bad"], "copied answers", by=manager)
    assert next_assignment(campaign, people["gone"]) is not None  # held, never submitted
    ProlificStandIn.submissions = [
        {"id": "s-good", "participant_id": "PIDGOOD", "status": "AWAITING REVIEW"},
        {"id": "s-bad", "participant_id": "PIDBAD", "status": "AWAITING REVIEW"},
        {"id": "s-gone", "participant_id": "PIDGONE", "status": "RETURNED"},
    ]
    return campaign
