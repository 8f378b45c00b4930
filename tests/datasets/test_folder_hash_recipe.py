"""The shell recipe docs/export.md gives for a folder's hash reproduces the stored hash, with
folders whose names sort differently as text and as paths (``Art`` and ``Art-Design``)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from prb_annotate.datasets.importing import import_path

DOC = Path(__file__).resolve().parents[2] / "docs" / "export.md"


def documented_recipe() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("**Folder hashes**") :]
    found = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert found is not None
    return found.group(1)


def record(external_id: str) -> str:
    return (
        f'{{"id": "{external_id}", "question": "q {external_id}", "chosen": "a", '
        '"rejected": "b"}\n'
    )


@pytest.mark.skipif(
    not all(shutil.which(tool) for tool in ("bash", "sha256sum", "find", "xargs", "sort", "tr")),
    reason="needs sha256sum and the coreutils",
)
def test_the_documented_recipe_gives_the_stored_folder_hash(db, tmp_path: Path) -> None:
    folder = tmp_path / "snapshot"
    for config, name in [
        ("Art", "test.jsonl"),
        ("Art", "sub/more.jsonl"),
        ("Art-Design", "test.jsonl"),
        ("Art_Z", "Test.JSONL"),
        ("Artz", "test.csv"),
    ]:
        path = folder / config / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".csv":
            path.write_text("id,question,chosen,rejected\n" + f"{config},q,a,b\n")
        else:
            path.write_text(record(f"{config}/{name}"))
    (folder / ".cache").mkdir()
    (folder / ".cache" / "x.jsonl").write_text("not read\n")
    (folder / "dataset_infos.json").write_text("{}")
    (folder / "notes.txt").write_text("not read")

    report = import_path(folder, "art")
    # Text order would put Art-Design/ first: the import reads Art/ first.
    assert report.files[:3] == ["Art/sub/more.jsonl", "Art/test.jsonl", "Art-Design/test.jsonl"]

    script = documented_recipe().replace("cd FOLDER", f"cd '{folder}'")
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split()[0] == report.source_sha256
    assert report.dataset.source_sha256 == report.source_sha256
