"""Reading exported splits: every file format, HF-style folders, both record shapes."""

import csv
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from evaluation.errors import EvaluationError
from evaluation.records import PairRecord, ProfilePost, load_records, to_pair_record
from tests.support import tiny

RECORDS = tiny.records(5)


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_csv(path, rows):
    # As the exporter writes CSV: text as is, nested fields as JSON.
    columns = list(rows[0])
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(columns)
        for row in rows:
            writer.writerow(
                [v if isinstance(v, str) else json.dumps(v) for v in (row[c] for c in columns)]
            )
    return path


def test_it_reads_the_same_pairs_from_every_file_format(tmp_path):
    """JSONL, JSON, CSV and Parquet files of the same records give the same pairs."""
    expected = load_records(write_jsonl(tmp_path / "split.jsonl", RECORDS))
    (tmp_path / "split.json").write_text(json.dumps(RECORDS), encoding="utf-8")
    (tmp_path / "wrapped.json").write_text(json.dumps({"data": RECORDS}), encoding="utf-8")
    write_csv(tmp_path / "split.csv", RECORDS)
    pq.write_table(pa.Table.from_pylist(RECORDS), tmp_path / "split.parquet")
    for name in ("split.json", "wrapped.json", "split.csv", "split.parquet"):
        assert load_records(tmp_path / name) == expected, name

    first = expected[0]
    assert first.id == RECORDS[0]["id"]
    assert first.question == RECORDS[0]["question"]
    assert first.profile[0] == ProfilePost(
        text=RECORDS[0]["profile"][0]["text"], id=RECORDS[0]["profile"][0]["id"], category="Hobbies"
    )


def test_it_drops_the_rubric_and_the_narrative(tmp_path):
    """Nothing of rubric_aspects or narrative survives in a pair, labels included."""
    [record] = load_records(write_jsonl(tmp_path / "split.jsonl", RECORDS[:1]))
    assert not {"rubric_aspects", "narrative"} & set(PairRecord.__dataclass_fields__)
    assert tiny.RUBRIC_CANARY not in repr(record)
    assert tiny.NARRATIVE_CANARY not in repr(record)


def test_it_reads_an_hf_style_folder(tmp_path):
    """Config sub-folders are read in name order, one split or all; top-level files such as the
    manifest and the annotations table are not records; labels say where a record came from."""
    for config, rows in (("Society", RECORDS[3:]), ("Art", RECORDS[:3])):
        (tmp_path / config).mkdir()
        write_jsonl(tmp_path / config / "test.jsonl", rows)
    train = [dict(RECORDS[0], id="train-0")]
    pq.write_table(pa.Table.from_pylist(train), tmp_path / "Art" / "train-00000-of-00001.parquet")
    (tmp_path / "manifest.json").write_text("{}", encoding="utf-8")
    write_jsonl(tmp_path / "annotations.jsonl", [{"annotator": "x"}])

    test_split = load_records(tmp_path, split="test")
    assert [r.id for r in test_split] == [r["id"] for r in RECORDS]
    assert test_split[0].labels["config"] == "Art"
    assert test_split[0].labels["split"] == "test"
    assert len(load_records(tmp_path)) == len(RECORDS) + 1  # the train split too
    with pytest.raises(EvaluationError, match="no split 'validation'"):
        load_records(tmp_path, split="validation")


def test_it_reads_the_plain_preference_shape(tmp_path):
    """prompt/chosen/rejected without id: ids are positions; other fields become labels."""
    rows = [
        {"prompt": "Which tent?", "chosen": "The light one.", "rejected": "Any.", "source": "x"},
        {
            "question": "Which stove?",
            "chosen": "Gas.",
            "rejected": "Wood.",
            "validation": {"verdict": "excluded"},
        },
    ]
    records = load_records(write_jsonl(tmp_path / "plain.jsonl", rows))
    assert [(r.id, r.question, r.profile) for r in records] == [
        ("0", "Which tent?", ()),
        ("1", "Which stove?", ()),
    ]
    assert records[0].labels == {"source": "x"}
    assert records[1].labels == {"validation.verdict": "excluded"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"chosen": None}, "field 'chosen' is missing"),
        ({"rejected": 3}, "field 'rejected' must be text"),
        ({"question": "  "}, r"field 'question \(or prompt\)' is empty"),
        ({"profile": "I hike."}, "field 'profile' must be a list"),
        ({"profile": [{"id": "p"}]}, r"profile\[0\] must be an object with a 'text'"),
    ],
)
def test_it_names_the_record_and_field_of_a_shape_error(tmp_path, change, message):
    row = {key: value for key, value in {**RECORDS[1], **change}.items() if value is not None}
    path = write_jsonl(tmp_path / "bad.jsonl", [RECORDS[0], row])
    with pytest.raises(EvaluationError, match=message) as error:
        load_records(path)
    assert "bad.jsonl:2" in str(error.value)
    assert RECORDS[1]["id"] in str(error.value)


def test_it_rejects_duplicate_ids_and_unreadable_files(tmp_path):
    with pytest.raises(EvaluationError, match="used twice"):
        load_records(write_jsonl(tmp_path / "twice.jsonl", [RECORDS[0], RECORDS[0]]))
    (tmp_path / "broken.jsonl").write_text(json.dumps(RECORDS[0]) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"broken\.jsonl:2: not valid JSON"):
        load_records(tmp_path / "broken.jsonl")
    with pytest.raises(EvaluationError, match="unknown file type"):
        load_records(write_jsonl(tmp_path / "data.txt", RECORDS))
    with pytest.raises(EvaluationError, match="no such file"):
        load_records(tmp_path / "missing.jsonl")
    assert to_pair_record({"question": "q", "chosen": "a", "rejected": "b"}, index=7).id == "7"
