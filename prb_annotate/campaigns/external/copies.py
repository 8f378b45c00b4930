"""An external campaign set up like another one, to receive that campaign's own annotations
export: the same dataset, regular pairs, question set and thresholds, so that its audit can be
compared with the original's verdict for verdict (``campaigns/copies.py`` does the copying)."""

from django.contrib.auth.models import User

from prb_annotate.campaigns.copies import campaign_like
from prb_annotate.models import Campaign


def external_copy(source: Campaign, name: str, created_by: User | None = None) -> Campaign:
    return campaign_like(
        source,
        name,
        external=True,
        created_by=created_by,
        guidelines=f"Answers imported from the annotations export of campaign #{source.pk}.",
    )
