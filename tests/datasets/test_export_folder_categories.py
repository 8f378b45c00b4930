"""An export folder imported whole keeps every record's category: a record without one, which
the export writes into ``uncategorized/``, comes back without one (the manifest's category of
the file, not the folder's name)."""

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from prb_annotate.datasets.importing import import_path
from prb_annotate.exports.export import export_split
from prb_annotate.models import Dataset
from tests.support.exports import GOLD_ID, PLAIN_ID, annotated_campaign, import_dataset


@pytest.fixture
def users(db: None) -> list[User]:
    return [User.objects.create(username=name) for name in ("alice", "bob", "carol")]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_an_export_folder_gives_back_each_records_category(
    users: list[User], tmp_path: Path, fmt: str
) -> None:
    campaign = annotated_campaign(import_dataset(), users)
    out = tmp_path / "out"
    manifest = export_split(campaign, out, subset="all", fmt=fmt)
    uncategorized = next(c for c in manifest["configs"] if c["config_name"] == "uncategorized")
    assert uncategorized["category"] == ""

    report = import_path(out, "again")
    assert "uncategorized" not in report.categories
    original = dict(
        campaign.dataset.pairs.exclude(external_id=GOLD_ID).values_list("external_id", "category")
    )
    again = dict(Dataset.objects.get(name="again").pairs.values_list("external_id", "category"))
    assert again == original
    assert again[str(PLAIN_ID)] == ""
