"""One decode budget for every upload path: a dataset file bare or zipped (Parquet, JSON Lines,
CSV, JSON), an answer file in each reader (Parquet, JSON Lines, CSV, Label Studio's JSON).
A bomb is refused with 400 naming the limit, and a worker reading one grows by no more than a
small multiple of what the budget lets it hold at once: each path is measured in a fresh
process (its peak resident size before and after), never timed."""

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.datasets.importing import ImportFailed, import_upload
from prb_annotate.models import Assignment, Campaign, Dataset
from tests.support.memory_probe import LINE_HEAD, LINE_TAIL, parquet_bomb

MIB = 1024 * 1024
HELD = 64 * 1024
LIMIT = 256 * 1024
REPO = Path(__file__).resolve().parents[2]

PROBED = [
    "dataset-parquet",
    "dataset-zip-parquet",
    "dataset-zip-jsonl-declared",
    "dataset-zip-jsonl-line",
    "dataset-zip-csv-line",
    "dataset-zip-json",
    "answers-parquet",
    "answers-jsonl",
    "answers-label-studio",
]


@pytest.mark.parametrize("kind", PROBED)
def test_it_bounds_a_workers_peak_memory_on_every_upload_path(kind: str, tmp_path: Path) -> None:
    held, limit = 8 * MIB, 32 * MIB
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "PRB_UPLOAD_MAX_BYTES": str(held),
        "PRB_UPLOAD_MAX_EXPANDED_BYTES": str(limit),
    }
    env.pop("DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.memory_probe", kind, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=True,
    )
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    # Each bomb decodes to 4 x the budget (128 MiB) or holds a line past 8 MiB: refused ...
    assert probe["refused"] is not None, kind
    assert "PRB_UPLOAD_MAX" in probe["refused"], kind
    # ... before the worker grew by more than twice what may be held at once (the bound
    # docs/operations.md states); unbounded, the same files took 128 MiB to several GiB.
    assert probe["after"] - probe["before"] < 2 * held / MIB + 4, (kind, probe)


def zipped(members: dict[str, bytes]) -> bytes:
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return sink.getvalue()


def line_of(size: int) -> bytes:
    return LINE_HEAD + b"a" * size + LINE_TAIL


def refusal(content: bytes, name: str) -> str:
    from prb_annotate.datasets.archives import import_uploaded_file

    with pytest.raises(ImportFailed) as refused:
        import_uploaded_file(io.BytesIO(content), name, "bomb")
    return str(refused.value)


@override_settings(PRB_UPLOAD_MAX_BYTES=HELD, PRB_UPLOAD_MAX_EXPANDED_BYTES=LIMIT)
def test_it_reads_every_dataset_upload_against_one_budget(db: None) -> None:
    bomb = parquet_bomb(1000, 10_000)  # 10 MB decoded, about a KB
    assert "expands to more than 256 KiB" in refusal(bomb, "bare.parquet")
    inside = refusal(zipped({"data/train.parquet": bomb}), "zipped.zip")
    assert "data/train.parquet: the Parquet file expands to more than 256 KiB" in inside
    # Two Parquet files of 150 KiB each: within the budget alone, past it together.
    halves = {f"{part}/train.parquet": parquet_bomb(100, 1500, ids=part) for part in "ab"}
    both = refusal(zipped(halves), "two.zip")
    assert "b/train.parquet: the Parquet file expands to more than 256 KiB" in both
    # An archive declaring more than the budget is not unpacked at all.
    declared = refusal(zipped({"data/train.jsonl": line_of(LIMIT)}), "declared.zip")
    assert "declared.zip: the archive decodes to more than 256 KiB" in declared
    # One line (of JSON Lines or CSV) or a JSON list past what may be held at once.
    for member, content in [
        ("data/train.jsonl", line_of(HELD)),
        ("data/train.csv", b'question,chosen,rejected\n"' + b"a" * HELD + b'",Yes.,No.\n'),
    ]:
        message = refusal(zipped({member: content}), "line.zip")
        assert f"{member} line " in message
        assert "is longer than 64 KiB" in message
        assert "PRB_UPLOAD_MAX_BYTES" in message
    listed = refusal(zipped({"data/train.json": b"[" + line_of(HELD) + b"]"}), "list.zip")
    assert "data/train.json: the file is longer than 64 KiB" in listed
    assert not Dataset.objects.exists()
    # Within the budget, every format is read as before.
    record = {"id": "p1", "question": "Why?", "chosen": "Yes.", "rejected": "No."}
    fine = zipped({"data/train.jsonl": json.dumps(record).encode() + b"\n"})
    from prb_annotate.datasets.archives import import_uploaded_file

    assert import_uploaded_file(io.BytesIO(fine), "fine.zip", "fine").created == 1


@pytest.fixture
def elsewhere(manager: User) -> Campaign:
    record = {"id": "p1", "question": "Why?", "chosen": "Yes.", "rejected": "No."}
    dataset = import_upload(json.dumps(record).encode(), "pairs.jsonl", "pairs").dataset
    return create_campaign(dataset, "elsewhere", k=1, external=True, created_by=manager)


def answers_upload(client: Client, campaign: Campaign, name: str, content: bytes) -> dict:
    response = client.post(
        f"/api/campaigns/{campaign.pk}/answers/import/",
        {"file": SimpleUploadedFile(name, content)},
    )
    assert response.status_code == 400, (name, response.content[:300])
    assert response["Content-Type"].startswith("application/json")
    return response.json()


@override_settings(PRB_UPLOAD_MAX_BYTES=HELD, PRB_UPLOAD_MAX_EXPANDED_BYTES=LIMIT)
def test_it_answers_bombs_with_400_on_every_upload_endpoint(
    manager: User, login, elsewhere: Campaign
) -> None:
    client = login(manager)
    bomb = zipped({"data/train.parquet": parquet_bomb(1000, 10_000)})
    response = client.post(
        "/api/datasets/", {"file": SimpleUploadedFile("bomb.zip", bomb), "name": "bomb"}
    )
    assert response.status_code == 400
    assert "expands to more than 256 KiB" in json.dumps(response.json())
    comment_bomb = parquet_bomb(1000, 10_000, column="comment")
    body = answers_upload(client, elsewhere, "answers.parquet", comment_bomb)
    assert "expands to more than 256 KiB" in json.dumps(body)
    # A line, or a file read whole, past what may be held at once: refused by name before
    # it is held, in every text reader.
    long_line = b'{"pair_id": "p1", "annotator": "a", "comment": "' + b"a" * HELD + b'"}\n'
    label_studio = b'[{"data": {"id": "' + b"a" * HELD + b'"}}]'
    csv_cell = b'pair_id,annotator,comment\np1,a,"' + b"a" * HELD + b'"\n'
    for name, content in [
        ("answers.jsonl", long_line),
        ("answers.json", label_studio),
        ("answers.csv", csv_cell),
    ]:
        body = answers_upload(client, elsewhere, name, content)
        assert "is longer than 64 KiB" in json.dumps(body), name
    assert not Assignment.objects.filter(campaign=elsewhere).exists()
