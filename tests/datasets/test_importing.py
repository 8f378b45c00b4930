"""Import of every supported format and folder layout, the record round trip, re-imports,
updates, uploads and the import_pairs command."""

import csv
import hashlib
import io
import json
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connection

from prb_annotate.datasets.importing import ImportFailed, import_path, import_upload
from prb_annotate.datasets.pair_writers import INSERTED_FIELDS
from prb_annotate.datasets.records import canonical_json, pair_to_record, parse_record
from prb_annotate.models import Dataset, Pair
from tests.support.importing import ART, LIFE, counts, official, write_jsonl


def write_parquet(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(records), path)
    return path


def exported(dataset_name: str) -> list[dict]:
    pairs = Pair.objects.filter(dataset__name=dataset_name).order_by("pk")
    return [pair_to_record(pair) for pair in pairs]


def test_it_imports_jsonl_in_the_official_schema(db, tmp_path) -> None:
    path = write_jsonl(tmp_path / "data.jsonl", [official(1), official(2, category=LIFE)])
    report = import_path(path, "prb")
    assert (report.created, report.updated, report.unchanged) == (2, 0, 0)
    assert report.categories == {ART: 1, LIFE: 1}
    assert report.dataset.name == "prb"
    # The file's name and its sha256, never where it lay on the server.
    assert report.dataset.source == "data.jsonl"
    assert report.dataset.source_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert "2 created" in report.summary
    pair = Pair.objects.get(external_id="r001")
    assert pair.question == official(1)["question"]
    assert pair.profile == official(1)["profile"]
    assert pair.rubric_aspects == official(1)["rubric_aspects"]
    assert pair.narrative == official(1)["narrative"]
    assert pair.category == ART
    assert pair.extra == {}
    assert (
        pair.content_hash
        == hashlib.sha256(
            canonical_json(
                {key: value for key, value in official(1).items() if key != "id"} | {"extra": {}}
            ).encode()
        ).hexdigest()
    )


def test_it_imports_a_json_list(db, tmp_path) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps([official(1), official(2)], indent=2), encoding="utf-8")
    assert import_path(path, "prb").created == 2
    assert exported("prb") == [official(1), official(2)]


def test_it_reads_json_lines_saved_as_json(db, tmp_path) -> None:
    """The Hugging Face json loader accepts one object per line in a .json file; so do we."""
    path = write_jsonl(tmp_path / "test.json", [official(1), official(2)])
    assert import_path(path, "prb").created == 2


def test_it_imports_csv_with_json_cells(db, tmp_path) -> None:
    path = tmp_path / "data.csv"
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "question", "profile", "rubric_aspects", "chosen", "rejected"])
        record = official(1)
        writer.writerow(
            [
                "r001",
                "A question,\nwith a comma and a line break?",
                json.dumps(record["profile"]),
                json.dumps(record["rubric_aspects"]),
                record["chosen"],
                record["rejected"],
            ]
        )
        writer.writerow(["", "Second?", "", "", "Yes.", "No."])
    report = import_path(path, "prb")
    assert report.created == 2
    first = Pair.objects.get(external_id="r001")
    assert first.question == "A question,\nwith a comma and a line break?"
    assert first.profile == record["profile"]
    second = Pair.objects.exclude(external_id="r001").get()
    assert second.external_id.startswith("sha256:")
    assert (second.profile, second.rubric_aspects, second.narrative) == ([], [], "")


def test_it_imports_parquet_with_nested_columns(db, tmp_path) -> None:
    records = [official(index) for index in range(2500)]
    path = write_parquet(tmp_path / "test-00000-of-00001.parquet", records)
    report = import_path(path, "prb")
    assert report.created == 2500
    assert exported("prb")[:3] == records[:3]


def test_it_imports_an_hf_snapshot_folder(db, tmp_path) -> None:
    """One sub-folder per config; a record without a category takes its config's name, and
    metadata, hidden cache folders and other files are skipped."""
    root = tmp_path / "Personalized-RewardBench"
    uncategorized = [
        {key: value for key, value in official(n).items() if key != "category"} for n in (1, 2)
    ]
    write_parquet(root / ART / "test-00000-of-00001.parquet", uncategorized)
    plain = [{"prompt": "How do I keep a journal?", "chosen": "A", "rejected": "B"}]
    write_jsonl(root / LIFE / "test.jsonl", [*plain, official(3, category="Explicit")])
    (root / "README.md").write_text("# Personalized RewardBench\n")
    (root / "dataset_infos.json").write_text('{"default": {}}')
    write_jsonl(root / ".cache" / "huggingface" / "download" / "x.jsonl", [{"not": "data"}])
    (root / ".gitattributes").write_text("*.parquet filter=lfs\n")

    report = import_path(root, "prb")

    assert report.created == 4
    assert report.files == [
        f"{ART}/test-00000-of-00001.parquet",
        f"{LIFE}/test.jsonl",
    ]
    assert report.categories == {ART: 2, LIFE: 1, "Explicit": 1}
    assert Pair.objects.get(question__startswith="How do I keep").category == LIFE
    assert Pair.objects.get(external_id="r003").category == "Explicit"


def test_it_gives_records_back_exactly_as_imported(db, tmp_path) -> None:
    """Round trip: import, then pair_to_record, gives each input dict back (shape included)."""
    records = [
        official(1, source="reddit", meta={"z": 1, "a": [1, {"y": None, "b": True}]}),
        {"prompt": "Plain prompt?", "chosen": "Good.", "rejected": "Bad.", "score": 0.5},
        {"id": "q2", "question": "Plain question?", "chosen": "C", "rejected": "R"},
        {"id": 17, "prompt": "Integer id?", "chosen": "C", "rejected": "R", "category": None},
        official(4, narrative=None, profile=None, question="Emoji 🎬 and accents: café?"),
        official(5, profile=[{"text": "A post with no id", "score": 3, "category": "Misc"}]),
        {**official(6), "prompt": "A prompt kept as an unknown field"},
    ]
    write_jsonl(tmp_path / "data.jsonl", records)
    import_path(tmp_path / "data.jsonl", "prb")

    assert exported("prb") == records
    # Official records keep the official key order.
    assert list(exported("prb")[0]) == [*official(1).keys(), "meta", "source"]


def test_it_keeps_unknown_fields_in_extra(db, tmp_path) -> None:
    record = official(1, source="reddit", votes={"up": 3, "down": 1}, tags=["a", "b"])
    import_path(write_jsonl(tmp_path / "data.jsonl", [record]), "prb")
    pair = Pair.objects.get()
    assert pair.extra == {"source": "reddit", "votes": {"up": 3, "down": 1}, "tags": ["a", "b"]}


def test_it_names_records_without_id_by_their_content(db, tmp_path) -> None:
    plain = {"prompt": "Same content?", "chosen": "Yes.", "rejected": "No."}
    other = {"prompt": "Other content?", "chosen": "Yes.", "rejected": "No."}
    path = write_jsonl(tmp_path / "data.jsonl", [plain, other])
    import_path(path, "prb")
    ids = sorted(Pair.objects.values_list("external_id", flat=True))
    assert len(ids) == 2
    assert all(value.startswith("sha256:") for value in ids)
    assert all(len(value) == len("sha256:") + 16 for value in ids)
    # The same content gets the same id: importing again is a no-op.
    assert import_path(path, "prb").unchanged == 2
    assert sorted(Pair.objects.values_list("external_id", flat=True)) == ids


def test_it_reimports_the_same_file_as_a_no_op(db, tmp_path) -> None:
    path = write_jsonl(tmp_path / "data.jsonl", [official(n) for n in range(5)])
    import_path(path, "prb")
    before = list(Pair.objects.values_list("pk", "external_id", "content_hash").order_by("pk"))

    report = import_path(path, "prb")

    assert (report.created, report.updated, report.unchanged) == (0, 0, 5)
    assert report.summary == 'nothing to do: 5 records already imported in dataset "prb"'
    after = list(Pair.objects.values_list("pk", "external_id", "content_hash").order_by("pk"))
    assert after == before


def test_it_adds_new_records_to_an_existing_dataset(db, tmp_path) -> None:
    import_path(write_jsonl(tmp_path / "a.jsonl", [official(1), official(2)]), "prb")
    report = import_path(write_jsonl(tmp_path / "b.jsonl", [official(2), official(3)]), "prb")
    assert (report.created, report.unchanged) == (1, 1)
    assert Pair.objects.count() == 3
    assert Dataset.objects.get().source == "b.jsonl"
    digest = hashlib.sha256((tmp_path / "b.jsonl").read_bytes()).hexdigest()
    assert Dataset.objects.get().source_sha256 == digest


def test_it_refuses_changed_content_unless_asked_to_update(db, tmp_path) -> None:
    import_path(write_jsonl(tmp_path / "v1.jsonl", [official(1), official(2)]), "prb")
    pks = dict(Pair.objects.values_list("external_id", "pk"))
    changed = [official(1, chosen="A better answer."), official(2)]
    path = write_jsonl(tmp_path / "v2.jsonl", changed)
    before = counts()

    with pytest.raises(ImportFailed) as failure:
        import_path(path, "prb")

    message = str(failure.value)
    assert 'v2.jsonl line 1 (id "r001"), field "chosen": already in dataset "prb"' in message
    assert "use --update" in message
    assert counts() == before
    assert Pair.objects.get(external_id="r001").chosen == official(1)["chosen"]

    report = import_path(path, "prb", update=True)

    assert (report.created, report.updated, report.unchanged) == (0, 1, 1)
    pair = Pair.objects.get(external_id="r001")
    assert pair.chosen == "A better answer."
    assert pair.pk == pks["r001"]
    assert pair_to_record(pair) == changed[0]


def test_it_names_every_changed_field_in_a_conflict(db, tmp_path) -> None:
    import_path(write_jsonl(tmp_path / "v1.jsonl", [official(1)]), "prb")
    changed = official(1, narrative="Changed.", source="new field")
    with pytest.raises(ImportFailed) as failure:
        import_path(write_jsonl(tmp_path / "v2.jsonl", [changed]), "prb")
    assert "(narrative, source differ)" in str(failure.value)
    assert failure.value.problems[0].field == "id"


def test_it_imports_uploads_of_every_format(db, tmp_path) -> None:
    jsonl = "".join(json.dumps(official(n)) + "\n" for n in range(3)).encode()
    parquet = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([official(n) for n in range(3, 6)]), parquet)
    csv_text = b"question,chosen,rejected\nWhy?,Because.,Dunno.\n"

    assert import_upload(jsonl, "upload.jsonl", "up").created == 3
    upload = SimpleUploadedFile("data.parquet", parquet.getvalue())
    assert import_upload(upload, "data.parquet", "up").created == 3
    assert import_upload(io.BytesIO(csv_text), "x/data.csv", "up").created == 1
    listed = json.dumps([official(9)]).encode()
    report = import_upload(SimpleUploadedFile("d.json", listed), "d.json", "up")
    assert report.created == 1
    assert report.dataset.source == "upload:d.json"
    assert Pair.objects.filter(dataset__name="up").count() == 8


def test_it_reports_upload_problems_with_the_file_name(db) -> None:
    data = (json.dumps(official(1)) + "\n" + json.dumps(official(2, chosen="")) + "\n").encode()
    with pytest.raises(ImportFailed) as failure:
        import_upload(data, "mine.jsonl", "up")
    assert (
        str(failure.value.problems[0])
        == 'mine.jsonl line 2 (id "r002"), field "chosen": empty text'
    )
    with pytest.raises(ImportFailed, match="unsupported file type"):
        import_upload(data, "mine.txt", "up")
    assert counts() == (0, 0)


def test_it_hashes_the_canonical_json_of_the_content(db) -> None:
    """The hash is built from per-field pieces; it must equal the hash of the whole text."""
    raw = official(1, extra_field={"b": [1, 2], "a": "é"}, narrative="Ünïcode ✓ 🎬")
    record = parse_record(raw, max_text_chars=1000)
    whole = canonical_json(record.content())
    assert record.content_hash == hashlib.sha256(whole.encode()).hexdigest()
    reordered = dict(reversed(list(raw.items())))
    assert parse_record(reordered, max_text_chars=1000).content_hash == record.content_hash


def test_it_imports_from_the_command_line(db, tmp_path) -> None:
    path = write_jsonl(tmp_path / "data.jsonl", [official(1), official(2, category=LIFE)])
    out = io.StringIO()
    call_command("import_pairs", str(path), "--dataset", "cli", stdout=out)
    assert out.getvalue().strip() == (
        f'dataset "cli": 2 created, 0 updated, 0 unchanged (2 records: {ART} 1, {LIFE} 1)'
    )

    out = io.StringIO()
    call_command("import_pairs", str(path), "--dataset", "cli", stdout=out)
    assert "nothing to do: 2 records already imported" in out.getvalue()

    changed = write_jsonl(tmp_path / "changed.jsonl", [official(1, chosen="New.")])
    with pytest.raises(CommandError, match=r'changed.jsonl line 1 \(id "r001"\), field "chosen"'):
        call_command("import_pairs", str(changed), "--dataset", "cli")
    out = io.StringIO()
    call_command("import_pairs", str(changed), "--dataset", "cli", "--update", stdout=out)
    assert "1 updated" in out.getvalue()

    long = write_jsonl(tmp_path / "long.jsonl", [official(3, narrative="x" * 60)])
    with pytest.raises(CommandError, match="over the limit of 50") as failure:
        call_command("import_pairs", str(long), "--dataset", "cli", "--max-text-chars", "50")
    assert 'long.jsonl line 1 (id "r003"), field "narrative"' in str(failure.value)
    assert Pair.objects.count() == 2


def test_it_reads_an_upload_from_the_start(db) -> None:
    """A form or a size check may have read the upload already."""
    upload = SimpleUploadedFile("data.csv", b"prompt,chosen,rejected\nWhy?,Because.,Dunno.\n")
    upload.read()
    report = import_upload(upload, "data.csv", "up")
    assert report.created == 1
    assert pair_to_record(Pair.objects.get()) == {
        "prompt": "Why?",
        "chosen": "Because.",
        "rejected": "Dunno.",
    }


def test_it_describes_the_import_as_a_dict(db, tmp_path) -> None:
    path = write_jsonl(tmp_path / "data.jsonl", [official(1)])
    report = import_path(path, "prb", source="s3://bucket/data.jsonl")
    assert report.as_dict() == {
        "dataset": "prb",
        "dataset_id": report.dataset.pk,
        "source": "s3://bucket/data.jsonl",
        "source_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "created": 1,
        "updated": 0,
        "unchanged": 0,
        "categories": {ART: 1},
        "files": ["data.jsonl"],
        "summary": report.summary,
    }


def test_it_writes_every_column_of_a_pair() -> None:
    """Inserts bypass the ORM for speed, so a new Pair column must be added to them too."""
    columns = {field.name for field in Pair._meta.concrete_fields} - {"id"}
    assert set(INSERTED_FIELDS) == columns


@pytest.mark.django_db(transaction=True)
def test_it_serializes_concurrent_imports_into_one_dataset(tmp_path) -> None:
    """Two overlapping imports at once: the second waits for the first, then finds the shared
    records already there, instead of failing on the unique constraint."""
    first = write_jsonl(tmp_path / "a.jsonl", [official(n) for n in range(0, 2000)])
    second = write_jsonl(tmp_path / "b.jsonl", [official(n) for n in range(1000, 3000)])
    # An existing dataset: creating a new one would serialize the two imports by itself.
    Dataset.objects.create(name="shared")
    start = threading.Barrier(2)
    reports, errors = [], []

    def run(path: Path) -> None:
        try:
            start.wait()
            reports.append(import_path(path, "shared"))
        except Exception as exc:  # reported by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(path,)) for path in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert sum(report.created for report in reports) == 3000
    assert sum(report.unchanged for report in reports) == 1000
    assert Pair.objects.count() == 3000
    assert Dataset.objects.count() == 1


def test_it_compresses_large_values_with_lz4_on_postgresql(db, tmp_path) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL storage setting")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
        if not cursor.fetchone()[0]:
            pytest.skip("this server is built without LZ4")
    posts = [{"id": str(n), "text": f"Post {n} about films and books. " * 20} for n in range(20)]
    import_path(write_jsonl(tmp_path / "data.jsonl", [official(1, profile=posts)]), "prb")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT pg_column_compression(profile) FROM {Pair._meta.db_table}")
        assert cursor.fetchone()[0] == "lz4"
    assert Pair.objects.get().profile == posts
