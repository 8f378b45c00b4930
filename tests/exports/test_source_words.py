"""The manifest, the card, the dataset page and the API say what the dataset's source and
sha256 are: those of the latest import that added or changed records, hashed as the file's
bytes or as the listing of a folder's (or an unpacked .zip's) files."""

import hashlib
import io
import zipfile
from pathlib import Path

from django.contrib.auth.models import User

from prb_annotate.api.serializers import DatasetSerializer, ImportReportSerializer
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.datasets.importing import import_path, import_upload
from prb_annotate.exports.export import export_split
from tests.support.exports import jsonl, records


def test_the_card_and_the_page_name_the_latest_import_that_changed_records(
    db: None, tmp_path: Path, manager: User, login
) -> None:
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(jsonl(records()[:4]))
    second.write_bytes(jsonl(records()[4:8]))
    import_path(first, "two")
    dataset = import_path(second, "two").dataset
    assert dataset.pairs.count() == 8
    assert dataset.source == "second.jsonl"  # the latest import's, not the first's

    manifest = export_split(create_campaign(dataset, "two", k=1), tmp_path / "out", subset="all")
    assert set(manifest["dataset"]) == {"id", "name", "source", "source_sha256", "description"}
    assert manifest["dataset"]["source"] == "second.jsonl"
    card = (tmp_path / "out" / "README.md").read_text()
    assert "latest import that added or changed records" in card
    assert "records of earlier imports may come from other files" in card

    page = login(manager).get(f"/datasets/{dataset.pk}/").content.decode()
    assert "latest import that added or changed pairs: second.jsonl" in page
    assert "of the listing of a folder" in page


def test_a_zip_upload_keeps_the_listing_hash_of_its_unpacked_files(
    db: None, manager: User, login
) -> None:
    data = jsonl(records()[:4])
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("Art/test.jsonl", data)
    archive.seek(0)
    archive.name = "snap.zip"
    response = login(manager).post("/api/datasets/", {"file": archive, "name": "zipped"})
    assert response.status_code == 201, response.content
    body = response.json()
    listing = f"{hashlib.sha256(data).hexdigest()}  Art/test.jsonl\n"
    assert body["source"] == "upload:snap.zip"
    assert body["source_sha256"] == hashlib.sha256(listing.encode()).hexdigest()
    assert body["source_sha256"] != hashlib.sha256(archive.getvalue()).hexdigest()
    # The help texts say so.
    for serializer in (DatasetSerializer(), ImportReportSerializer()):
        assert "upload:NAME" in str(serializer.fields["source"].help_text)
        assert "unpacked files, not the zip" in str(serializer.fields["source_sha256"].help_text)
    assert "latest import" in str(DatasetSerializer().fields["source"].help_text)


def test_an_upload_is_stored_as_upload_and_its_name(db: None) -> None:
    report = import_upload(jsonl(records()[:2]), "prb.jsonl", "up")
    assert report.dataset.source == "upload:prb.jsonl"
    assert report.source_sha256 == hashlib.sha256(jsonl(records()[:2])).hexdigest()
