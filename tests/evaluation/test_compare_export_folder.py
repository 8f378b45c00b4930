"""The scorer reads an export folder through its manifest, as ``import_pairs`` does.

A newcomer extracts a Parquet export's zip over a folder that holds a JSONL export of the same
campaign: every record is then in two files. ``import_pairs`` reads the folder through its
manifest (the files the last export listed); ``score --data`` used to read every data file and
stop at "record id ... is used twice". Real exports of a real campaign, on the test database.
"""

import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from evaluation.cli import main
from evaluation.errors import EvaluationError
from evaluation.records import load_records
from prb_annotate.datasets.importing import import_path
from prb_annotate.exports.archive import export_zip
from prb_annotate.exports.export import export_split
from prb_annotate.models import Campaign
from tests.support.exports import annotated_campaign, import_dataset


@pytest.fixture
def campaign(db: None) -> Campaign:
    users = [User.objects.create(username=name) for name in ("alice", "bob", "carol")]
    return annotated_campaign(import_dataset(), users)


@pytest.fixture
def mixed_folder(campaign: Campaign, tmp_path: Path) -> Path:
    """A JSONL export, then a Parquet export's zip extracted over it (manifest replaced)."""
    folder = tmp_path / "export"
    export_split(campaign, folder, subset="all", fmt="jsonl", with_validation=True)
    archive, _ = export_zip(campaign, subset="all", fmt="parquet", with_validation=True)
    with archive, zipfile.ZipFile(archive) as zipped:
        names = zipped.namelist()
        root = names[0].split("/")[0] + "/" if all("/" in name for name in names) else ""
        for name in names:
            target = folder / name.removeprefix(root)
            if name.endswith("/"):
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zipped.read(name))
    assert list(folder.rglob("*.jsonl")), "the JSONL records are still there"
    assert list(folder.rglob("*.parquet")), "and the Parquet ones beside them"
    return folder


def test_it_scores_an_export_folder_through_its_manifest(mixed_folder, tmp_path, capsys):
    manifest = json.loads((mixed_folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["file_format"] == "parquet"
    records = load_records(mixed_folder)
    assert len(records) == manifest["counts"]["exported_pairs"]
    assert len({record.id for record in records}) == len(records)
    out = tmp_path / "run"
    args = ["score", "--data", str(mixed_folder), "--model", "builtin:length", "--out", str(out)]
    assert main(args) == 0
    rows = (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == manifest["counts"]["exported_pairs"]
    # The export carries each pair's verdict, so the run groups by it for compare.
    groups = {json.loads(row)["group"] for row in rows}
    assert groups <= {"validated", "excluded", "undecided"}
    assert "validated" in groups


def test_it_reads_the_same_pairs_as_import_pairs(mixed_folder):
    imported = import_path(mixed_folder, "again").dataset
    ids = set(imported.pairs.values_list("external_id", flat=True))
    assert {record.id for record in load_records(mixed_folder)} == ids


def test_it_names_a_file_the_manifest_lists_but_the_folder_lacks(mixed_folder):
    manifest = json.loads((mixed_folder / "manifest.json").read_text(encoding="utf-8"))
    missing = manifest["configs"][0]["path"]
    (mixed_folder / missing).unlink()
    with pytest.raises(EvaluationError, match=f"lists {missing}, which is not in the folder"):
        load_records(mixed_folder)


def test_it_still_reads_a_folder_without_a_manifest(mixed_folder):
    """A Hub-style folder (no manifest) is read as before: every data file, one level down."""
    (mixed_folder / "manifest.json").unlink()
    for parquet in mixed_folder.rglob("*.parquet"):
        parquet.unlink()
    records = load_records(mixed_folder)
    assert len({record.id for record in records}) == len(records) > 0
