"""Create an annotation campaign over an imported dataset and print its links (the study link
for Prolific and the sign-up invite), as full URLs under ``--base-url``.

With ``--half-width`` / ``--category-half-width`` the campaign is created on a planned sample
(``--plan-only`` prints the plan and creates nothing; ``--active`` draws it where a model
annotator is unsure); ``--extend-sample ID`` tops up the sample of an existing uniform planned
campaign after a pilot.
"""

from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from prb_annotate.audit import plan_odds
from prb_annotate.audit.active_sample import SampleDesign
from prb_annotate.audit.sample_report import plan_lines
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns.copies import CopyChangeRefused, campaign_like, queue_only
from prb_annotate.campaigns.lifecycle import (
    CampaignSetupError,
    add_member,
    create_campaign,
    set_status,
)
from prb_annotate.campaigns.planned_sample import (
    SamplePlanError,
    describe_extension,
    extend_sample,
    plan_for_dataset,
)
from prb_annotate.campaigns.setting_fields import CAMPAIGN, PLAN
from prb_annotate.management.setting_options import add_setting_option
from prb_annotate.models import Campaign, Dataset

# The options --like applies on top of the copy, by the campaign field each one sets.
LIKE_CHANGES = {
    "k": "annotations_per_pair",
    "seed": "seed",
    "gold_rate": "gold_rate",
    "quota": "quota_per_annotator",
    "reservation_minutes": "reservation_minutes",
    "completion_url": "completion_url",
    "prolific_study_id": "prolific_study_id",
}

# Options that choose pairs or settings themselves, which --like takes from the other campaign.
NOT_WITH_LIKE = (
    "sample",
    "half_width",
    "category_half_width",
    "gold_ids",
    "active",
    "active_floor",
)

# Options whose parser default is None, so that --like tells one given from one left out; a
# campaign made without --like takes the setting's default (the one their help names).
DEFAULT_WHEN_LEFT_OUT = {
    "k": CAMPAIGN["annotations_per_pair"],
    "seed": CAMPAIGN["seed"],
    "gold_rate": CAMPAIGN["gold_rate"],
    "reservation_minutes": CAMPAIGN["reservation_minutes"],
    "active_floor": PLAN["floor"],
}


def _names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def _flag(option: str) -> str:
    return f"--{option.replace('_', '-')}"


def _option(options: dict[str, Any], name: str) -> Any:
    """The option's value, or its setting's default when it was left out."""
    value = options.get(name)
    return DEFAULT_WHEN_LEFT_OUT[name].default if value is None else value


def _given(options: dict[str, Any], name: str) -> bool:
    return options.get(name) not in (None, False, "")


def _listed(flags: list[str]) -> str:
    return f"{', '.join(flags[:-1])} and {flags[-1]}" if len(flags) > 1 else "".join(flags)


def _like_help() -> str:
    """--like's help, naming the options it applies, from LIKE_CHANGES and the copy's rules."""
    external = [option for option, field in LIKE_CHANGES.items() if not queue_only([field])]
    return (
        "copy this campaign: its dataset, pairs, gold, practice and qualification items, "
        "question set, thresholds and settings; "
        f"{_listed([_flag(option) for option in LIKE_CHANGES])} given too override what is copied "
        f"(with --external: {_listed([_flag(option) for option in external])} only)"
    )


class Command(BaseCommand):
    help = "Create an annotation campaign; prints its id, study link and sign-up invite."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--dataset", help="dataset name (required to create)")
        parser.add_argument("--name", help="campaign name, unique (required to create)")
        add_setting_option(parser, CAMPAIGN["annotations_per_pair"], "--k")
        add_setting_option(parser, CAMPAIGN["sample"])
        add_setting_option(parser, CAMPAIGN["seed"])
        add_setting_option(parser, CAMPAIGN["gold_rate"])
        parser.add_argument("--gold-ids", default="", help="comma-separated gold pair ids")
        parser.add_argument("--annotators", default="", help="comma-separated usernames")
        add_setting_option(
            parser,
            CAMPAIGN["quota_per_annotator"],
            "--quota",
            help_text="items each annotator does before the completion page (default: no limit)",
        )
        add_setting_option(parser, CAMPAIGN["reservation_minutes"])
        add_setting_option(parser, CAMPAIGN["completion_url"])
        add_setting_option(parser, CAMPAIGN["prolific_study_id"])
        parser.add_argument("--like", type=int, metavar="CAMPAIGN_ID", help=_like_help())
        parser.add_argument("--activate", action="store_true", help="start it active")
        add_setting_option(
            parser,
            CAMPAIGN["external"],
            help_text="no queue: answers come from files (manage.py import_annotations)",
        )
        parser.add_argument(
            "--base-url",
            help="the site's address, for the printed links (default: PRB_SITE_URL, or the "
            "address make demo serves)",
        )
        planned = parser.add_argument_group("planned sample (instead of --sample)")
        for name in ("half_width", "category_half_width", "expected_share", "split_share"):
            add_setting_option(planned, PLAN[name])
        add_setting_option(planned, PLAN["price_per_annotation"], "--price")
        add_setting_option(planned, PLAN["confidence"], help_text="interval level")
        planned.add_argument(
            "--active",
            action="store_true",
            help="draw it actively: each pair with its own probability, higher where the newest "
            "model-annotator run over the whole dataset is unsure (docs/ppi.md)",
        )
        add_setting_option(
            planned,
            PLAN["floor"],
            "--active-floor",
            help_text="with --active: no pair below this share of the uniform probability",
        )
        planned.add_argument(
            "--plan-only", action="store_true", help="print the plan; create nothing"
        )
        planned.add_argument(
            "--extend-sample",
            type=int,
            metavar="CAMPAIGN_ID",
            help="add pairs to this planned campaign to reach its targets at the shares seen",
        )
        parser.set_defaults(**dict.fromkeys(DEFAULT_WHEN_LEFT_OUT))

    def handle(self, *args: Any, **options: Any) -> None:
        if options.get("extend_sample") is not None:
            campaign, added = extend(options["extend_sample"])
            self.stdout.write(describe_extension(added))
            self.stdout.write("\n".join(plan_lines(campaign.sample_plan or {})))
            return
        if options.get("plan_only"):
            self.stdout.write("\n".join(plan_lines(preview(options))))
            return
        campaign = run(options)
        self.stdout.write(f"campaign {campaign.pk}: {campaign.name} ({campaign.status})")
        self.stdout.write(f"items: {campaign.items.count()}")
        if campaign.external:
            self.stdout.write(
                f"external: import its answers with manage.py import_annotations FILE "
                f"--campaign {campaign.pk}"
            )
            return
        if campaign.sample_plan is not None:
            self.stdout.write("\n".join(plan_lines(campaign.sample_plan)))
        base = (options.get("base_url") or settings.SITE_URL).rstrip("/")
        self.stdout.write(f"study link (Prolific): {base}/join/{campaign.invite_token}/")
        self.stdout.write(f"sign-up invite: {base}/signup/{campaign.signup_token}/")


def sample_targets(options: dict[str, Any]) -> PlanTargets | None:
    """The planned-sample options, or None when no target half-width was given."""
    if options.get("half_width") is None and options.get("category_half_width") is None:
        return None
    return PlanTargets(
        half_width=options.get("half_width"),
        category_half_width=options.get("category_half_width"),
        expected_share=options.get("expected_share", 0.5),
        confidence=options.get("confidence", 0.95),
        split_share=options.get("split_share", 0.0),
        price_per_annotation=options.get("price"),
    )


def sample_design(options: dict[str, Any]) -> SampleDesign | None:
    """``--active`` (with its floor), or None for the uniform draw."""
    if not options.get("active"):
        if options.get("active_floor") is not None:
            raise CommandError("--active-floor applies only with --active")
        return None
    if sample_targets(options) is None:
        raise CommandError("--active needs --half-width or --category-half-width")
    return SampleDesign("active", _option(options, "active_floor"))


def preview(options: dict[str, Any]) -> dict[str, Any]:
    """The plan ``run`` would create the campaign on, as stored, with its odds (``--plan-only``)."""
    targets = sample_targets(options)
    if targets is None:
        raise CommandError("--plan-only needs --half-width or --category-half-width")
    dataset = _dataset(options)
    try:
        plan = plan_for_dataset(
            dataset,
            targets,
            _option(options, "k"),
            leave_out=_names(options.get("gold_ids") or ""),
            design=sample_design(options),
        )
    except SamplePlanError as error:
        raise CommandError(str(error)) from error
    # An active plan says what each design expects; the odds are a uniform draw's.
    return plan.as_json() if plan.design else plan_odds.with_odds(plan)


def extend(campaign_id: int) -> tuple[Campaign, dict[str, int]]:
    """``--extend-sample``: the campaign and the pairs added per category."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        raise CommandError(f"no campaign with id {campaign_id}")
    try:
        added = extend_sample(campaign)
    except SamplePlanError as error:
        raise CommandError(str(error)) from error
    return campaign, added


def _dataset(options: dict[str, Any]) -> Dataset:
    if not options.get("dataset"):
        raise CommandError("--dataset is required")
    try:
        return Dataset.objects.get(name=options["dataset"])
    except Dataset.DoesNotExist as error:
        raise CommandError(f"no dataset named {options['dataset']!r}") from error


def run(options: dict[str, Any]) -> Campaign:
    """The command's work, callable from tests with the parsed options."""
    if not options.get("name"):
        raise CommandError("--name is required")
    users = _members(options)
    campaign = _like(options) if options.get("like") is not None else _create(options)
    for user in users:
        add_member(campaign, user)
    return campaign


def _members(options: dict[str, Any]) -> list[User]:
    usernames = _names(options.get("annotators") or "")
    users = {user.username: user for user in User.objects.filter(username__in=usernames)}
    unknown = [name for name in usernames if name not in users]
    if unknown:
        raise CommandError(
            f"unknown users: {', '.join(unknown)} (create their accounts with "
            "`manage.py add_annotators --campaign ID NAME ...` once the campaign exists)"
        )
    return [users[name] for name in usernames]


def _like(options: dict[str, Any]) -> Campaign:
    """``--like N``: a campaign set up like campaign N (``campaigns/copies.py``)."""
    source = Campaign.objects.filter(pk=options["like"]).first()
    if source is None:
        raise CommandError(f"no campaign with id {options['like']}")
    clashing = [_flag(name) for name in NOT_WITH_LIKE if _given(options, name)]
    if clashing:
        raise CommandError(f"--like takes the pairs from campaign {source.pk}: drop {clashing[0]}")
    if options.get("dataset") and options["dataset"] != source.dataset.name:
        raise CommandError(
            f"campaign {source.pk} is over dataset {source.dataset.name!r}, "
            f"not {options['dataset']!r}"
        )
    external = bool(options.get("external"))
    given = {option: options[option] for option in LIKE_CHANGES if options.get(option) is not None}
    changes = {LIKE_CHANGES[option]: value for option, value in given.items()}
    try:
        campaign = campaign_like(source, options["name"], external=external, changes=changes)
        if options.get("activate"):
            set_status(campaign, Campaign.Status.ACTIVE)
    except CopyChangeRefused as refused:
        flags = [_flag(option) for option in given if LIKE_CHANGES[option] in refused.settings]
        raise CommandError(f"{', '.join(flags)}: {refused.reason}") from refused
    except CampaignSetupError as error:
        raise CommandError(str(error)) from error
    return campaign


def _create(options: dict[str, Any]) -> Campaign:
    dataset = _dataset(options)
    settings: dict[str, Any] = {}
    if options.get("quota") is not None:
        settings["quota_per_annotator"] = options["quota"]
    if options.get("reservation_minutes") is not None:
        settings["reservation_minutes"] = options["reservation_minutes"]
    if options.get("completion_url"):
        settings["completion_url"] = options["completion_url"]
    if options.get("prolific_study_id"):
        settings["prolific_study_id"] = options["prolific_study_id"]
    try:
        campaign = create_campaign(
            dataset,
            options["name"],
            k=_option(options, "k"),
            sample=options.get("sample"),
            sample_targets=sample_targets(options),
            sample_design=sample_design(options),
            gold_pair_ids=_names(options.get("gold_ids") or ""),
            gold_rate=_option(options, "gold_rate"),
            seed=_option(options, "seed"),
            activate=bool(options.get("activate")),
            external=bool(options.get("external")),
            **settings,
        )
    except (CampaignSetupError, SamplePlanError) as error:
        raise CommandError(str(error)) from error
    return campaign
