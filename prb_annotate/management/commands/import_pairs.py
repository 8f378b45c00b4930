"""``manage.py import_pairs PATH --dataset NAME [--mapping FILE]``: import a file, an HF
snapshot folder or a folder ``datasets``' ``save_to_disk`` wrote; ``--hub ID [--config NAME]...
[--split NAME] [--revision REV]`` instead of PATH loads a Hub dataset through ``datasets``."""

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from prb_annotate.datasets.hub import HubUnreachable, import_hub
from prb_annotate.datasets.importing import ImportFailed, ImportReport, import_path
from prb_annotate.datasets.mapping import NO_MAPPING, ColumnMapping, MappingInvalid, parse_mapping
from prb_annotate.datasets.readers import SUFFIXES


class Command(BaseCommand):
    help = (
        f"Import preference pairs from a {', '.join(sorted(SUFFIXES))} file, from a folder "
        "laid out like a Hugging Face dataset snapshot (one sub-folder per config), or from a "
        "folder datasets' save_to_disk wrote. Records may be in our shape, chat messages, or "
        "two responses and a winner; --mapping names the file's own columns. --hub ID loads "
        "a dataset from the Hugging Face Hub through datasets instead, recording the commit "
        "read. Nothing is written when any record is wrong."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, nargs="?", help="a data file or a folder")
        parser.add_argument("--hub", default=None, help="a Hub dataset id (OWNER/NAME), not PATH")
        parser.add_argument(
            "--config",
            action="append",
            default=[],
            help="with --hub: a config to load, its name the records' category (repeat it)",
        )
        parser.add_argument("--split", default=None, help="with --hub: the split (default: all)")
        parser.add_argument(
            "--revision", default=None, help="with --hub: a branch, tag or commit (default: main)"
        )
        parser.add_argument("--dataset", required=True, help="dataset name (created if missing)")
        parser.add_argument(
            "--mapping",
            type=Path,
            default=None,
            help="a JSON file naming the file's columns and winner labels (docs/datasets.md)",
        )
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
        if (options["path"] is None) == (options["hub"] is None):
            raise CommandError("give either a PATH or --hub ID")
        hub_options = [f"--{name}" for name in ("config", "split", "revision") if options[name]]
        if options["hub"] is None and hub_options:
            raise CommandError(f"{', '.join(hub_options)} go with --hub")
        mapping = self.read_mapping(options["mapping"])
        try:
            report = self.run_import(options, mapping)
        except ImportFailed as exc:
            raise CommandError(str(exc)) from exc
        except HubUnreachable as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(report.summary)

    def run_import(self, options: dict[str, Any], mapping: ColumnMapping) -> ImportReport:
        common: dict[str, Any] = {
            "update": options["update"],
            "max_text_chars": options["max_text_chars"],
            "mapping": mapping,
            "progress": self.report_progress,
        }
        if options["hub"] is not None:
            return import_hub(
                options["hub"],
                options["dataset"],
                configs=options["config"],
                split=options["split"],
                revision=options["revision"],
                **common,
            )
        return import_path(options["path"], options["dataset"], **common)

    def read_mapping(self, path: Path | str | None) -> ColumnMapping:
        if path is None:
            return NO_MAPPING
        path = Path(path)
        try:
            return parse_mapping(path.read_bytes())
        except OSError as exc:
            raise CommandError(f"cannot read the mapping {path}: {exc.strerror}") from exc
        except MappingInvalid as exc:
            problems = "\n".join(f"  {problem}" for problem in exc.problems)
            raise CommandError(f"The mapping {path.name} cannot be used:\n{problems}") from exc

    def report_progress(self, records: int) -> None:
        # On stderr, so that stdout stays the one-line summary scripts read.
        self.stderr.write(f"{records:,} records read")
