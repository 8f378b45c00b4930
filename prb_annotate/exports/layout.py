"""What an export folder holds, under which names, and the order of its rows.

::

    DIR/<config>/test.<ext>     one folder per category; records in the official schema,
                                optionally with a ``validation`` object
    DIR/annotations.<ext>       one row per current annotation, annotators pseudonymised
    DIR/manifest.json           campaign, dataset, question set, thresholds, counts, agreement,
                                every file with its row count and sha256 (``manifest``)
    DIR/README.md               dataset card whose YAML header declares the configs and files
                                (``card``)

Rows are ordered by record id in byte order, the same on SQLite and PostgreSQL, so that the
same database state gives the same files.
"""

import re
from array import array
from collections.abc import Iterable
from typing import Any

from django.db.models import CharField, QuerySet
from django.db.models.expressions import Func

from evaluation.records import EXPORT_MANIFEST
from prb_annotate.audit.frames import raw_rows
from prb_annotate.models import Campaign, CampaignItem, Pair

SPLIT = "test"
ANNOTATIONS = "annotations"
CARD = "README.md"
MANIFEST = EXPORT_MANIFEST


def config_names(categories: Iterable[str]) -> dict[str, str]:
    """Folder and config name for each category: word characters and dashes only, unique.

    ``Art_and_Entertainment`` stays as it is; ``Art & Entertainment`` becomes
    ``Art_Entertainment``. Names are given in sorted category order, so a clash (two categories
    that clean up to the same name, or one named like the annotations table) is resolved the
    same way every time, with a numeric suffix.
    """
    names: dict[str, str] = {}
    taken = {ANNOTATIONS}
    for category in sorted(set(categories)):
        base = re.sub(r"[^\w-]+", "_", category).strip("_-") or "uncategorized"
        name, suffix = base, 2
        while name.lower() in taken:
            name, suffix = f"{base}_{suffix}", suffix + 1
        taken.add(name.lower())
        names[category] = name
    return names


def records_path(config: str, fmt: str) -> str:
    """A category's records, relative to the export folder."""
    return f"{config}/{SPLIT}.{fmt}"


def annotations_path(fmt: str) -> str:
    """The annotations table, relative to the export folder."""
    return f"{ANNOTATIONS}.{fmt}"


class ByteOrder(Func):
    """Text compared byte by byte, which is how Python compares str (by code point, the order
    of UTF-8 bytes): SQLite's default, and PostgreSQL's "C" collation."""

    output_field = CharField()
    template = "%(expressions)s"

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, template='%(expressions)s COLLATE "C"')


def regular_pairs_by_record_id(campaign: Campaign) -> tuple[array, list[str]]:
    """The campaign's regular pairs sorted by record id, and their distinct categories.

    Both queries name the dataset, so that SQLite walks its indexes on the pairs (dataset and
    record id; dataset and category) instead of reading every pair's row, answers and all.
    """
    regular = {
        "campaign_items__campaign": campaign,
        "campaign_items__kind": CampaignItem.Kind.REGULAR,
        "dataset_id": campaign.dataset_id,
    }
    by_record_id: QuerySet[Any, Any] = (
        Pair.objects.filter(**regular).order_by(ByteOrder("external_id")).values_list("pk")
    )
    pair_ids = array("q")
    _, chunks = raw_rows(by_record_id)
    for rows in chunks:
        pair_ids.extend(row[0] for row in rows)
    categories = Pair.objects.filter(**regular).order_by().values_list("category", flat=True)
    return pair_ids, sorted(categories.distinct())
