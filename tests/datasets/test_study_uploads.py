"""Uploading a dataset on the datasets page: every import format (record files, and a .zip of
a snapshot folder or an export), all or nothing with line-numbered problems on the page, the
JSON answer the progress script reads, and the link on to a new campaign."""

import csv
import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from prb_annotate.models import Dataset, Pair
from tests.datasets.test_importing import write_parquet
from tests.support.importing import ART, LIFE, official


def jsonl(records: list[dict]) -> bytes:
    return "".join(json.dumps(record) + "\n" for record in records).encode()


def parquet(records: list[dict], tmp_path) -> bytes:
    return write_parquet(tmp_path / "records.parquet", records).read_bytes()


def uncategorized(index: int) -> dict:
    return {key: value for key, value in official(index).items() if key != "category"}


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def upload(client, filename: str, content: bytes, **fields):
    file = SimpleUploadedFile(filename, content)
    return client.post(reverse("dataset_upload"), {"file": file, **fields})


def test_it_imports_an_upload_and_leads_on_to_a_campaign(db, manager, login) -> None:
    """From the datasets page's link; the dataset's page then offers a campaign on it."""
    client = login(manager)
    assert reverse("dataset_upload") in client.get(reverse("dataset_list")).content.decode()
    response = upload(client, "films.jsonl", jsonl([official(1), official(2)]), name="films")
    dataset = Dataset.objects.get(name="films")
    assert response["Location"] == reverse("dataset_detail", args=[dataset.pk])
    page = client.get(response["Location"]).content.decode()
    assert "Imported films.jsonl: dataset &quot;films&quot;: 2 created" in page
    assert f'href="{reverse("campaign_create")}?dataset={dataset.pk}"' in page
    assert dataset.source == "upload:films.jsonl"


@pytest.mark.parametrize("name", ["records.json", "records.csv", "records.parquet"])
def test_it_takes_every_record_format(db, manager, login, tmp_path, name) -> None:
    records = [official(1), official(2, category=LIFE)]
    if name.endswith(".json"):
        content = json.dumps(records).encode()
    elif name.endswith(".csv"):
        columns = ["id", "question", "chosen", "rejected", "category"]
        table = io.StringIO()
        writer = csv.DictWriter(table, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(records)
        content = table.getvalue().encode()
    else:
        content = parquet(records, tmp_path)
    response = upload(login(manager), name, content)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Pair.objects.filter(dataset__name="records").count() == 2


def test_it_imports_a_zipped_snapshot_folder_and_a_zipped_export(
    db, manager, login, tmp_path
) -> None:
    """A snapshot's configs become categories (wrapped in one folder or not); an export's
    manifest picks its record files, leaving its annotations out."""
    client = login(manager)
    snapshot = zipped(
        {
            f"snapshot/{ART}/test-00000-of-00001.parquet": parquet([uncategorized(1)], tmp_path),
            f"snapshot/{LIFE}/test.jsonl": jsonl([uncategorized(2)]),
        }
    )
    assert upload(client, "snapshot.zip", snapshot, name="snap").status_code == 302
    assert dict(
        Pair.objects.filter(dataset__name="snap").values_list("external_id", "category")
    ) == {"r001": ART, "r002": LIFE}

    manifest = {"format": "prb-annotate export", "configs": [{"path": f"{ART}/test.jsonl"}]}
    export = zipped(
        {
            "manifest.json": json.dumps(manifest).encode(),
            f"{ART}/test.jsonl": jsonl([official(3)]),
            "annotations.jsonl": b'{"not": "a pair"}\n',
        }
    )
    assert upload(client, "export.zip", export, name="back").status_code == 302
    assert list(
        Pair.objects.filter(dataset__name="back").values_list("external_id", flat=True)
    ) == ["r003"]


def test_it_lists_the_problems_on_the_page_and_imports_nothing(db, manager, login) -> None:
    client = login(manager)
    bad = jsonl([official(1)]) + b'{"id": "r002", "question": "q", "chosen": "x"}\nnot json\n'
    response = upload(client, "bad.jsonl", bad, name="bad")
    assert response.status_code == 400
    html = response.content.decode()
    assert "Nothing was imported" in html
    assert "bad.jsonl line 2 (id &quot;r002&quot;), field &quot;rejected&quot;" in html
    assert "bad.jsonl line 3" in html
    assert not Dataset.objects.filter(name="bad").exists()
    assert Pair.objects.count() == 0

    for name, content, message in [
        ("notes.txt", b"hello", "unsupported file type"),
        ("broken.zip", b"PK not really", "not a readable .zip file"),
        ("escape.zip", zipped({"../outside.jsonl": jsonl([official(1)])}), "outside the folder"),
    ]:
        response = upload(client, name, content)
        assert response.status_code == 400, name
        assert message in response.content.decode(), name
    assert not Dataset.objects.exists()


def test_it_answers_the_progress_script_with_json(db, manager, login) -> None:
    """The page's script asks for JSON: where to go once imported; problems come back as the
    page (status 400), which the script puts in place of the form."""
    client = login(manager)
    file = SimpleUploadedFile("films.jsonl", jsonl([official(1)]))
    response = client.post(
        reverse("dataset_upload"), {"file": file}, HTTP_ACCEPT="application/json"
    )
    dataset = Dataset.objects.get(name="films")
    assert response.json()["location"] == reverse("dataset_detail", args=[dataset.pk])
    file = SimpleUploadedFile("films.jsonl", b"not json\n")
    response = client.post(
        reverse("dataset_upload"), {"file": file}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 400
    assert 'id="upload-main"' in response.content.decode()


def test_it_keeps_uploads_to_staff(db, annotator, login) -> None:
    client = login(annotator)
    assert client.get(reverse("dataset_upload")).status_code == 404
    assert upload(client, "films.jsonl", jsonl([official(1)])).status_code == 404
    assert not Dataset.objects.exists()


def test_it_imports_a_zip_through_the_api(db, manager, login) -> None:
    content = zipped({f"{ART}/test.jsonl": jsonl([uncategorized(1)])})
    response = login(manager).post(
        "/api/datasets/", {"file": SimpleUploadedFile("snap.zip", content), "name": "api-snap"}
    )
    assert response.status_code == 201, response.content
    assert Pair.objects.get(dataset__name="api-snap").category == ART
