"""Create an annotation campaign over an imported dataset and print its invite link."""

from argparse import ArgumentParser
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from prb_annotate.campaigns.lifecycle import CampaignSetupError, add_member, create_campaign
from prb_annotate.models import Campaign, Dataset


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


class Command(BaseCommand):
    help = "Create an annotation campaign; prints its id and invite link path."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--dataset", required=True, help="dataset name")
        parser.add_argument("--name", required=True, help="campaign name (unique)")
        parser.add_argument("--k", type=int, default=3, help="annotations per pair")
        parser.add_argument("--sample", type=int, help="annotate a seeded sample of N pairs")
        parser.add_argument("--seed", type=int, default=0, help="seed for sample and queue order")
        parser.add_argument("--gold-rate", type=float, default=0.0, help="share of gold items")
        parser.add_argument("--gold-ids", default="", help="comma-separated gold pair ids")
        parser.add_argument("--annotators", default="", help="comma-separated usernames")
        parser.add_argument("--quota", type=int, help="items per annotator")
        parser.add_argument("--reservation-minutes", type=int, help="reservation timeout")
        parser.add_argument("--completion-url", default="", help="e.g. a Prolific completion link")
        parser.add_argument("--activate", action="store_true", help="start it active")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = run(options)
        self.stdout.write(f"campaign {campaign.pk}: {campaign.name} ({campaign.status})")
        self.stdout.write(f"items: {campaign.items.count()}")
        self.stdout.write(f"invite link: /join/{campaign.invite_token}/")


def run(options: dict[str, Any]) -> Campaign:
    """The command's work, callable from tests with the parsed options."""
    try:
        dataset = Dataset.objects.get(name=options["dataset"])
    except Dataset.DoesNotExist as error:
        raise CommandError(f"no dataset named {options['dataset']!r}") from error
    usernames = _names(options.get("annotators") or "")
    users = {user.username: user for user in User.objects.filter(username__in=usernames)}
    unknown = [name for name in usernames if name not in users]
    if unknown:
        raise CommandError(f"unknown users: {', '.join(unknown)}")
    settings: dict[str, Any] = {}
    if options.get("quota") is not None:
        settings["quota_per_annotator"] = options["quota"]
    if options.get("reservation_minutes") is not None:
        settings["reservation_minutes"] = options["reservation_minutes"]
    if options.get("completion_url"):
        settings["completion_url"] = options["completion_url"]
    try:
        campaign = create_campaign(
            dataset,
            options["name"],
            k=options.get("k", 3),
            sample=options.get("sample"),
            gold_pair_ids=_names(options.get("gold_ids") or ""),
            gold_rate=options.get("gold_rate", 0.0),
            seed=options.get("seed", 0),
            activate=bool(options.get("activate")),
            **settings,
        )
    except CampaignSetupError as error:
        raise CommandError(str(error)) from error
    for name in usernames:
        add_member(campaign, users[name])
    return campaign
