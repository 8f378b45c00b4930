"""Bad input: every problem names its file, line (or row) and field, at most 20 are listed, and
nothing is written — not even the dataset row."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prb_annotate.datasets.importing import ImportFailed, import_path
from prb_annotate.models import Dataset
from tests.support.importing import counts, official, write_jsonl


def lines(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


GOOD = official(0)

# (case, file name, file text, expected start of the first problem, expected fragment of it)
CASES = [
    (
        "invalid JSON",
        "data.jsonl",
        lines(GOOD, '{"id": "r001", "question": "Q?",}'),
        "data.jsonl line 2: invalid JSON",
        "Expecting property name",
    ),
    (
        "a line that is not an object",
        "data.jsonl",
        lines(GOOD, "[1, 2]"),
        "data.jsonl line 2: expected a JSON object",
        "got a list",
    ),
    (
        "missing required field",
        "data.jsonl",
        lines(GOOD, {k: v for k, v in official(1).items() if k != "rejected"}),
        'data.jsonl line 2 (id "r001"), field "rejected"',
        'missing required field "rejected"',
    ),
    (
        "missing question and prompt",
        "data.jsonl",
        lines({"id": "x", "chosen": "C", "rejected": "R"}),
        'data.jsonl line 1 (id "x"), field "question"',
        'missing required field "question" (or "prompt")',
    ),
    (
        "profile that is not a list",
        "data.jsonl",
        lines(GOOD, GOOD | {"id": "r007", "profile": "I like films"}),
        'data.jsonl line 2 (id "r007"), field "profile"',
        "expected a list of objects, got a string",
    ),
    (
        "profile of strings",
        "data.jsonl",
        lines(GOOD | {"profile": ["one post", "another"]}),
        'data.jsonl line 1 (id "r000"), field "profile"',
        "expected a list of objects, got a list containing a string",
    ),
    (
        "profile post without text",
        "data.jsonl",
        lines(GOOD | {"profile": [{"text": "ok"}, {"id": "p2", "body": "no text"}]}),
        'data.jsonl line 1 (id "r000"), field "profile[1].text"',
        'missing required key "text"',
    ),
    (
        "rubric aspect of the wrong type",
        "data.jsonl",
        lines(GOOD | {"rubric_aspects": [{"aspect": 3}]}),
        'data.jsonl line 1 (id "r000"), field "rubric_aspects[0].aspect"',
        "expected a string, got a number",
    ),
    (
        "answer that is not text",
        "data.jsonl",
        lines(GOOD | {"chosen": ["a", "list"]}),
        'data.jsonl line 1 (id "r000"), field "chosen"',
        "expected a string, got a list",
    ),
    (
        "empty text",
        "data.jsonl",
        lines(GOOD, official(1, chosen="   \n")),
        'data.jsonl line 2 (id "r001"), field "chosen"',
        "empty text",
    ),
    (
        "empty prompt of a plain record",
        "data.jsonl",
        lines({"prompt": "", "chosen": "C", "rejected": "R"}),
        'data.jsonl line 1, field "prompt"',
        "empty text",
    ),
    (
        "text over the limit",
        "data.jsonl",
        lines(official(1, profile=[{"text": "x" * 101}])),
        'data.jsonl line 1 (id "r001"), field "profile[0].text"',
        "text of 101 characters is over the limit of 100",
    ),
    (
        "duplicate id",
        "data.jsonl",
        lines(official(1), official(2), official(1, chosen="Other.")),
        'data.jsonl line 3 (id "r001"), field "id"',
        "duplicate id, first seen on line 1",
    ),
    (
        "duplicate content without id",
        "data.jsonl",
        lines(
            {"prompt": "P?", "chosen": "C", "rejected": "R"},
            {"prompt": "P?", "chosen": "C", "rejected": "R"},
        ),
        'data.jsonl line 2 (id "sha256:',
        "same content as line 1",
    ),
    (
        "id of the wrong type",
        "data.jsonl",
        lines(GOOD | {"id": ["r0"]}),
        'data.jsonl line 1, field "id"',
        "expected a string, got a list",
    ),
    (
        "category of the wrong type",
        "data.jsonl",
        lines(GOOD | {"category": {"name": "Art"}}),
        'data.jsonl line 1 (id "r000"), field "category"',
        "expected a string, got an object",
    ),
    (
        "NUL character nested in a post",
        "data.jsonl",
        lines(GOOD | {"profile": [{"text": "ok"}, {"text": "bad \u0000 byte"}]}),
        'data.jsonl line 1 (id "r000"), field "profile[1].text"',
        "NUL character",
    ),
    (
        "lone surrogate",
        "data.jsonl",
        '{"id": "s", "question": "Q?", "chosen": "broken \\ud83d pair", "rejected": "R"}\n',
        'data.jsonl line 1 (id "s"), field "chosen"',
        "lone surrogate",
    ),
    (
        "not a number",
        "data.jsonl",
        '{"id": "n", "question": "Q?", "chosen": "C", "rejected": "R", "score": NaN}\n',
        'data.jsonl line 1 (id "n"), field "score"',
        "not a finite number",
    ),
    (
        "reserved field",
        "data.jsonl",
        lines(GOOD | {"_prb_shape": {}}),
        'data.jsonl line 1 (id "r000"), field "_prb_shape"',
        "reserved",
    ),
    (
        "invalid UTF-8",
        "data.jsonl",
        lines(GOOD) + '{"id": "x", "question": "caf\xe9"}\n',
        "data.jsonl line 2: not valid UTF-8",
        "",
    ),
    (
        "JSON list with a bad element",
        "data.json",
        json.dumps([GOOD, official(1, profile={"text": "x"})], indent=2),
        'data.json line 29 (id "r001"), field "profile"',
        "expected a list of objects, got an object",
    ),
    (
        "invalid JSON in a list",
        "data.json",
        "[\n" + json.dumps(GOOD) + ",\n{oops}\n]",
        "data.json line 3: invalid JSON",
        "Expecting property name",
    ),
    (
        "JSON object instead of a list",
        "data.json",
        json.dumps({"data": [GOOD]}, indent=1),
        "data.json line 1: expected a JSON list of records",
        "",
    ),
    (
        "CSV cell with invalid JSON",
        "data.csv",
        'id,question,profile,chosen,rejected\nr1,Q?,"[{""text"": ""a""}]",C,R\nr2,Q?,[{oops,C,R\n',
        'data.csv line 3, field "profile"',
        "invalid JSON in the cell",
    ),
    (
        "CSV row with too few cells",
        "data.csv",
        "id,question,chosen,rejected\nr1,Q?,C,R\nr2,Q?,C\n",
        "data.csv line 3: 3 cells where the header has 4",
        "",
    ),
    (
        "CSV without a required column",
        "data.csv",
        "id,question,chosen\nr1,Q?,C\n",
        'data.csv line 1, field "rejected"',
        'missing column "rejected"',
    ),
    (
        "JSON nested too deeply",
        "data.jsonl",
        lines(GOOD) + "[" * 100_000 + "\n",
        "data.jsonl line 2: JSON nested too deeply",
        "",
    ),
    (
        "empty file",
        "data.jsonl",
        "\n\n",
        "data.jsonl: no records found",
        "",
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "where", "fragment"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_it_reports_bad_input_by_file_line_and_field(db, tmp_path, name, text, where, fragment):
    path = tmp_path / name
    if "\xe9" in text:
        path.write_bytes(text.encode("latin-1"))
    else:
        path.write_text(text, encoding="utf-8")
    before = counts()

    with pytest.raises(ImportFailed) as failure:
        import_path(path, "prb", max_text_chars=100)

    first = str(failure.value.problems[0])
    assert first.startswith(where), first
    assert fragment in first
    assert first in str(failure.value)
    assert counts() == before


def test_it_reports_parquet_problems_by_row(db, tmp_path) -> None:
    records = [official(n) for n in range(5)]
    records[3]["chosen"] = ""
    path = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(records), path)
    with pytest.raises(ImportFailed) as failure:
        import_path(path, "prb")
    assert str(failure.value.problems[0]) == (
        'test.parquet row 4 (id "r003"), field "chosen": empty text'
    )
    assert counts() == (0, 0)


def test_it_reports_a_file_that_is_not_parquet(db, tmp_path) -> None:
    path = tmp_path / "test.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(ImportFailed, match=r"test\.parquet: invalid Parquet file"):
        import_path(path, "prb")


def test_it_reports_missing_paths_and_unknown_formats(db, tmp_path) -> None:
    with pytest.raises(ImportFailed, match="no such file or folder"):
        import_path(tmp_path / "missing.jsonl", "prb")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ImportFailed, match=r"notes.txt: unsupported file type \(expected one of"):
        import_path(tmp_path / "notes.txt", "prb")
    with pytest.raises(
        ImportFailed, match=r"no \.arrow, \.csv, \.json, \.jsonl, \.ndjson, \.parquet files"
    ):
        import_path(tmp_path, "prb")
    assert counts() == (0, 0)


def test_it_names_the_file_inside_a_snapshot_folder(db, tmp_path) -> None:
    write_jsonl(tmp_path / "Society_and_Culture" / "test.jsonl", [official(1), official(2)])
    write_jsonl(tmp_path / "Lifestyle" / "test.jsonl", [official(3), official(1)])
    with pytest.raises(ImportFailed) as failure:
        import_path(tmp_path, "prb")
    # Files are read in sorted order: Lifestyle/ first.
    assert str(failure.value.problems[0]) == (
        'Society_and_Culture/test.jsonl line 1 (id "r001"), field "id": '
        "duplicate id, first seen on Lifestyle/test.jsonl line 2"
    )


def test_it_lists_at_most_20_problems(db, tmp_path) -> None:
    records = [official(n, chosen="") for n in range(25)]
    path = write_jsonl(tmp_path / "data.jsonl", records)
    with pytest.raises(ImportFailed) as failure:
        import_path(path, "prb")
    message = str(failure.value)
    assert message.startswith("Import failed with 25 problems; nothing was imported.")
    assert message.count('field "chosen": empty text') == 20
    assert 'data.jsonl line 20 (id "r019")' in message
    assert "line 21" not in message
    assert message.rstrip().endswith("... and 5 more")
    assert failure.value.total == 25
    assert len(failure.value.problems) == 25
    assert counts() == (0, 0)


def test_it_lists_problems_in_file_order(db, tmp_path) -> None:
    """A conflict with a stored row is found a batch later than a bad line; the list still
    follows the file."""
    import_path(write_jsonl(tmp_path / "v1.jsonl", [official(1)]), "prb")
    path = write_jsonl(tmp_path / "v2.jsonl", [official(1, chosen="New."), official(2, chosen="")])
    with pytest.raises(ImportFailed) as failure:
        import_path(path, "prb")
    assert [problem.line for problem in failure.value.problems] == [1, 2]


@pytest.mark.django_db(transaction=True)
def test_it_writes_nothing_when_a_record_after_3000_good_ones_is_bad(tmp_path) -> None:
    """Two batches are already written when the bad record comes: the transaction rolls them
    back, and an existing dataset keeps exactly its rows."""
    import_path(write_jsonl(tmp_path / "first.jsonl", [official(n) for n in range(3)]), "prb")
    records = [official(n) for n in range(3, 3003)]
    records.append(official(3003, profile=[{"id": "p", "category": "x"}]))
    path = write_jsonl(tmp_path / "big.jsonl", records)
    before = counts()
    source = Dataset.objects.get().source

    with pytest.raises(ImportFailed) as failure:
        import_path(path, "prb")

    assert str(failure.value.problems[0]) == (
        'big.jsonl line 3001 (id "r3003"), field "profile[0].text": missing required key "text"'
    )
    assert counts() == before
    assert Dataset.objects.get().source == source

    with pytest.raises(ImportFailed):
        import_path(path, "new-dataset")
    assert counts() == before
    assert not Dataset.objects.filter(name="new-dataset").exists()


def test_it_uses_the_size_limit_from_settings(db, tmp_path, settings) -> None:
    settings.PRB_MAX_TEXT_CHARS = 30
    path = write_jsonl(tmp_path / "data.jsonl", [official(1)])
    with pytest.raises(ImportFailed, match="over the limit of 30"):
        import_path(path, "prb")
    assert import_path(path, "prb", max_text_chars=1000).created == 1


def test_it_refuses_an_empty_dataset_name(db, tmp_path) -> None:
    path = write_jsonl(tmp_path / "data.jsonl", [official(1)])
    with pytest.raises(ImportFailed, match="dataset name"):
        import_path(path, "  ")
    assert counts() == (0, 0)


def test_it_reads_problems_off_the_exception(db, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "data.jsonl", [official(1, profile="x")])
    with pytest.raises(ImportFailed) as failure:
        import_path(path, "prb")
    problem = failure.value.problems[0]
    assert problem.as_dict() == {
        "file": "data.jsonl",
        "line": 1,
        "unit": "line",
        "record_id": "r001",
        "field": "profile",
        "message": "expected a list of objects, got a string",
    }
