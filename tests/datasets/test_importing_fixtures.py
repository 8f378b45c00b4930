"""The demo fixture and the synthetic generator: both produce records the importer accepts."""

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from django.conf import settings

from fixtures.make_synthetic import CATEGORIES, synthetic_records, write_synthetic
from prb_annotate.datasets.importing import import_path
from prb_annotate.datasets.records import pair_to_record
from prb_annotate.models import Pair

FIXTURES = Path(settings.BASE_DIR) / "fixtures"
DEMO = FIXTURES / "prb_demo.jsonl"
FLAWS = FIXTURES / "prb_demo_flaws.json"
REASONS = {
    "low_quality_chosen",
    "low_quality_rejected",
    "differentiator_not_preference",
    "differentiator_both",
    "label_disagrees",
    "label_tie",
}


def demo_records() -> list[dict]:
    return [json.loads(line) for line in DEMO.read_text(encoding="utf-8").splitlines()]


def words(text: str) -> int:
    return len(re.findall(r"\S+", text))


def test_it_imports_the_demo_fixture_cleanly(db) -> None:
    report = import_path(DEMO, "prb-demo")
    assert report.created >= 36
    assert report.categories.keys() == {
        "Art_and_Entertainment",
        "Lifestyle_and_Personal_Development",
        "Society_and_Culture",
    }
    assert min(report.categories.values()) >= 12
    # Official schema throughout: nothing lands in extra, and records come back unchanged.
    assert not Pair.objects.exclude(extra={}).exists()
    pairs = {pair.external_id: pair for pair in Pair.objects.all()}
    assert [pair_to_record(pairs[record["id"]]) for record in demo_records()] == demo_records()


def test_it_keeps_the_demo_realistic() -> None:
    """Several past posts and rubric aspects per user, and answers of 60-200 words."""
    for record in demo_records():
        assert len(record["profile"]) >= 3, record["id"]
        assert all(post.keys() == {"id", "category", "text"} for post in record["profile"])
        assert len(record["rubric_aspects"]) >= 2, record["id"]
        assert all(
            aspect.keys() == {"aspect", "evidence", "reason"} for aspect in record["rubric_aspects"]
        )
        assert words(record["narrative"]) >= 15, record["id"]
        for side in ("chosen", "rejected"):
            assert 60 <= words(record[side]) <= 200, (record["id"], side)


def test_it_describes_every_flaw_with_reasons_the_audit_knows() -> None:
    flaws = json.loads(FLAWS.read_text(encoding="utf-8"))
    ids = {record["id"] for record in demo_records()}
    assert 5 <= len(flaws) <= 8
    assert flaws.keys() <= ids
    for flaw in flaws.values():
        assert flaw["flaw"]
        assert flaw["expected_reasons"]
        assert set(flaw["expected_reasons"]) <= REASONS
        annotation = flaw["careful_annotation"]
        assert annotation["rubric_fit"] in {"chosen", "rejected", "tie"}
        assert annotation["differentiator"] in {"preference", "quality", "both", "none"}
    # At least one flaw of each kind the issue asks for.
    found = Counter(reason for flaw in flaws.values() for reason in flaw["expected_reasons"])
    assert found.keys() == REASONS


def test_it_generates_the_same_records_for_the_same_seed() -> None:
    first = list(synthetic_records(20, seed=7))
    assert first == list(synthetic_records(20, seed=7))
    assert first != list(synthetic_records(20, seed=8))
    assert len({record["id"] for record in first}) == 20


def test_it_generates_realistic_lengths() -> None:
    records = list(synthetic_records(300, seed=1))
    assert {record["category"] for record in records} == set(CATEGORIES)
    for record in records:
        assert 10 <= words(record["question"]) <= 60
        assert 8 <= len(record["profile"]) <= 20
        assert all(20 <= words(post["text"]) <= 200 for post in record["profile"])
        for side in ("chosen", "rejected"):
            # A list marker ("-") per item is not a word of the answer.
            assert 40 <= words(record[side]) - record[side].count("\n- ") <= 140


def test_it_writes_synthetic_files_the_importer_accepts(db, tmp_path) -> None:
    path = tmp_path / "synthetic.jsonl"
    write_synthetic(50, path, seed=3)
    report = import_path(path, "synthetic")
    assert report.created == 50
    records = {record["id"]: record for record in synthetic_records(50, seed=3)}
    assert all(pair_to_record(pair) == records[pair.external_id] for pair in Pair.objects.all())


def test_it_runs_the_generator_from_the_command_line(tmp_path) -> None:
    out = tmp_path / "out.jsonl"
    script = FIXTURES / "make_synthetic.py"
    result = subprocess.run(
        [sys.executable, str(script), "25", str(out), "--seed", "5"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "wrote 25 records" in result.stdout
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == list(synthetic_records(25, seed=5))
