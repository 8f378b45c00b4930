"""What a Parquet export keeps and changes of records of different shapes (docs/export.md,
"Round trip"): objects empty in every record, fields whose types disagree, optional keys and
numbers that are integers in some records and floats in others."""

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from prb_annotate.datasets.importing import import_path, import_upload
from prb_annotate.datasets.readers import JSON_TEXT_METADATA
from prb_annotate.datasets.records import pair_to_record
from prb_annotate.exports.export import export_split
from prb_annotate.models import Campaign, Dataset
from tests.support.exports import ART_IDS, GOLD_ID, annotated_campaign, jsonl, records


@pytest.fixture
def users(db: None) -> list[User]:
    return [User.objects.create(username=name) for name in ("alice", "bob", "carol")]


def shaped_records() -> list[dict[str, Any]]:
    rows = records()
    for row in rows:
        row["meta"] = {}  # empty in every record
        row["count"] = 1
    first, second = rows[0], rows[1]  # both Art records
    assert {first["id"], second["id"]} <= set(ART_IDS)
    first["count"] = 1.5  # a float beside the others' integers
    first["profile"][0]["score"] = 3  # a key only one post has
    second["mixed"] = "text"
    rows[2]["mixed"] = 7  # text in one record, a number in another
    return rows


def exported_and_reimported(campaign: Campaign, out: Path) -> dict[str, dict[str, Any]]:
    export_split(campaign, out, subset="all", fmt="parquet")
    for path in sorted(out.glob("*/test.parquet")):
        import_path(path, "again")
    return {
        pair.external_id: pair_to_record(pair)
        for pair in Dataset.objects.get(name="again").pairs.all()
    }


def as_json(record: dict[str, Any]) -> str:
    # Keys sorted: the record's own order is pair_to_record's, the same either way.
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


def test_an_object_empty_in_every_record_is_exported_and_read_back(
    users: list[User], tmp_path: Path
) -> None:
    dataset = import_upload(jsonl(shaped_records()), "prb.jsonl", "prb").dataset
    campaign = annotated_campaign(dataset, users)
    again = exported_and_reimported(campaign, tmp_path / "out")

    table = pq.read_table(tmp_path / "out" / "Art_and_Entertainment" / "test.parquet")
    for name in ("meta", "mixed"):
        field = table.schema.field(name)
        assert str(field.type) == "string"
        assert field.metadata == JSON_TEXT_METADATA
    assert set(table.column("meta").to_pylist()) == {"{}"}
    assert all(record["meta"] == {} for record in again.values())
    mixed = {key: record.get("mixed") for key, record in again.items() if key in ART_IDS}
    assert mixed[records()[1]["id"]] == "text"
    assert mixed[records()[2]["id"]] == 7

    # The command writes it too, where it used to fail.
    call_command(
        "export_split", "--campaign", str(campaign.pk), "--format", "parquet",
        "--out", str(tmp_path / "cli"), "--subset", "all",
    )  # fmt: skip
    assert (tmp_path / "cli" / "Art_and_Entertainment" / "test.parquet").is_file()


def test_parquet_changes_records_only_as_the_docs_say(users: list[User], tmp_path: Path) -> None:
    """Within one file: a key some objects of a list lack comes back as null in them, an
    unknown field some records lack comes back as null, an integer where another record has
    a float comes back as a float; everything else is given back exactly."""
    rows = shaped_records()
    dataset = import_upload(jsonl(rows), "prb.jsonl", "prb").dataset
    campaign = annotated_campaign(dataset, users)
    kept = dataset.pairs.exclude(external_id=GOLD_ID)
    originals = {pair.external_id: pair_to_record(pair) for pair in kept}
    again = exported_and_reimported(campaign, tmp_path / "out")
    assert set(again) == set(originals)

    art_only = {"mixed": None, "score": None, "source": None}  # fields some Art records have
    for external_id, original in originals.items():
        expected = json.loads(json.dumps(original))
        if external_id in ART_IDS:
            for post in expected["profile"]:
                post.setdefault("score", None)
            expected["count"] = float(expected["count"])
            for name, value in art_only.items():
                expected.setdefault(name, value)
        assert as_json(again[external_id]) == as_json(expected), external_id
