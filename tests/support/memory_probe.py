"""One upload bomb read in a fresh process, reporting the process's peak memory.

``python -m tests.support.memory_probe KIND FOLDER`` sets up Django on a fresh SQLite file in
FOLDER, writes the bomb KIND names there (streamed, so that making it grows nothing), notes
the peak resident size (``ru_maxrss``), imports the bomb as an upload is imported, and prints
one JSON line: the peak before and after, and the refusal's message. The budget comes from the
environment (``PRB_UPLOAD_MAX_BYTES``, ``PRB_UPLOAD_MAX_EXPANDED_BYTES``).
"""

import io
import json
import os
import resource
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

MIB = 1024 * 1024
ROW = {"question": "Why?", "chosen": "Yes.", "rejected": "No."}


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def parquet_bomb(rows: int, value_bytes: int, column: str = "question", ids: str = "") -> bytes:
    """``rows`` records whose ``column`` points at one text of ``value_bytes`` stored once;
    with ``ids``, each record has an id of that prefix."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    text = pa.DictionaryArray.from_arrays(
        pa.array([0] * rows, pa.int32()), pa.array(["a" * value_bytes])
    )
    others = {key: [value] * rows for key, value in ROW.items() if key != column}
    if ids:
        others["id"] = [f"{ids}{index}" for index in range(rows)]
    table = pa.table({column: text, **others})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", use_dictionary=True)
    return sink.getvalue()


def zipped(path: Path, member: str, head: bytes, fill: int, tail: bytes) -> None:
    """A zip of one member: ``head``, ``fill`` bytes of "a" written a MiB at a time, ``tail``."""
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open(member, "w", force_zip64=True) as out,
    ):
        out.write(head)
        chunk = b"a" * MIB
        for _ in range(fill // MIB):
            out.write(chunk)
        out.write(tail)


# A JSON Lines record whose question is the fill between these.
LINE_HEAD = b'{"chosen": "Yes.", "rejected": "No.", "question": "'
LINE_TAIL = b'"}\n'


def make(kind: str, folder: Path, held: int, limit: int) -> Path:
    """The bomb file for ``kind``: each decodes to far more than the budget, or holds a line
    or a file past what may be held at once."""
    big = 4 * limit  # well past the budget, a few KB on disk
    line = held + MIB  # past what may be held at once, within the budget
    if kind in ("dataset-parquet", "answers-parquet"):
        path = folder / "bomb.parquet"
        column = "question" if kind == "dataset-parquet" else "comment"
        path.write_bytes(parquet_bomb(1000, big // 1000, column))
    elif kind == "dataset-zip-parquet":
        path = folder / "bomb.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("data/train.parquet", parquet_bomb(1000, big // 1000))
    elif kind == "dataset-zip-jsonl-declared":
        path = folder / "bomb.zip"
        zipped(path, "data/train.jsonl", LINE_HEAD, big, LINE_TAIL)
    elif kind == "dataset-zip-jsonl-line":
        path = folder / "bomb.zip"
        zipped(path, "data/train.jsonl", LINE_HEAD, line, LINE_TAIL)
    elif kind == "dataset-zip-csv-line":
        path = folder / "bomb.zip"
        zipped(path, "data/train.csv", b'question,chosen,rejected\n"', line, b'",Yes.,No.\n')
    elif kind == "dataset-zip-json":
        path = folder / "bomb.zip"
        zipped(path, "data/train.json", b"[" + LINE_HEAD, line, LINE_TAIL.rstrip() + b"]")
    elif kind == "answers-jsonl":
        path = folder / "answers.jsonl"
        head = b'{"pair_id": "p1", "annotator": "a", "comment": "'
        path.write_bytes(head + b"a" * held + b'"}\n')
    elif kind == "answers-label-studio":
        path = folder / "answers.json"
        path.write_bytes(b'[{"data": {"id": "' + b"a" * held + b'"}}]')
    else:
        raise SystemExit(f"unknown kind {kind}")
    return path


def importer(kind: str, path: Path) -> Callable[[], object]:
    from django.contrib.auth.models import User
    from django.core.files.uploadedfile import SimpleUploadedFile

    from prb_annotate.campaigns.external.importing import import_upload as import_answers
    from prb_annotate.campaigns.lifecycle import create_campaign
    from prb_annotate.datasets.archives import import_uploaded_file
    from prb_annotate.datasets.importing import import_upload

    if kind.startswith("dataset"):
        return lambda: import_uploaded_file(path.open("rb"), path.name, "bomb")
    pairs = io.BytesIO(json.dumps({"id": "p1", **ROW}).encode())
    dataset = import_upload(pairs, "pairs.jsonl", "pairs").dataset
    manager = User.objects.create_user("manager", is_staff=True)
    campaign = create_campaign(dataset, "elsewhere", k=1, external=True, created_by=manager)

    upload = SimpleUploadedFile(path.name, path.read_bytes())
    return lambda: import_answers(campaign, upload, None, manager)  # type: ignore[arg-type]


def main(kind: str, folder: Path) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{folder / 'probe.sqlite3'}"
    os.environ.setdefault("SECRET_KEY", "memory-probe-" + "k" * 50)
    os.environ["DJANGO_SETTINGS_MODULE"] = "prb_annotate.settings"
    import django

    django.setup()
    import pyarrow.parquet  # noqa: F401  (loaded before the baseline, as in a worker)
    from django.conf import settings
    from django.core.management import call_command

    from prb_annotate.datasets.importing import ImportFailed

    call_command("migrate", verbosity=0)
    path = make(kind, folder, settings.PRB_UPLOAD_MAX_BYTES, settings.PRB_UPLOAD_MAX_EXPANDED_BYTES)
    run = importer(kind, path)
    before = peak_mib()
    try:
        run()
        refused = None
    except ImportFailed as failed:
        refused = str(failed)
    print(json.dumps({"before": before, "after": peak_mib(), "refused": refused}))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
