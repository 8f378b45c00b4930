"""``manage.py export_split --campaign ID --subset validated --format jsonl --out DIR``."""

import argparse
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from prb_annotate.exports.export import FORMATS, SUBSETS, export_split
from prb_annotate.exports.processes import default_workers
from prb_annotate.exports.slices import ExportError
from prb_annotate.models import Campaign


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


class Command(BaseCommand):
    help = (
        "Export a campaign's validated, excluded or all pairs: one folder per category in the "
        "dataset's own schema, the annotations (pseudonymised), manifest.json with counts, "
        "agreement and sha256 of every file, and a README.md dataset card."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", type=int, required=True, help="campaign id")
        parser.add_argument(
            "--subset",
            choices=SUBSETS,
            default="validated",
            help="validated pairs, excluded ones (failed or undecided), or all (default: "
            "validated)",
        )
        parser.add_argument("--format", choices=FORMATS, default="jsonl", dest="fmt")
        parser.add_argument("--out", type=Path, required=True, help="folder to create")
        parser.add_argument(
            "--with-validation",
            action="store_true",
            help="add a validation object to each record (annotations, majority answers, "
            "quality medians, verdict and reasons)",
        )
        parser.add_argument(
            "--overwrite", action="store_true", help="replace the folder if it is not empty"
        )
        parser.add_argument(
            "--workers",
            type=positive_int,
            default=default_workers(),
            help="processes that audit and encode the pairs, a slice at a time (default: one "
            "per CPU core, at most 4; 1 does everything in this process)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.select_related("dataset").filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"No campaign with id {options['campaign']}.")
        try:
            manifest = export_split(
                campaign,
                options["out"],
                subset=options["subset"],
                fmt=options["fmt"],
                with_validation=options["with_validation"],
                overwrite=options["overwrite"],
                workers=options["workers"],
            )
        except ExportError as exc:
            raise CommandError(str(exc)) from exc
        counts = manifest["counts"]
        self.stdout.write(
            f"Exported {counts['exported_pairs']} {options['subset']} pairs "
            f"({len(manifest['configs'])} categories) and {counts['annotations']} annotations "
            f"to {options['out']}"
        )
        for entry in manifest["files"]:
            self.stdout.write(f"  {entry['path']}: {entry['rows']} rows, sha256 {entry['sha256']}")
