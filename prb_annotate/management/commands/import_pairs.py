"""``manage.py import_pairs PATH --dataset NAME``: import a file or an HF snapshot folder."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from prb_annotate.datasets.importing import ImportFailed, import_path


class Command(BaseCommand):
    help = (
        "Import preference pairs from a .jsonl, .json, .csv or .parquet file, or from a folder "
        "laid out like a Hugging Face dataset snapshot (one sub-folder per config). Nothing is "
        "written when any record is wrong."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="a data file or a snapshot folder")
        parser.add_argument("--dataset", required=True, help="dataset name (created if missing)")
        parser.add_argument(
            "--update",
            action="store_true",
            help="replace records whose id exists with different content (default: error)",
        )
        parser.add_argument(
            "--max-text-chars",
            type=int,
            default=None,
            help="longest text accepted (default: settings.PRB_MAX_TEXT_CHARS)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["max_text_chars"] is not None and options["max_text_chars"] < 1:
            raise CommandError("--max-text-chars must be a positive number")
        try:
            report = import_path(
                options["path"],
                options["dataset"],
                update=options["update"],
                max_text_chars=options["max_text_chars"],
            )
        except ImportFailed as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(report.summary)
