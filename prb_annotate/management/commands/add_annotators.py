"""Add annotators to a campaign from the shell, making the accounts that do not exist yet.

Usernames come as arguments (``alice bob``, each optionally followed by an email) or from a
CSV file with a ``username`` column (and an ``email`` one). Each new account gets a one-time
"set your password" link, printed here as a full URL under ``--base-url`` (and mailed when
email is configured); existing accounts are only added. The same rules as the campaign page:
a list with any problem is refused whole, each problem naming its line.
"""

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from prb_annotate.campaigns.accounts import AnnotatorListError, add_annotators, parse_annotators
from prb_annotate.models import Campaign, Membership


class Command(BaseCommand):
    help = "Add annotators to a campaign, creating their accounts with one-time password links."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--campaign", type=int, required=True, help="campaign id")
        parser.add_argument("names", nargs="*", help="usernames, each optionally with an email")
        parser.add_argument("--csv", type=Path, help="a CSV file with a username column")
        parser.add_argument(
            "--base-url",
            help="the site's address, for the printed links (default: PRB_SITE_URL, or the "
            "address make demo serves)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with id {options['campaign']}")
        try:
            entries = parse_annotators(self._text(options))
            site = options.get("base_url") or settings.SITE_URL
            added = add_annotators(campaign, entries, site=site)
        except AnnotatorListError as error:
            raise CommandError("; ".join(error.problems)) from error
        for row in added:
            if row.created:
                mailed = " (mailed)" if row.emailed else ""
                self.stdout.write(f"{row.username}: new account, set a password at")
                self.stdout.write(f"  {row.set_password_url}{mailed}")
            elif row.already_member:
                self.stdout.write(f"{row.username}: a member already, unchanged")
            else:
                self.stdout.write(f"{row.username}: existing account, added")
        now = sum(not row.already_member for row in added)
        annotators = campaign.memberships.filter(role=Membership.Role.ANNOTATOR).count()
        self.stdout.write(
            f"{now} added; {annotators} annotator(s) in campaign {campaign.pk}: {campaign.name}"
        )

    def _text(self, options: dict[str, Any]) -> str:
        parts = [" ".join(options["names"])] if options["names"] else []
        if options.get("csv") is not None:
            if parts:
                raise CommandError("give usernames or --csv, not both")
            try:
                return str(options["csv"].read_text(encoding="utf-8-sig"))
            except (OSError, UnicodeDecodeError) as error:
                raise CommandError(f"{options['csv']}: cannot read ({error})") from error
        if not parts:
            raise CommandError("give usernames or --csv FILE")
        return parts[0]
