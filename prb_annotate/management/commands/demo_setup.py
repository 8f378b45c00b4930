"""Demo data for a first look: the demo dataset, four users and an active campaign for them (with
two practice pairs and a three-pair qualification before its queue, a quota and the app's own
completion page, so a participant of its study link finishes), a Korean campaign over the same
pairs (its instructions and consent in Korean, English as their translation), plus a finished
campaign over
the same pairs answered by simulated annotators (see ``prb_annotate/simulation/``), audited and
scored with the three built-in baselines (length, profile overlap, random), so that its
evaluations page shows a leaderboard; a third, external campaign whose answers are imported from
the finished campaign's own annotations export (its audit is the same); and a finished
planned-sample campaign with a simulated model annotator over the whole dataset, so that its
audit shows the prediction-powered estimate.

Safe to run again: existing rows are kept, demo passwords are reset to the printed ones.
"""

import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.urls import reverse

from prb_annotate.campaigns.evaluating import accuracy_rows, evaluate_campaign
from prb_annotate.campaigns.external.copies import external_copy
from prb_annotate.campaigns.external.importing import import_answer_path
from prb_annotate.campaigns.lifecycle import add_member, create_campaign
from prb_annotate.datasets.importing import import_path
from prb_annotate.exports.export import export_split
from prb_annotate.formats.numbers import percent
from prb_annotate.models import Campaign, Dataset, EvaluationRun
from prb_annotate.simulation.demo import (
    PLANNED_CAMPAIGN,
    SIMULATED_CAMPAIGN,
    create_planned_campaign,
    create_simulated_campaign,
    qualification_settings,
)

DEMO_FIXTURE = Path(settings.BASE_DIR) / "fixtures" / "prb_demo.jsonl"
DEMO_FLAWS = Path(settings.BASE_DIR) / "fixtures" / "prb_demo_flaws.json"
# The built-in reward models that need no weights, scored on the finished campaign.
BASELINES = ("builtin:length", "builtin:profile-overlap", "builtin:random")
# Pairs each baseline also scores one at a time, so the run cards show a self-check.
DEMO_SELF_CHECK = 8
DEMO_QUALIFICATION = Path(settings.BASE_DIR) / "fixtures" / "prb_demo_qualification.json"
DEMO_DATASET = "prb-demo"
DEMO_CAMPAIGN = "PRB demo validation"
IMPORTED_CAMPAIGN = "PRB demo, answers imported from the simulated campaign's export"
# The demo campaign takes participants of this (made-up) Prolific study only.
DEMO_STUDY_ID = "demo-study"
# The pay the demo study states (settings page, Joining), which its paper repeats.
DEMO_PAY: dict[str, Any] = {"pay_amount": Decimal("9.00"), "pay_currency": "GBP", "pay_per": "hour"}
# Each participant of the demo campaign answers this many pairs, then goes to the app's own
# completion page (a real study points the completion URL at Prolific's).
DEMO_QUOTA = 5
# Asked on the join page (and of the demo's annotators on the consent page) before the first item.
DEMO_CONSENT = (
    "This is a demonstration study. Your answers are kept with a pseudonym, never your name, "
    "and are used only to audit the demo dataset.\n\n"
    "You may stop at any time; what you answered so far is kept."
)
DEMO_PARTICIPANT = "PROLIFIC_PID=demo-participant-1&STUDY_ID=demo-study&SESSION_ID=demo-session-1"
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

# The Korean campaign: the same pairs, its own instructions and consent in Korean, and the
# English ones as its translation for a participant who chooses English (docs/i18n.md).
KOREAN_CAMPAIGN = "PRB 데모 검증 (한국어)"
KOREAN_STUDY_ID = "demo-study-ko"
KOREAN_GUIDELINES = """\
## 응답 쌍을 평가하는 방법

1. **각 응답을 따로 평가하세요.** 이 사용자의 취향은 생각하지 말고 정확성, 관련성, 유용성을
   각각 점수로 매깁니다. 누구에게 주어도 괜찮다고 생각되면 4점이나 5점을 주세요.
2. **이 사용자에게 더 잘 맞는 응답을 고르세요.** 사용자의 루브릭, 직접 쓴 설명, 지난 게시물을
   근거로 판단합니다.
3. **두 응답을 가르는 주된 차이를 고르세요.** 개인 취향(둘 다 좋지만 이 사용자가 중시하는 문체,
   깊이, 어조, 초점이 다름), 전반적 품질(한쪽이 그냥 더 못함), 둘 다, 실질적 차이 없음 중에서
   고릅니다.

텍스트가 잘렸거나, 다른 언어로 쓰였거나, 불쾌한 내용이 있는 등 쌍이 깨져 있으면 사용 불가로
표시하세요.
"""
KOREAN_CONSENT = (
    "이 연구는 시연용입니다. 답변은 이름이 아닌 가명으로 보관되며, 데모 데이터셋을 검증하는 "
    "데에만 쓰입니다.\n\n"
    "언제든지 그만둘 수 있으며, 그때까지 답한 내용은 보관됩니다."
)


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

        base = f"http://{options['address']}"
        record_site_url(base)
        campaign = demo_campaign(
            dataset,
            DEMO_CAMPAIGN,
            manager,
            seed=2026,
            guidelines=DEMO_GUIDELINES,
            prolific_study_id=DEMO_STUDY_ID,
            consent_text=DEMO_CONSENT,
            **DEMO_PAY,
            **qualification_settings(DEMO_QUALIFICATION),
        )
        # Again on every run: the completion page is on the address served this time.
        campaign.quota_per_annotator = campaign.quota_per_annotator or DEMO_QUOTA
        campaign.completion_url = f"{base}{reverse('completed')}"
        campaign.save(update_fields=["quota_per_annotator", "completion_url"])
        add_member(campaign, manager, role="manager")
        for annotator in annotators:
            add_member(campaign, annotator)
        simulated = self.simulated_campaign(dataset, manager, options["flaws"])
        imported = self.imported_campaign(simulated, manager)
        planned = Campaign.objects.filter(name=PLANNED_CAMPAIGN).first()
        if planned is None:
            planned = create_planned_campaign(dataset, manager, options["flaws"])
        # Last, so that the other campaigns keep the numbers the README gives them.
        korean = self.korean_campaign(dataset, manager, base)
        self.print_logins(campaign, simulated, base)
        self.print_korean(korean, base)
        self.stdout.write(
            f"Campaign #{imported.pk} '{imported.name}' is external: its answers are campaign "
            f"#{simulated.pk}'s annotations export, imported (its audit matches #{simulated.pk}'s)."
        )
        self.stdout.write(
            f"Campaign #{planned.pk} '{planned.name}' is {planned.status}: a planned sample and "
            "a simulated model annotator (its audit shows the prediction-powered estimate)."
        )

    def korean_campaign(self, dataset: Dataset, manager: User, base: str) -> Campaign:
        """The demo's Korean campaign: its participants read every page in Korean unless they
        choose English in the header, which shows its English instructions."""
        campaign = demo_campaign(
            dataset,
            KOREAN_CAMPAIGN,
            manager,
            seed=2027,
            language="ko",
            guidelines=KOREAN_GUIDELINES,
            consent_text=KOREAN_CONSENT,
            translations={"en": {"guidelines": DEMO_GUIDELINES, "consent_text": DEMO_CONSENT}},
            prolific_study_id=KOREAN_STUDY_ID,
            quota_per_annotator=DEMO_QUOTA,
        )
        campaign.completion_url = f"{base}{reverse('completed')}"
        campaign.save(update_fields=["completion_url"])
        add_member(campaign, manager, role="manager")
        return campaign

    def print_korean(self, campaign: Campaign, base: str) -> None:
        ids = DEMO_PARTICIPANT.replace(DEMO_STUDY_ID, KOREAN_STUDY_ID)
        study = f"{base}{reverse('join', args=[campaign.invite_token])}?{ids}"
        self.stdout.write(
            f"Campaign #{campaign.pk} '{campaign.name}' speaks Korean to its participants "
            f"(the header's chooser switches language): {study}"
        )

    def simulated_campaign(self, dataset: Dataset, manager: User, flaws: Path) -> Campaign:
        campaign = Campaign.objects.filter(name=SIMULATED_CAMPAIGN).first()
        if campaign is None:
            campaign = create_simulated_campaign(
                dataset, manager, flaws, qualification_path=DEMO_QUALIFICATION
            )
        for model in BASELINES:
            if EvaluationRun.objects.filter(campaign=campaign, model_name=model).exists():
                continue
            run = evaluate_campaign(
                campaign, model=model, subset="all", resamples=1000, self_check=DEMO_SELF_CHECK
            )
            rows = ", ".join(
                f"{row['subset']} {percent(row.get('accuracy'))}" for row in accuracy_rows(run)
            )
            self.stdout.write(f"{model} on campaign #{campaign.pk}: accuracy {rows}")
        return campaign

    def imported_campaign(self, simulated: Campaign, manager: User) -> Campaign:
        """The external campaign made from the simulated one's own annotations export."""
        campaign = Campaign.objects.filter(name=IMPORTED_CAMPAIGN).first()
        if campaign is not None:
            return campaign
        campaign = external_copy(simulated, IMPORTED_CAMPAIGN, manager)
        with tempfile.TemporaryDirectory() as folder:
            export_split(simulated, Path(folder) / "export", subset="all", fmt="jsonl")
            report = import_answer_path(
                campaign, Path(folder) / "export" / "annotations.jsonl", imported_by=manager
            )
        self.stdout.write(report.summary)
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
        write(
            f"Its human-evaluation section for a paper (tables, methods, references, figures): "
            f"python manage.py audit --campaign {simulated.pk} --format latex --out out/paper/"
        )
        write(f"Open {base}/ and log in as:")
        write(f"  manager    {DEMO_MANAGER[0]} / {DEMO_MANAGER[1]}   (datasets, dashboard, audit)")
        for name, password in DEMO_ANNOTATORS:
            write(f"  annotator  {name} / {password}")
        signup = f"{base}{reverse('signup', args=[campaign.signup_token])}"
        write(f"Sign-up invite for new annotators: {signup}")
        study = f"{base}{reverse('join', args=[campaign.invite_token])}?{DEMO_PARTICIPANT}"
        quota, screening = campaign.quota_per_annotator, campaign.qualification_items.count()
        write(
            f"Study link as a Prolific participant ({quota} pairs each, after {screening} "
            f"practice and qualification pairs): {study}"
        )
        write(
            "  (in a private window; another PROLIFIC_PID is another participant, another "
            "STUDY_ID is refused; the join page asks for consent before the first item)"
        )
        write(f"Participants finish at the campaign's completion page: {campaign.completion_url}")
        write("")


def record_site_url(base: str) -> None:
    """Keep the address the demo is served at, so that the commands run beside it print links
    on that port (settings.SITE_URL reads it back when PRB_SITE_URL is not set)."""
    settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
    (settings.DATA_DIR / settings.SITE_URL_FILE).write_text(base + "\n")


def demo_campaign(
    dataset: Dataset, name: str, manager: User, *, seed: int, **settings: Any
) -> Campaign:
    """The demo campaign called ``name``: made the first time (three answers a pair, active),
    kept as it is on later runs."""
    campaign = Campaign.objects.filter(name=name).first()
    if campaign is None:
        campaign = create_campaign(
            dataset, name, k=3, seed=seed, created_by=manager, activate=True, **settings
        )
    return campaign
