"""No server path leaves the server: a dataset keeps the imported file's name and sha256, and the
export's dataset card and manifest, the pages and the API show those, never where the file lay.
The campaign name (and every other name) is escaped in the card's Markdown."""

import hashlib
import importlib
import json
from pathlib import Path

from django.apps import apps
from django.contrib.auth.models import User
from markdown_it import MarkdownIt

from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.datasets.importing import import_path
from prb_annotate.exports.export import export_split
from prb_annotate.exports.markdown import plain_text
from prb_annotate.models import Dataset
from tests.support.exports import jsonl, records

HOSTILE_NAME = "# Pwn [click](javascript:alert(1)) <img src=x onerror=alert(1)> | a | *b* \n---"


def imported(tmp_path: Path) -> tuple[Dataset, Path]:
    folder = tmp_path / "secret-server-folder" / "uploads"
    folder.mkdir(parents=True)
    path = folder / "prb.jsonl"
    path.write_bytes(jsonl(records()))
    return import_path(path, "prb").dataset, path


def test_it_keeps_the_files_name_and_sha256_not_its_path(
    db: None, tmp_path: Path, manager: User, login
) -> None:
    dataset, path = imported(tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert (dataset.source, dataset.source_sha256) == ("prb.jsonl", digest)
    campaign = create_campaign(dataset, "paths", k=1)
    manifest = export_split(campaign, tmp_path / "out", subset="all")
    assert manifest["dataset"]["source"] == "prb.jsonl"
    assert manifest["dataset"]["source_sha256"] == digest
    card = (tmp_path / "out" / "README.md").read_text()
    assert f"(prb.jsonl, sha256 `{digest}`)" in card
    client = login(manager)
    shown = [
        card,
        (tmp_path / "out" / "manifest.json").read_text(),
        client.get("/datasets/").content.decode(),
        client.get(f"/datasets/{dataset.pk}/").content.decode(),
        client.get("/api/datasets/").content.decode(),
        client.get(f"/api/datasets/{dataset.pk}/").content.decode(),
    ]
    for text in shown:
        assert "secret-server-folder" not in text
        assert str(tmp_path) not in text
    assert digest in shown[3]
    assert json.loads(shown[5])["source_sha256"] == digest


def test_a_folder_keeps_its_name_and_the_sha256_of_its_listing(db: None, tmp_path: Path) -> None:
    folder = tmp_path / "server" / "snapshot"
    (folder / "Art").mkdir(parents=True)
    (folder / "Life").mkdir()
    (folder / "Art" / "test.jsonl").write_bytes(jsonl(records()[:2]))
    (folder / "Life" / "test.jsonl").write_bytes(jsonl(records()[4:6]))
    dataset = import_path(folder, "snap").dataset
    listing = "".join(
        f"{hashlib.sha256((folder / name).read_bytes()).hexdigest()}  {name}\n"
        for name in ("Art/test.jsonl", "Life/test.jsonl")
    )
    assert dataset.source == "snapshot"
    assert dataset.source_sha256 == hashlib.sha256(listing.encode()).hexdigest()


def test_the_migration_forgets_the_paths_stored_before(db: None) -> None:
    Dataset.objects.create(name="old", source="/srv/data/private/prb.jsonl")
    Dataset.objects.create(name="up", source="upload:prb.csv")
    Dataset.objects.create(name="folder", source="/srv/data/snapshot/")
    migration = importlib.import_module("prb_annotate.migrations.0008_security_hardening")
    migration.forget_server_paths(apps, None)
    sources = dict(Dataset.objects.values_list("name", "source"))
    assert sources == {"old": "prb.jsonl", "up": "upload:prb.csv", "folder": "snapshot"}


def rendered(card: str) -> str:
    """The card's body as a Markdown renderer that allows raw HTML and tables shows it."""
    body = card.split("---\n", 2)[2]
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(body)


def test_it_escapes_the_campaign_name_in_the_dataset_card(db: None, tmp_path: Path) -> None:
    dataset, _ = imported(tmp_path)
    dataset.name = "data <b>set</b>"
    dataset.save()
    campaign = create_campaign(dataset, HOSTILE_NAME, k=1)
    export_split(campaign, tmp_path / "out", subset="all")
    card = (tmp_path / "out" / "README.md").read_text()
    html = rendered(card)
    for tag in ("<a ", "<img", "<b>", "<em>", "<hr"):
        assert tag not in html, tag
    assert html.count("<h1>") == 1
    heading = html.split("<h1>")[1].split("</h1>")[0]
    one_line = HOSTILE_NAME.replace("\n", " ")
    expected = one_line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert heading.startswith(expected.replace('"', "&quot;"))
    # The table keeps its four columns: a pipe in a category cannot add one.
    assert "Society &amp; Culture" in html
    assert plain_text("a|b") == "a\\|b"
