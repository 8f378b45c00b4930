"""A dataset of two categories for planned-sample tests, and a pilot that answers its items."""

import hashlib

from django.contrib.auth.models import User

from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.models import Campaign, Dataset, Pair
from prb_annotate.simulation.model_annotator import SOUND
from tests.support.audit import annotate

SIZES = {"fitness": 200, "cooking": 100}
# Cochran's normal sizes would be 15 of 200 and 14 of 100; the interval the estimate reports
# (Wilson with continuity correction at the effective size) reaches ±0.15 at 21 and 19.
TARGETS = PlanTargets(category_half_width=0.15, expected_share=0.9, price_per_annotation=0.25)


def planned_dataset(name: str = "prb", sizes: dict[str, int] = SIZES) -> Dataset:
    dataset = Dataset.objects.create(name=name, source="tests")
    for category, count in sizes.items():
        Pair.objects.bulk_create(
            Pair(
                dataset=dataset,
                external_id=f"{category}-{index:03d}",
                category=category,
                question=f"Question {index}",
                chosen="short",
                rejected="long",
                content_hash=hashlib.sha256(f"{category}{index}".encode()).hexdigest(),
            )
            for index in range(count)
        )
    return dataset


def pilot(campaign: Campaign, validated_per_category: dict[str, int]) -> None:
    """One annotation per item (k = 1): the first n items of each category validated, the
    rest excluded (the annotator prefers the rejected answer)."""
    user = User.objects.create_user(f"pilot-{campaign.pk}")
    seen: dict[str, int] = {}
    for item in campaign.items.select_related("pair").order_by("pair__external_id"):
        category = item.pair.category
        seen[category] = seen.get(category, 0) + 1
        validated = seen[category] <= validated_per_category[category]
        annotate(item, user, fit="chosen" if validated else "rejected")


FLAW = ("rejected", "preference")


def truth(dataset: Dataset) -> dict[str, tuple[str, str]]:
    """(rubric fit, main difference) a careful annotator and a right model give each pair:
    every fifth pair is flawed (its user prefers the rejected answer), the rest sound."""
    ids = dataset.pairs.order_by("external_id").values_list("external_id", flat=True)
    return {external_id: FLAW if index % 5 == 0 else SOUND for index, external_id in enumerate(ids)}
