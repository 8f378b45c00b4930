"""``manage.py audit --campaign ID --format text|json|html|long --out FILE``: the audit page
offline; ``long`` is the tidy ``rater, unit, question, value`` table of the answers the
agreement reads (CSV, docs/export.md).

``--format latex|markdown --out DIR``: the paper's files (``prb_annotate/paper/``): tables,
the methods paragraph, references and figures, written to DIR whole; without ``--out``, the
tables and the paragraph on standard output.
"""

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.contrib.staticfiles import finders
from django.core.management.base import BaseCommand, CommandError

from prb_annotate.audit import report as audit_report
from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.campaigns.leaderboard import LeaderboardError
from prb_annotate.exports.long_table import long_table_csv
from prb_annotate.formats import strictjson
from prb_annotate.models import Campaign
from prb_annotate.paper import bundle
from prb_annotate.paper.inputs import CorrelationsError, paper_numbers, read_correlations
from prb_annotate.paper.layout import DEFAULT as DEFAULT_COLUMNS
from prb_annotate.paper.layout import LAYOUTS

PAPER_FORMATS = bundle.FORMATS


class Command(BaseCommand):
    help = "Agreement and dataset-validity audit of a campaign, as text, JSON or HTML."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--campaign", type=int, required=True, help="campaign id")
        parser.add_argument(
            "--format", choices=("text", "json", "html", "long", *PAPER_FORMATS), default="text"
        )
        parser.add_argument(
            "--out",
            help="write to this file instead of standard output (latex, markdown: this folder)",
        )
        parser.add_argument(
            "--correlations",
            type=Path,
            help="latex, markdown: a table of this file, written by python -m evaluation "
            "correlate --out",
        )
        parser.add_argument(
            "--columns",
            choices=tuple(LAYOUTS),
            default=DEFAULT_COLUMNS,
            help="latex: lay the tables out for a one- or two-column paper (default "
            f"{DEFAULT_COLUMNS}: they fit a column of an ACL paper, and a NeurIPS page too)",
        )
        parser.add_argument(
            "--runs",
            default=None,
            help="latex, markdown: the reward-model runs the leaderboard ranks, as run ids "
            "separated by commas (default: the newest run of each model over all pairs, as on "
            "the evaluations page)",
        )
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
        correlations = None
        if options["correlations"] is not None:
            if options["format"] not in PAPER_FORMATS:
                raise CommandError("--correlations goes with --format latex or markdown.")
            try:
                correlations = read_correlations(options["correlations"])
            except CorrelationsError as error:
                raise CommandError(str(error)) from error
        run_ids = run_list(options["runs"])
        if run_ids and options["format"] not in PAPER_FORMATS:
            raise CommandError("--runs goes with --format latex or markdown.")
        if options["format"] == "long":
            self.write(long_table_csv(campaign), options)
            return
        report = campaign_audit(campaign, resamples=options["resamples"], seed=options["seed"])
        if options["format"] in PAPER_FORMATS:
            try:
                numbers = paper_numbers(campaign, report, correlations, run_ids=run_ids)
            except LeaderboardError as error:
                raise CommandError(f"--runs: {error}") from error
            self.write_paper(numbers, options)
            return
        self.write(render(report, options["format"]), options)

    def write(self, output: str, options: dict[str, Any]) -> None:
        if options["out"]:
            target = Path(options["out"])
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(output, encoding="utf-8")
            except OSError as error:
                raise CommandError(f"Cannot write the audit to {target}: {error}") from error
            self.stderr.write(f"Wrote {options['format']} audit to {options['out']}")
        else:
            self.stdout.write(output, ending="")

    def write_paper(self, numbers: dict[str, Any], options: dict[str, Any]) -> None:
        fmt = options["format"]
        if not options["out"]:
            self.stdout.write(bundle.texts(numbers, fmt, options["columns"]), ending="")
            return
        target = Path(options["out"])
        if target.exists() and not target.is_dir():
            raise CommandError(f"--out {target}: a file is there; the paper's files need a folder.")
        files = bundle.paper_files(numbers, (fmt,), options["columns"])
        try:
            bundle.write_folder(files, target)
        except OSError as error:
            raise CommandError(f"Cannot write the paper's files to {target}: {error}") from error
        main = "paper.tex" if fmt == "latex" else "paper.md"
        self.stderr.write(
            f"Wrote {len(files)} files to {target} ({main}, figures/, references.bib)"
        )


def run_list(text: str | None) -> list[int] | None:
    """``--runs 3,5,7`` as run ids; None when not given."""
    if text is None:
        return None
    try:
        found = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as error:
        raise CommandError(f"--runs takes run ids separated by commas, not {text!r}") from error
    if not found:
        raise CommandError("--runs needs at least one run id")
    return found


def render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return strictjson.dumps(report, indent=2, ensure_ascii=False) + "\n"
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
