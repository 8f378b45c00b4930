"""Each shape, with its mapping, imports alike from ``import_pairs``, the upload page and the
API; a bad mapping is refused by each with every problem named, and nothing written."""

import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from prb_annotate.datasets import importing
from prb_annotate.datasets.records import pair_to_record
from prb_annotate.models import Dataset
from tests.datasets.test_shapes import FIXTURES, chat
from tests.support.importing import counts
from tests.support.saved_datasets import write_saved_dataset_dict

BAD_MAPPING = (
    '{"columns": {"questin": "q", "chosen": "x", "rejected": "x"}, '
    '"winner_values": {"a": ["1"], "b": ["1"]}, "kind": 2}'
)
BAD_MAPPING_PROBLEMS = (
    'mapping: unknown key "kind"',
    "columns.questin: unknown field",
    'columns.rejected: column "x" is already chosen',
    "winner_values: 1 names both a and b",
)


def saved_zip(tmp_path: Path) -> Path:
    """A DatasetDict's save_to_disk folder, zipped as ``zip -r saved.zip saved/`` does."""
    folder = write_saved_dataset_dict(
        tmp_path / "saved", {"train": [chat(1), chat(2)], "test": [chat(3)]}
    )
    path = tmp_path / "saved.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for file in sorted(folder.rglob("*")):
            archive.write(file, file.relative_to(tmp_path).as_posix())
    return path


SHAPES = {
    "chat": lambda tmp_path: (FIXTURES / "chat_pairs.jsonl", None),
    "responses": lambda tmp_path: (
        FIXTURES / "arena_pairs.jsonl",
        FIXTURES / "arena_mapping.json",
    ),
    "renamed csv": lambda tmp_path: (
        FIXTURES / "renamed_pairs.csv",
        FIXTURES / "renamed_mapping.json",
    ),
    "saved dataset dict": lambda tmp_path: (saved_zip(tmp_path), None),
}


def records_of(name: str) -> list[dict]:
    pairs = Dataset.objects.get(name=name).pairs.order_by("external_id")
    return [{"category": p.category, **pair_to_record(p)} for p in pairs]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_it_imports_each_shape_alike_from_command_page_and_api(
    db, manager, login, tmp_path: Path, shape: str
) -> None:
    path, mapping_path = SHAPES[shape](tmp_path)
    mapping = mapping_path.read_text() if mapping_path else ""
    if path.suffix == ".zip":
        # The command reads the folder the zip holds.
        with zipfile.ZipFile(path) as archive:
            archive.extractall(tmp_path / "unzipped")
        command_path = tmp_path / "unzipped" / "saved"
    else:
        command_path = path
    options = {"mapping": str(mapping_path)} if mapping_path else {}
    call_command(
        "import_pairs", str(command_path), dataset="by-command", stdout=io.StringIO(), **options
    )

    client = login(manager)
    page = client.post(
        reverse("dataset_upload"),
        {
            "file": SimpleUploadedFile(path.name, path.read_bytes()),
            "name": "by-page",
            "mapping": mapping,
        },
    )
    assert page.status_code == 302, page.content.decode()[:2000]
    api = client.post(
        "/api/datasets/",
        {
            "file": SimpleUploadedFile(path.name, path.read_bytes()),
            "name": "by-api",
            "mapping": mapping,
        },
    )
    assert api.status_code == 201, api.json()

    by_command = records_of("by-command")
    assert len(by_command) == 3
    assert records_of("by-page") == by_command
    assert records_of("by-api") == by_command


def test_it_refuses_a_bad_mapping_naming_every_problem(db, manager, login, tmp_path: Path) -> None:
    mapping_path = tmp_path / "mapping.json"
    mapping_path.write_text(BAD_MAPPING)
    csv_path = FIXTURES / "renamed_pairs.csv"
    with pytest.raises(CommandError) as failed:
        call_command("import_pairs", str(csv_path), dataset="bad", mapping=str(mapping_path))
    for problem in BAD_MAPPING_PROBLEMS:
        assert problem in str(failed.value)

    client = login(manager)
    page = client.post(
        reverse("dataset_upload"),
        {"file": SimpleUploadedFile("a.csv", csv_path.read_bytes()), "mapping": BAD_MAPPING},
    )
    assert page.status_code == 400
    text = page.content.decode().replace("&quot;", '"')
    for problem in BAD_MAPPING_PROBLEMS:
        assert problem in text

    api = client.post(
        "/api/datasets/",
        {
            "file": SimpleUploadedFile("a.csv", csv_path.read_bytes()),
            "name": "bad",
            "mapping": BAD_MAPPING,
        },
    )
    assert api.status_code == 400
    body = api.json()
    assert set(body) >= {"detail", "errors"}
    listed = " ".join(body["errors"]["mapping"])
    for problem in BAD_MAPPING_PROBLEMS:
        assert problem in listed
    assert counts() == (0, 0)


def test_it_previews_the_first_rows_under_the_mapping(db, manager, login) -> None:
    path = FIXTURES / "arena_pairs.jsonl"
    client = login(manager)
    response = client.post(
        reverse("dataset_upload"),
        {
            "file": SimpleUploadedFile(path.name, path.read_bytes()),
            "mapping": (FIXTURES / "arena_mapping.json").read_text(),
            "preview": "on",
        },
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="import-preview"' in page
    assert "Paddington 2" in page
    assert "Lifestyle_and_Personal_Development" in page
    assert counts() == (0, 0)
    # Without the mapping the same rows show what is wrong with each, and still nothing is written.
    response = client.post(
        reverse("dataset_upload"),
        {"file": SimpleUploadedFile(path.name, path.read_bytes()), "preview": "on"},
    )
    assert "question: missing required field" in response.content.decode().replace("&quot;", '"')
    assert counts() == (0, 0)


def test_it_shows_a_chat_record_as_a_conversation(db, manager, login) -> None:
    call_command(
        "import_pairs", str(FIXTURES / "chat_pairs.jsonl"), dataset="chat", stdout=io.StringIO()
    )
    dataset = Dataset.objects.get(name="chat")
    pair = dataset.pairs.get(external_id="chat-2")
    page = login(manager).get(reverse("pair_detail", args=[dataset.pk, pair.pk])).content.decode()
    conversation = page.split('id="conversation"')[1].split("</section>")[0]
    assert "I want to read more this year." in conversation
    assert "What do you like to read?" in conversation
    assert "Mostly history" not in conversation  # the question itself is shown below it
    assert "Mostly history, but long books put me off." in page


def test_it_reports_progress_as_it_reads(db, monkeypatch: pytest.MonkeyPatch) -> None:
    """On stderr, so that stdout stays the one-line summary."""
    monkeypatch.setattr(importing, "PROGRESS_EVERY", 2)
    out, err = io.StringIO(), io.StringIO()
    path = str(FIXTURES / "renamed_pairs.csv")
    mapping = str(FIXTURES / "renamed_mapping.json")
    call_command("import_pairs", path, dataset="csv", mapping=mapping, stdout=out, stderr=err)
    assert err.getvalue().splitlines() == ["2 records read"]
    assert len(out.getvalue().splitlines()) == 1
