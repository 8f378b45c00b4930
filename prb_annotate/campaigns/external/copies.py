"""An external campaign set up like another one, to receive that campaign's own annotations
export: the same dataset, regular pairs, question set and thresholds, so that its audit can be
compared with the original's verdict for verdict."""

from django.contrib.auth.models import User

from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.models import Campaign, CampaignItem

# The settings that decide verdicts and agreement, copied from the original.
COPIED_SETTINGS = (
    "quality_criteria",
    "rating_scale_max",
    "quality_threshold",
    "majority_threshold",
    "position_bias_max_p",
    "fast_answer_seconds",
)


def external_copy(source: Campaign, name: str, created_by: User | None = None) -> Campaign:
    regular = CampaignItem.objects.filter(campaign=source, kind=CampaignItem.Kind.REGULAR)
    return create_campaign(
        source.dataset,
        name,
        k=source.annotations_per_pair,
        seed=source.seed,
        created_by=created_by,
        external=True,
        pair_ids=list(regular.values_list("pair__external_id", flat=True)),
        guidelines=f"Answers imported from the annotations export of campaign #{source.pk}.",
        **{setting: getattr(source, setting) for setting in COPIED_SETTINGS},
    )
