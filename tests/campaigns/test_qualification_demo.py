"""The demo: campaign #1 has two practice pairs and a three-pair qualification from the demo
dataset before its queue; in the finished campaign the careless simulated participant fails the
qualification twice and is screened out, and Prolific's lists show every kind of row."""

import csv
import io
from io import StringIO

from django.core.management import call_command

from prb_annotate.campaigns import prolific
from prb_annotate.campaigns.qualification import flow, setup
from prb_annotate.management.commands.demo_setup import DEMO_CAMPAIGN
from prb_annotate.models import Assignment, Campaign, QualificationRecord
from prb_annotate.simulation.demo import SIMULATED_CAMPAIGN


def test_it_sets_up_practice_qualification_and_a_screened_out_participant(db) -> None:
    call_command("demo_setup", stdout=StringIO())
    active = Campaign.objects.get(name=DEMO_CAMPAIGN)
    practice = [item.pair.external_id for item in setup.items_of(active, "practice")]
    qualification = [item.pair.external_id for item in setup.items_of(active, "qualification")]
    assert practice == ["art-01", "soc-02"]
    assert qualification == ["art-03", "life-01", "life-04"]
    assert all(item.explanations for item in active.qualification_items.all())
    assert not active.items.filter(pair__external_id__in=practice + qualification).exists()
    alice = active.memberships.get(user__username="alice").user
    assert flow.next_step(active, alice).stage == flow.Stage.PRACTICE

    finished = Campaign.objects.get(name=SIMULATED_CAMPAIGN)
    outcomes = dict(
        QualificationRecord.objects.filter(membership__campaign=finished).values_list(
            "membership__user__username", "outcome"
        )
    )
    assert outcomes.pop("simulated-careless") == "failed"
    assert set(outcomes.values()) == {"passed"}
    assert len(outcomes) == 6
    assert not Assignment.objects.filter(
        campaign=finished, annotator__username="simulated-careless"
    ).exists()
    rows = list(csv.DictReader(io.StringIO(prolific.approvals_csv(finished))))
    decisions = {row["participant_id"]: row["decision"] for row in rows}
    assert decisions["simulated-careless"] == "screened_out"
    assert decisions["simulated-fails-gold"] == "reject"
    assert decisions["simulated-careful-1"] == "approve"
    bonuses = prolific.bonuses_csv(finished).splitlines()
    assert any(line.startswith("simulated-careful-1,") for line in bonuses)
