"""A campaign set up like another one (``create_campaign --like N``): the same dataset and
pairs, question set, thresholds and workflow settings, so that a second round, a replication or
an external campaign receiving the first one's export starts from what the first one used.

What is copied: the regular pairs (the same sample), the gold items with their expected
answers, the practice and qualification items with theirs, and every setting below. What is
not: the name, the status (a copy starts as a draft, or closed when external), the links'
tokens, the Prolific study id (a new study has a new id), the planned-sample plan (the copy
takes its pairs as drawn), members and answers.

``changes`` gives the copy other values than the source's: k, the seed, any setting copied, and
the Prolific study id (a second round on Prolific is a new study). An external copy has no
queue, so it takes those that decide verdicts only (and k, the seed and the guidelines).
"""

from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import User

from prb_annotate.campaigns.lifecycle import CampaignSetupError, create_campaign
from prb_annotate.models import Campaign, CampaignItem, QualificationItem

# The settings that decide verdicts and agreement: an external copy needs these alone to give
# the original's audit verdict for verdict.
VERDICT_SETTINGS = (
    "quality_criteria",
    "rating_scale_max",
    "quality_threshold",
    "majority_threshold",
    "position_bias_max_p",
    "fast_answer_seconds",
)

# The rest of a queue campaign's set-up.
WORKFLOW_SETTINGS = (
    "guidelines",
    "reservation_minutes",
    "first_reservation_minutes",
    "min_gold_accuracy",
    "show_timer",
    "reading_check",
    "consent_text",
    "quota_per_annotator",
    "completion_url",
    "no_places_url",
    "screen_out_url",
    "qualification_rule",
    "bonus_rule",
)


# What ``changes`` may hold for any copy, and besides them for a copy with a queue.
CHANGES_ANY_COPY = ("annotations_per_pair", "seed", "guidelines", *VERDICT_SETTINGS)
CHANGES_QUEUE_ONLY = (
    "gold_rate",
    "prolific_study_id",
    *(setting for setting in WORKFLOW_SETTINGS if setting != "guidelines"),
)


class CopyChangeRefused(CampaignSetupError):
    """Changes the copy cannot take: ``settings`` names them, ``reason`` says why."""

    def __init__(self, settings: list[str], reason: str) -> None:
        super().__init__(f"{', '.join(settings)}: {reason}")
        self.settings = settings
        self.reason = reason


def queue_only(names: Iterable[str]) -> list[str]:
    """The settings among ``names`` that only a copy with a queue (not external) takes."""
    return [name for name in names if name in CHANGES_QUEUE_ONLY]


def regular_pair_ids(source: Campaign) -> list[str]:
    regular = CampaignItem.objects.filter(campaign=source, kind=CampaignItem.Kind.REGULAR)
    return list(regular.order_by("pk").values_list("pair__external_id", flat=True))


def gold_answers(source: Campaign) -> dict[str, dict[str, str]]:
    gold = CampaignItem.objects.filter(campaign=source, kind=CampaignItem.Kind.GOLD)
    return {
        item.pair.external_id: dict(item.gold_answers or {})
        for item in gold.select_related("pair").order_by("pk")
    }


def qualification_choices(source: Campaign, phase: str) -> dict[str, dict[str, Any]]:
    items = QualificationItem.objects.filter(campaign=source, phase=phase).select_related("pair")
    return {
        item.pair.external_id: {
            "expected_answers": dict(item.expected_answers),
            "explanations": dict(item.explanations),
        }
        for item in items.order_by("position", "pk")
    }


def campaign_like(
    source: Campaign,
    name: str,
    *,
    external: bool = False,
    created_by: User | None = None,
    guidelines: str | None = None,
    changes: Mapping[str, Any] | None = None,
) -> Campaign:
    """A new campaign named ``name`` set up like ``source``, with ``changes`` (campaign field
    -> value) in place of the source's values. An external copy takes the regular pairs and
    the verdict settings only: it has no queue, so no gold, practice, qualification or
    workflow. Raises CopyChangeRefused for a change the copy cannot take."""
    changes = dict(changes or {})
    _check_changes(source, changes, external)
    settings = {setting: getattr(source, setting) for setting in VERDICT_SETTINGS}
    workflow: dict[str, Any] = {}
    if not external:
        settings.update({setting: getattr(source, setting) for setting in WORKFLOW_SETTINGS})
        workflow = {
            "gold_pair_ids": gold_answers(source),
            "gold_rate": changes.pop("gold_rate", source.gold_rate),
            "practice_pairs": qualification_choices(source, QualificationItem.Phase.PRACTICE),
            "qualification_pairs": qualification_choices(
                source, QualificationItem.Phase.QUALIFICATION
            ),
        }
    if guidelines is not None:
        settings["guidelines"] = guidelines
    k = changes.pop("annotations_per_pair", source.annotations_per_pair)
    seed = changes.pop("seed", source.seed)
    settings.update(changes)
    return create_campaign(
        source.dataset,
        name,
        k=k,
        seed=seed,
        created_by=created_by,
        external=external,
        pair_ids=regular_pair_ids(source),
        **workflow,
        **settings,
    )


def _check_changes(source: Campaign, changes: Mapping[str, Any], external: bool) -> None:
    unknown = sorted(set(changes) - {*CHANGES_ANY_COPY, *CHANGES_QUEUE_ONLY})
    if unknown:
        raise TypeError(f"a copy cannot change: {', '.join(unknown)}")
    refused = queue_only(changes) if external else []
    if refused:
        raise CopyChangeRefused(refused, "an external copy has no queue for them to apply to")
    if changes.get("gold_rate") and not _has_gold(source):
        raise CopyChangeRefused(
            ["gold_rate"], f"campaign {source.pk} has no gold items for a gold rate to serve"
        )


def _has_gold(source: Campaign) -> bool:
    return CampaignItem.objects.filter(campaign=source, kind=CampaignItem.Kind.GOLD).exists()
