"""``manage.py import_annotations FILE --campaign N [--mapping M]``: answers collected
elsewhere, into an external campaign (docs/external-annotations.md)."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from prb_annotate.campaigns.external.importing import import_answer_path, questions_of
from prb_annotate.campaigns.external.mapping import MappingError, parse_mapping
from prb_annotate.datasets.importing import ImportFailed
from prb_annotate.models import Campaign


class Command(BaseCommand):
    help = (
        "Import answers into an external campaign from a tidy table (.csv, .jsonl, .parquet; "
        "our own annotations export is one) or a Label Studio JSON export (.json). Nothing is "
        "written when any row is wrong."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the answer file")
        parser.add_argument("--campaign", type=int, required=True, help="external campaign id")
        parser.add_argument("--mapping", type=Path, help="JSON mapping of columns and values")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with id {options['campaign']}")
        if not options["path"].is_file():
            raise CommandError(f"no such file: {options['path']}")
        mapping = None
        if options["mapping"] is not None:
            try:
                mapping = parse_mapping(options["mapping"].read_bytes(), questions_of(campaign))
            except (OSError, MappingError) as error:
                raise CommandError(str(error)) from error
        try:
            report = import_answer_path(campaign, options["path"], mapping)
        except ImportFailed as error:
            raise CommandError(str(error)) from error
        self.stdout.write(report.summary)
