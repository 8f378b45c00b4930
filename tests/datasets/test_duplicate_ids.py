"""Duplicate ids are found in fixed memory: a filter suspects, a second reading confirms and
names the first record with the id. The filter's false alarms are accepted, never refused."""

import functools
import io
import json

import pytest
from django.test import override_settings

from prb_annotate.datasets import importing
from prb_annotate.datasets.importing import ImportFailed, import_path, import_upload
from prb_annotate.datasets.seen_ids import SeenIds
from prb_annotate.models import Pair
from tests.support.importing import counts, official, write_jsonl


def test_the_filter_never_forgets_an_id() -> None:
    seen = SeenIds()
    ids = [f"r{n}" for n in range(5000)]
    assert [seen.add(record_id) for record_id in ids].count(True) <= 1
    assert all(seen.add(record_id) for record_id in ids)


def test_a_small_filter_raises_false_alarms() -> None:
    """The filter's size is what keeps alarms rare; 64 bits are soon full."""
    seen = SeenIds(bits=64)
    alarms = [seen.add(f"r{n}") for n in range(200)]
    assert alarms.count(True) > 100


@pytest.fixture
def tiny_filter(monkeypatch):
    """Every import holds nearly every record back as a possible duplicate."""
    monkeypatch.setattr(importing, "SeenIds", functools.partial(SeenIds, bits=64))


@pytest.mark.parametrize("existing", [False, True])
def test_false_alarms_are_imported_after_the_second_reading(
    db, tmp_path, tiny_filter, existing
) -> None:
    if existing:
        import_path(write_jsonl(tmp_path / "v1.jsonl", [official(0)]), "prb")
    records = [official(n) for n in range(300)]
    report = import_path(write_jsonl(tmp_path / "data.jsonl", records), "prb")
    assert report.total == 300
    assert (report.created, report.unchanged) == ((299, 1) if existing else (300, 0))
    assert Pair.objects.count() == 300
    assert sum(report.categories.values()) == 300


@pytest.mark.parametrize("existing", [False, True])
def test_duplicates_name_the_first_record_with_the_id(db, tmp_path, tiny_filter, existing) -> None:
    if existing:
        import_path(write_jsonl(tmp_path / "v1.jsonl", [official(5)]), "prb")
    records = [official(n) for n in range(300)]
    records[200] = official(5)
    records[250] = official(7, chosen="Other.")
    with pytest.raises(ImportFailed) as failure:
        import_path(write_jsonl(tmp_path / "data.jsonl", records), "prb")
    assert [str(problem) for problem in failure.value.problems] == [
        'data.jsonl line 201 (id "r005"), field "id": duplicate id, first seen on line 6',
        'data.jsonl line 251 (id "r007"), field "id": duplicate id, first seen on line 8',
    ]
    assert counts() == ((1, 1) if existing else (0, 0))


def test_a_duplicate_is_named_in_every_later_repeat(db, tmp_path) -> None:
    records = [official(1), official(2), official(1), official(1, chosen="Again.")]
    with pytest.raises(ImportFailed) as failure:
        import_path(write_jsonl(tmp_path / "data.jsonl", records), "prb")
    assert [(problem.line, problem.message) for problem in failure.value.problems] == [
        (3, "duplicate id, first seen on line 1"),
        (4, "duplicate id, first seen on line 1"),
    ]


def test_a_duplicate_after_a_bad_line_is_still_named(db, tmp_path) -> None:
    records = [official(1), official(2, chosen=""), official(1)]
    with pytest.raises(ImportFailed) as failure:
        import_path(write_jsonl(tmp_path / "data.jsonl", records), "prb")
    assert [(problem.line, problem.field) for problem in failure.value.problems] == [
        (2, "chosen"),
        (3, "id"),
    ]
    assert failure.value.problems[1].message == "duplicate id, first seen on line 1"


def test_an_upload_is_read_again_to_name_the_first_record(db) -> None:
    data = "".join(json.dumps(record) + "\n" for record in [official(1), official(1)])
    with pytest.raises(ImportFailed, match=r"line 2 .*duplicate id, first seen on line 1"):
        import_upload(io.BytesIO(data.encode()), "data.jsonl", "prb")
    assert counts() == (0, 0)


def test_the_second_reading_has_a_budget_of_its_own(db) -> None:
    """An upload that fits its budget once is not refused for being read twice."""
    data = "".join(json.dumps(record) + "\n" for record in [official(1), official(1)]).encode()
    limit = override_settings(PRB_UPLOAD_MAX_EXPANDED_BYTES=len(data) + 10)
    with limit, pytest.raises(ImportFailed) as failure:
        import_upload(data, "data.jsonl", "prb")
    assert [problem.message for problem in failure.value.problems] == [
        "duplicate id, first seen on line 1"
    ]
