"""The portable backup of docs/deployment.md: ``dumpdata`` of a finished campaign, restored by
``loaddata`` into an emptied database, gives the same audit, verdict for verdict, on SQLite and
on PostgreSQL alike."""

from pathlib import Path

import pytest
from django.core.management import call_command

from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.datasets.importing import import_path
from prb_annotate.models import Annotation, Campaign
from prb_annotate.simulation.demo import create_simulated_campaign
from tests.conftest import make_user

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
# The exclusions of the documented command: rows Django makes again itself on migrate, and
# sessions that need not survive a restore.
EXCLUDED = ("contenttypes", "auth.permission", "admin.logentry", "sessions")


def verdicts(campaign: Campaign) -> dict[str, tuple[str, tuple[str, ...]]]:
    report = campaign_audit(campaign, resamples=0)
    return {
        row["external_id"]: (row["verdict"], tuple(row["reasons"])) for row in report["verdicts"]
    }


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_dumped_campaign_restores_with_the_same_audit(tmp_path: Path) -> None:
    dataset = import_path(FIXTURES / "prb_demo.jsonl", "prb-demo").dataset
    manager = make_user("manager", staff=True)
    campaign = create_simulated_campaign(dataset, manager, FIXTURES / "prb_demo_flaws.json")
    before = verdicts(campaign)
    answers = Annotation.objects.count()
    assert answers > 0
    assert before

    backup = tmp_path / "prb-backup.json.gz"
    exclude = [argument for name in EXCLUDED for argument in ("--exclude", name)]
    call_command("dumpdata", "--natural-foreign", *exclude, "--output", str(backup))
    call_command("flush", "--noinput")
    assert Annotation.objects.count() == 0
    call_command("loaddata", str(backup))

    restored = Campaign.objects.get(pk=campaign.pk)
    assert Annotation.objects.count() == answers
    assert verdicts(restored) == before
