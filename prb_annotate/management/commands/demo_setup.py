"""Demo data for a first look: the demo dataset, four users and an active campaign for them
(two practice pairs and a three-pair qualification before its queue), plus a finished campaign
over the same pairs answered by simulated annotators (see ``prb_annotate/simulation/``),
audited and scored with the length baseline.

Safe to run again: existing rows are kept, demo passwords are reset to the printed ones.
"""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from prb_annotate.campaigns.evaluating import accuracy_rows, evaluate_campaign
from prb_annotate.campaigns.lifecycle import add_member, create_campaign
from prb_annotate.datasets.importing import import_path
from prb_annotate.formatting import percent
from prb_annotate.models import Campaign, Dataset, EvaluationRun
from prb_annotate.simulation.demo import (
    SIMULATED_CAMPAIGN,
    create_simulated_campaign,
    qualification_settings,
)

DEMO_FIXTURE = Path(settings.BASE_DIR) / "fixtures" / "prb_demo.jsonl"
DEMO_FLAWS = Path(settings.BASE_DIR) / "fixtures" / "prb_demo_flaws.json"
DEMO_QUALIFICATION = Path(settings.BASE_DIR) / "fixtures" / "prb_demo_qualification.json"
LENGTH_BASELINE = "builtin:length"
DEMO_DATASET = "prb-demo"
DEMO_CAMPAIGN = "PRB demo validation"
DEMO_MANAGER = ("manager", "manager-demo-pass")
DEMO_ANNOTATORS = [
    ("alice", "alice-demo-pass"),
    ("bob", "bob-demo-pass"),
    ("carol", "carol-demo-pass"),
]
DEMO_GUIDELINES = """\
## How to judge a pair

1. **Rate each response on its own** for correctness, relevance and helpfulness, ignoring
   what this particular user prefers. A 4 or 5 means you would be happy to give it to anyone.
2. **Pick the response that fits this user** best, using their rubric, narrative and past posts.
3. **Say what mainly separates them**: personal preference (both are good, they differ in style,
   depth, tone or focus that this user cares about), general quality (one is simply worse),
   both, or no real difference.

Flag a pair as unusable if it is broken (truncated text, wrong language, offensive content).
"""


def ensure_user(username: str, password: str, *, staff: bool = False) -> User:
    user, _ = User.objects.get_or_create(username=username)
    user.is_staff = staff
    user.is_superuser = staff
    user.set_password(password)
    user.save()
    return user


class Command(BaseCommand):
    help = "Create the demo dataset, demo users and an active demo campaign (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--fixture", type=Path, default=DEMO_FIXTURE)
        parser.add_argument(
            "--flaws",
            type=Path,
            default=DEMO_FLAWS,
            help="what careful annotators answer to the fixture's flawed pairs",
        )
        parser.add_argument(
            "--address",
            default="127.0.0.1:8000",
            help="host:port the server will listen on, for the printed links",
        )

    @transaction.atomic
    def handle(self, *args: Any, **options: Any) -> None:
        dataset = Dataset.objects.filter(name=DEMO_DATASET).first()
        if dataset is None:
            report = import_path(options["fixture"], DEMO_DATASET)
            dataset = report.dataset
            self.stdout.write(f"Imported {options['fixture'].name}: {report.summary}")
        manager = ensure_user(*DEMO_MANAGER, staff=True)
        annotators = [ensure_user(name, password) for name, password in DEMO_ANNOTATORS]

        campaign = Campaign.objects.filter(name=DEMO_CAMPAIGN).first()
        if campaign is None:
            campaign = create_campaign(
                dataset,
                DEMO_CAMPAIGN,
                k=3,
                seed=2026,
                created_by=manager,
                guidelines=DEMO_GUIDELINES,
                activate=True,
                **qualification_settings(DEMO_QUALIFICATION),
            )
        add_member(campaign, manager, role="manager")
        for annotator in annotators:
            add_member(campaign, annotator)
        simulated = self.simulated_campaign(dataset, manager, options["flaws"])
        self.print_logins(campaign, simulated, f"http://{options['address']}")

    def simulated_campaign(self, dataset: Dataset, manager: User, flaws: Path) -> Campaign:
        campaign = Campaign.objects.filter(name=SIMULATED_CAMPAIGN).first()
        if campaign is None:
            campaign = create_simulated_campaign(
                dataset, manager, flaws, qualification_path=DEMO_QUALIFICATION
            )
        if not EvaluationRun.objects.filter(campaign=campaign, model_name=LENGTH_BASELINE).exists():
            run = evaluate_campaign(campaign, model=LENGTH_BASELINE, subset="all", resamples=1000)
            rows = ", ".join(
                f"{row['subset']} {percent(row.get('accuracy'))}" for row in accuracy_rows(run)
            )
            self.stdout.write(f"Length baseline on campaign #{campaign.pk}: accuracy {rows}")
        return campaign

    def print_logins(self, campaign: Campaign, simulated: Campaign, base: str) -> None:
        write = self.stdout.write
        write("")
        write(f"Demo campaign #{campaign.pk} '{campaign.name}' is {campaign.status}.")
        write(
            "Its annotators start with two practice pairs and a three-pair qualification "
            "(the dashboard links to them)."
        )
        write(
            f"Campaign #{simulated.pk} '{simulated.name}' is {simulated.status}: answered by "
            "simulated annotators, audited and scored (see its audit, export and evaluations)."
        )
        write(f"Open {base}/ and log in as:")
        write(f"  manager    {DEMO_MANAGER[0]} / {DEMO_MANAGER[1]}   (datasets, dashboard, audit)")
        for name, password in DEMO_ANNOTATORS:
            write(f"  annotator  {name} / {password}")
        write(f"Invite link for new annotators: {base}/join/{campaign.invite_token}/")
        write("")
