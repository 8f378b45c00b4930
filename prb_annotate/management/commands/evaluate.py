"""``manage.py evaluate``: score a campaign's pairs with a reward model and store the run."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from prb_annotate.campaigns.evaluating import accuracy_rows, evaluate_campaign
from prb_annotate.formatting import percent
from prb_annotate.models import Campaign


class Command(BaseCommand):
    help = "Score a campaign's validated / excluded / all pairs with a reward model."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--campaign", type=int, required=True)
        parser.add_argument("--model", required=True, help="local folder or hub id")
        parser.add_argument("--subset", choices=["validated", "excluded", "all"], default="all")
        parser.add_argument("--mode", choices=["question", "profile"], default="question")
        parser.add_argument("--top-k", type=int, default=10)
        parser.add_argument("--judge", action="store_true", help="a generative pairwise judge")
        parser.add_argument("--device", default=None)
        parser.add_argument("--dtype", default=None)
        parser.add_argument("--max-batch-tokens", type=int, default=None)
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with id {options['campaign']}")
        from evaluation.errors import EvaluationError

        try:
            run = evaluate_campaign(
                campaign,
                model=options["model"],
                subset=options["subset"],
                mode=options["mode"],
                top_k=options["top_k"],
                judge=options["judge"],
                device=options["device"],
                dtype=options["dtype"],
                max_batch_tokens=options["max_batch_tokens"],
                seed=options["seed"],
            )
        except (EvaluationError, ValueError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(f"Run #{run.pk}: {run.model_name} on campaign {campaign.pk}")
        adjudicated = run.summary.get("audit", {}).get("adjudicated_pairs", 0)
        self.stdout.write(
            f"  subsets from the audit's verdicts; {adjudicated} pair(s) adjudicated by a manager"
        )
        for row in accuracy_rows(run):
            interval = f"[{percent(row.get('ci_low'))}, {percent(row.get('ci_high'))}]"
            self.stdout.write(
                f"  {row['subset']:<12} n={row.get('n', 0):<5}"
                f" accuracy {percent(row.get('accuracy'))} {interval}"
                f" ties {percent(row.get('tie_rate'))}"
            )
