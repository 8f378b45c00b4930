"""Create an annotation campaign over an imported dataset and print its links (the study link
for Prolific and the sign-up invite), as full URLs under ``--base-url``.

With ``--half-width`` / ``--category-half-width`` the campaign is created on a planned sample
(``--plan-only`` prints the plan and creates nothing); ``--extend-sample ID`` tops up the
sample of an existing planned campaign after a pilot.
"""

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from prb_annotate.audit.sample_report import plan_lines
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns.lifecycle import CampaignSetupError, add_member, create_campaign
from prb_annotate.campaigns.planned_sample import (
    SamplePlanError,
    describe_extension,
    extend_sample,
    plan_for_dataset,
)
from prb_annotate.models import Campaign, Dataset


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


class Command(BaseCommand):
    help = "Create an annotation campaign; prints its id, study link and sign-up invite."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--dataset", help="dataset name (required to create)")
        parser.add_argument("--name", help="campaign name, unique (required to create)")
        parser.add_argument("--k", type=int, default=3, help="annotations per pair")
        parser.add_argument("--sample", type=int, help="annotate a seeded sample of N pairs")
        parser.add_argument("--seed", type=int, default=0, help="seed for sample and queue order")
        parser.add_argument("--gold-rate", type=float, default=0.0, help="share of gold items")
        parser.add_argument("--gold-ids", default="", help="comma-separated gold pair ids")
        parser.add_argument("--annotators", default="", help="comma-separated usernames")
        parser.add_argument("--quota", type=int, help="items per annotator")
        parser.add_argument("--reservation-minutes", type=int, help="reservation timeout")
        parser.add_argument("--completion-url", default="", help="e.g. a Prolific completion link")
        parser.add_argument(
            "--prolific-study-id",
            default="",
            help="invite links with another STUDY_ID make no account (docs/operations.md)",
        )
        parser.add_argument("--activate", action="store_true", help="start it active")
        parser.add_argument(
            "--external",
            action="store_true",
            help="no queue: answers come from files (manage.py import_annotations)",
        )
        parser.add_argument(
            "--base-url",
            default="http://127.0.0.1:8000",
            help="the site's address, for the printed links",
        )
        planned = parser.add_argument_group("planned sample (instead of --sample)")
        planned.add_argument(
            "--half-width", type=float, help="target half-width overall, e.g. 0.05 for ±5 points"
        )
        planned.add_argument(
            "--category-half-width", type=float, help="target half-width in every category"
        )
        planned.add_argument(
            "--expected-share",
            type=float,
            default=0.5,
            help="validated share expected (0.5 when unknown, or a pilot's)",
        )
        planned.add_argument(
            "--split-share",
            type=float,
            default=0.0,
            help="share of pairs expected to need one more annotator for a split vote",
        )
        planned.add_argument("--price", type=float, help="price per annotation, for the cost")
        planned.add_argument("--confidence", type=float, default=0.95, help="interval level")
        planned.add_argument(
            "--plan-only", action="store_true", help="print the plan; create nothing"
        )
        planned.add_argument(
            "--extend-sample",
            type=int,
            metavar="CAMPAIGN_ID",
            help="add pairs to this planned campaign to reach its targets at the shares seen",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options.get("extend_sample") is not None:
            campaign, added = extend(options["extend_sample"])
            self.stdout.write(describe_extension(added))
            self.stdout.write("\n".join(plan_lines(campaign.sample_plan or {})))
            return
        if options.get("plan_only"):
            self.stdout.write("\n".join(plan_lines(preview(options))))
            return
        campaign = run(options)
        self.stdout.write(f"campaign {campaign.pk}: {campaign.name} ({campaign.status})")
        self.stdout.write(f"items: {campaign.items.count()}")
        if campaign.external:
            self.stdout.write(
                f"external: import its answers with manage.py import_annotations FILE "
                f"--campaign {campaign.pk}"
            )
            return
        if campaign.sample_plan is not None:
            self.stdout.write("\n".join(plan_lines(campaign.sample_plan)))
        base = options.get("base_url", "http://127.0.0.1:8000").rstrip("/")
        self.stdout.write(f"study link (Prolific): {base}/join/{campaign.invite_token}/")
        self.stdout.write(f"sign-up invite: {base}/signup/{campaign.signup_token}/")


def sample_targets(options: dict[str, Any]) -> PlanTargets | None:
    """The planned-sample options, or None when no target half-width was given."""
    if options.get("half_width") is None and options.get("category_half_width") is None:
        return None
    return PlanTargets(
        half_width=options.get("half_width"),
        category_half_width=options.get("category_half_width"),
        expected_share=options.get("expected_share", 0.5),
        confidence=options.get("confidence", 0.95),
        split_share=options.get("split_share", 0.0),
        price_per_annotation=options.get("price"),
    )


def preview(options: dict[str, Any]) -> dict[str, Any]:
    """The plan ``run`` would create the campaign on, as stored (``--plan-only``)."""
    targets = sample_targets(options)
    if targets is None:
        raise CommandError("--plan-only needs --half-width or --category-half-width")
    dataset = _dataset(options)
    try:
        plan = plan_for_dataset(
            dataset, targets, options.get("k", 3), leave_out=_names(options.get("gold_ids") or "")
        )
    except SamplePlanError as error:
        raise CommandError(str(error)) from error
    return plan.as_json()


def extend(campaign_id: int) -> tuple[Campaign, dict[str, int]]:
    """``--extend-sample``: the campaign and the pairs added per category."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        raise CommandError(f"no campaign with id {campaign_id}")
    try:
        added = extend_sample(campaign)
    except SamplePlanError as error:
        raise CommandError(str(error)) from error
    return campaign, added


def _dataset(options: dict[str, Any]) -> Dataset:
    if not options.get("dataset"):
        raise CommandError("--dataset is required")
    try:
        return Dataset.objects.get(name=options["dataset"])
    except Dataset.DoesNotExist as error:
        raise CommandError(f"no dataset named {options['dataset']!r}") from error


def run(options: dict[str, Any]) -> Campaign:
    """The command's work, callable from tests with the parsed options."""
    dataset = _dataset(options)
    if not options.get("name"):
        raise CommandError("--name is required")
    usernames = _names(options.get("annotators") or "")
    users = {user.username: user for user in User.objects.filter(username__in=usernames)}
    unknown = [name for name in usernames if name not in users]
    if unknown:
        raise CommandError(
            f"unknown users: {', '.join(unknown)} (create their accounts with "
            "`manage.py add_annotators --campaign ID NAME ...` once the campaign exists)"
        )
    settings: dict[str, Any] = {}
    if options.get("quota") is not None:
        settings["quota_per_annotator"] = options["quota"]
    if options.get("reservation_minutes") is not None:
        settings["reservation_minutes"] = options["reservation_minutes"]
    if options.get("completion_url"):
        settings["completion_url"] = options["completion_url"]
    if options.get("prolific_study_id"):
        settings["prolific_study_id"] = options["prolific_study_id"]
    try:
        campaign = create_campaign(
            dataset,
            options["name"],
            k=options.get("k", 3),
            sample=options.get("sample"),
            sample_targets=sample_targets(options),
            gold_pair_ids=_names(options.get("gold_ids") or ""),
            gold_rate=options.get("gold_rate", 0.0),
            seed=options.get("seed", 0),
            activate=bool(options.get("activate")),
            external=bool(options.get("external")),
            **settings,
        )
    except (CampaignSetupError, SamplePlanError) as error:
        raise CommandError(str(error)) from error
    for name in usernames:
        add_member(campaign, users[name])
    return campaign
