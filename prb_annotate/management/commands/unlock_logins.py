"""``manage.py unlock_logins --username NAME --address ADDR --all``: lift a login lockout."""

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from prb_annotate.security.logins import logins, unlock, unlock_all


class Command(BaseCommand):
    help = (
        "Forget the failed logins of a username or client address, so that it can log in "
        "again at once; without options, list the usernames and addresses with failures."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--username", action="append", default=[], help="repeatable")
        parser.add_argument("--address", action="append", default=[], help="repeatable")
        parser.add_argument("--all", action="store_true", help="forget every failed login")

    def handle(self, *args: Any, **options: Any) -> None:
        usernames, addresses = options["username"], options["address"]
        if options["all"] and (usernames or addresses):
            raise CommandError("--all cannot be combined with --username or --address.")
        if options["all"]:
            removed = unlock_all()
        elif usernames or addresses:
            removed = unlock(usernames=usernames, addresses=addresses)
        else:
            self._list()
            return
        self.stdout.write(f"Unlocked: {removed} failed login(s) forgotten.")

    def _list(self) -> None:
        rows = logins().order_by("username", "address", "at")
        if not rows.exists():
            self.stdout.write("No failed logins recorded.")
        for row in rows:
            self.stdout.write(f"{row.at:%Y-%m-%d %H:%M:%S}  {row.username}  {row.address}")
