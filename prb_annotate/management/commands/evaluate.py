"""``manage.py evaluate``: score a campaign's pairs with a reward model and store the run.

With ``--judge --as-annotator`` the causal LM answers the annotation questions instead, as a
model annotator kept apart from the humans (``campaigns/model_annotator.py``).
"""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from prb_annotate.campaigns.evaluating import accuracy_rows, evaluate_campaign
from prb_annotate.campaigns.model_annotator import annotate_campaign
from prb_annotate.formats.numbers import percent
from prb_annotate.models import Campaign


class Command(BaseCommand):
    help = "Score a campaign's validated / excluded / all pairs with a reward model."

    def add_arguments(self, parser: CommandParser) -> None:
        # evaluation/ is loaded by the command that runs, not by listing the commands.
        from evaluation.config import add_model_options
        from evaluation.endpoint import add_endpoint_options
        from evaluation.self_check import add_self_check_arguments

        parser.add_argument("--campaign", type=int, required=True)
        add_model_options(parser)
        parser.add_argument(
            "--name",
            default=None,
            help="the run's name on the pages and in the paper (default: the model's, a "
            "folder's base name, never its path; a name already taken is refused)",
        )
        parser.add_argument("--subset", choices=["validated", "excluded", "all"], default="all")
        parser.add_argument("--seed", type=int, default=0)
        add_self_check_arguments(parser, failing=" (nothing is stored)", kept="store")
        parser.add_argument(
            "--as-annotator",
            action="store_true",
            help="with --judge: answer the annotation questions (rubric fit, main difference) "
            "in both A/B orders, stored as a model annotator beside the humans",
        )
        parser.add_argument(
            "--whole-dataset",
            action="store_true",
            help="with --as-annotator: ask every pair of the campaign's dataset (gold, practice "
            "and qualification pairs set apart), for the prediction-powered estimate of a "
            "planned sample",
        )
        parser.add_argument(
            "--template",
            default=None,
            help="with --as-annotator: prompt template file (default: the project's own)",
        )
        add_endpoint_options(parser, needs="with --judge: ")

    def handle(self, *args: Any, **options: Any) -> None:
        campaign = Campaign.objects.filter(pk=options["campaign"]).first()
        if campaign is None:
            raise CommandError(f"no campaign with id {options['campaign']}")
        from evaluation.errors import EvaluationError

        if options["judge_endpoint"] and not options["judge"]:
            raise CommandError("--judge-endpoint serves a judge: add --judge")
        if options["as_annotator"]:
            self._annotate(campaign, options)
            return
        if options["template"] or options["whole_dataset"]:
            raise CommandError("--template and --whole-dataset go with --judge --as-annotator")
        if options["self_check"] < 0:
            raise CommandError(f"--self-check takes a number of pairs, not {options['self_check']}")
        try:
            run = evaluate_campaign(
                campaign,
                subset=options["subset"],
                name=options["name"],
                judge=options["judge"],
                self_check=options["self_check"],
                allow_flips=options["allow_flips"],
                **model_options(options),
            )
        except (EvaluationError, ValueError) as error:
            raise CommandError(str(error)) from error
        marks = " (random weights: its scores mean nothing)" if run.random_weights else ""
        self.stdout.write(f"Run {run.pk}, named {run.name!r}{marks}, on campaign {campaign.pk}")
        adjudicated = run.summary.get("audit", {}).get("adjudicated_pairs", 0)
        self.stdout.write(
            f"  subsets from the audit's verdicts; {adjudicated} pair(s) adjudicated by a manager"
        )
        for row in accuracy_rows(run):
            interval = f"[{percent(row.get('ci_low'))}, {percent(row.get('ci_high'))}]"
            paper = (
                f"[{percent(row.get('accuracy_ties_as_wrong_ci_low'))}, "
                f"{percent(row.get('accuracy_ties_as_wrong_ci_high'))}]"
            )
            self.stdout.write(
                f"  {row['subset']:<12} n={row.get('n', 0):<5}"
                f" accuracy {percent(row.get('accuracy'))} {interval}"
                f" ties {percent(row.get('tie_rate'))}"
                f" ties-as-wrong {percent(row.get('accuracy_ties_as_wrong'))} {paper}"
            )
        if run.summary.get("self_check"):
            from evaluation.results import self_check_line

            self.stdout.write(f"  {self_check_line(run.summary['self_check'])}")

    def _annotate(self, campaign: Campaign, options: dict[str, Any]) -> None:
        from evaluation.errors import EvaluationError

        if not options["judge"]:
            raise CommandError("--as-annotator needs --judge (a causal language model)")
        try:
            run = annotate_campaign(
                campaign,
                template=options["template"],
                whole_dataset=options["whole_dataset"],
                **model_options(options),
            )
        except (EvaluationError, ValueError) as error:
            raise CommandError(str(error)) from error
        self.stdout.write(
            f"Run #{run.pk}: {run.model_name} as a model annotator on campaign {campaign.pk}"
        )
        for question, counts in run.summary["questions"].items():
            self.stdout.write(
                f"  {question:<15} replies {counts['replies']}, parsed {counts['parsed']}, "
                f"unparsed {counts['unparsed']}; pairs consistent in both orders "
                f"{counts['pairs_consistent']}/{counts['pairs_parsed_in_both_orders']}"
            )


MODEL_OPTIONS = ("model", "mode", "top_k", "device", "dtype", "max_batch_tokens", "seed")


def model_options(options: dict[str, Any]) -> dict[str, Any]:
    """How to load and run the model: the same for a scoring run and a model annotator; a
    judge behind an endpoint is asked there instead (``evaluation/endpoint.py``)."""
    from evaluation.endpoint import endpoint_from_options  # plain Python, no torch

    chosen = {name: options[name] for name in MODEL_OPTIONS}
    endpoint = endpoint_from_options(options)
    if endpoint is not None:
        chosen["endpoint"] = endpoint
    return chosen
