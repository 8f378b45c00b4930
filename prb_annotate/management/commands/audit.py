"""``manage.py audit --campaign ID --format text|json|html|long --out FILE``: the audit page
offline; ``long`` is the tidy ``rater, unit, question, value`` table of the answers the
agreement reads (CSV, docs/export.md)."""

import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.contrib.staticfiles import finders
from django.core.management.base import BaseCommand, CommandError

from prb_annotate.audit import report as audit_report
from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.exports.long_table import long_table_csv
from prb_annotate.models import Campaign


class Command(BaseCommand):
    help = "Agreement and dataset-validity audit of a campaign, as text, JSON or HTML."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--campaign", type=int, required=True, help="campaign id")
        parser.add_argument("--format", choices=("text", "json", "html", "long"), default="text")
        parser.add_argument("--out", help="write to this file instead of standard output")
        parser.add_argument(
            "--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)"
        )
        parser.add_argument(
            "--seed", type=int, default=None, help="bootstrap seed (default: the campaign's)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            campaign = Campaign.objects.select_related("dataset").get(pk=options["campaign"])
        except Campaign.DoesNotExist as error:
            raise CommandError(f"No campaign with id {options['campaign']}.") from error
        if options["resamples"] < 0:
            raise CommandError("--resamples must be 0 or more.")
        if options["format"] == "long":
            self.write(long_table_csv(campaign), options)
            return
        report = campaign_audit(campaign, resamples=options["resamples"], seed=options["seed"])
        self.write(render(report, options["format"]), options)

    def write(self, output: str, options: dict[str, Any]) -> None:
        if options["out"]:
            Path(options["out"]).write_text(output, encoding="utf-8")
            self.stderr.write(f"Wrote {options['format']} audit to {options['out']}")
        else:
            self.stdout.write(output, ending="")


def render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if fmt == "html":
        return audit_report.render_html(
            report,
            standalone_css=_static_text("prb_annotate/app.css"),
            standalone_js=_static_text("prb_annotate/audit.js"),
        )
    return audit_report.render_text(report)


def _static_text(*names: str) -> str:
    """The page's static files, inlined so that the HTML file works offline, on its own."""
    texts = []
    for name in names:
        found = finders.find(name)
        path = found[0] if isinstance(found, list) else found
        texts.append(Path(path).read_text(encoding="utf-8") if path else "")
    return "\n".join(texts)
