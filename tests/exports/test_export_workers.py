"""Export slices made in worker processes: the same files as made in one process.

Workers need a database that other connections see, so these tests commit (the test database
is a file on SQLite, a server on PostgreSQL): inside a test's transaction, an export makes its
slices itself.
"""

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from prb_annotate.exports import export, slices
from prb_annotate.exports.processes import can_share_work, ordered_map
from prb_annotate.exports.slices import ExportError, SliceResult, SliceTask
from prb_annotate.models import Campaign, Pair
from tests.support.exports import annotated_campaign, import_dataset

FORMATS = ("jsonl", "parquet", "csv")
# Small slices, so that a dozen pairs make several and their order across workers matters.
SLICE_PAIRS = 3


def square_with_pid(number: int) -> tuple[int, int]:
    return number * number, os.getpid()


def fail_on_five(number: int) -> int:
    if number == 5:
        raise ValueError("five")
    return number


def test_ordered_map_gives_results_in_task_order_from_other_processes() -> None:
    results = list(ordered_map(square_with_pid, range(25), workers=2))
    assert [square for square, _ in results] == [n * n for n in range(25)]
    assert os.getpid() not in {pid for _, pid in results}


def test_ordered_map_raises_a_workers_error_in_the_caller() -> None:
    with pytest.raises(ValueError, match="five"):
        list(ordered_map(fail_on_five, range(25), workers=2))


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def export_both_ways(campaign: Campaign, out: Path) -> None:
    for fmt in FORMATS:
        for workers in (1, 2):
            export.export_split(
                campaign,
                out / f"{fmt}-{workers}",
                subset="all",
                fmt=fmt,
                with_validation=True,
                workers=workers,
            )


def assert_same_files(out: Path) -> None:
    for fmt in FORMATS:
        alone, shared = folder_bytes(out / f"{fmt}-1"), folder_bytes(out / f"{fmt}-2")
        assert len(alone) > 4
        assert alone == shared, fmt


def export_slice_noting_pid(pid_file: Path) -> Callable[[Campaign, SliceTask], SliceResult]:
    """``export_slice`` that also notes which process ran it."""
    real = slices.export_slice

    def noted(campaign: Campaign, task: SliceTask) -> SliceResult:
        with pid_file.open("a") as file:
            file.write(f"{os.getpid()}\n")
        return real(campaign, task)

    return noted


@pytest.fixture
def campaign(transactional_db: None, monkeypatch: pytest.MonkeyPatch) -> Campaign:
    """The export tests' campaign, committed, exported in slices of SLICE_PAIRS."""
    if not can_share_work():
        pytest.skip("an in-memory SQLite database: workers are not used")
    users = [User.objects.create(username=name) for name in ("alice", "bob", "carol")]
    monkeypatch.setattr(export, "SLICE_PAIRS", SLICE_PAIRS)
    return annotated_campaign(import_dataset(), users)


@pytest.fixture
def slice_pids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], set[str]]:
    """The processes other than this one that made slices, once the export is done."""
    pid_file = tmp_path / "pids"
    monkeypatch.setattr(slices, "export_slice", export_slice_noting_pid(pid_file))
    return lambda: set(pid_file.read_text().split()) - {str(os.getpid())}


@pytest.mark.django_db(transaction=True)
def test_workers_write_the_same_files_as_one_process(
    campaign: Campaign, slice_pids: Callable[[], set[str]], tmp_path: Path
) -> None:
    export_both_ways(campaign, tmp_path / "out")
    assert_same_files(tmp_path / "out")
    assert slice_pids()


@pytest.mark.django_db(transaction=True)
def test_a_workers_error_names_the_record_and_leaves_nothing(
    campaign: Campaign, tmp_path: Path
) -> None:
    pair = Pair.objects.get(dataset=campaign.dataset, external_id="soc-1")
    pair.extra = {**pair.extra, "validation": "the dataset's own"}
    pair.save()
    with pytest.raises(ExportError, match=r"soc-1.*'validation'"):
        export.export_split(
            campaign, tmp_path / "out", subset="all", with_validation=True, workers=2
        )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.django_db(transaction=True)
def test_the_command_makes_slices_in_workers(
    campaign: Campaign, slice_pids: Callable[[], set[str]], tmp_path: Path
) -> None:
    command = ["export_split", "--campaign", str(campaign.pk), "--subset", "all"]
    call_command(*command, "--out", str(tmp_path / "shared"), "--workers", "2")
    assert slice_pids()
    call_command(*command, "--out", str(tmp_path / "alone"), "--workers", "1")
    assert folder_bytes(tmp_path / "shared") == folder_bytes(tmp_path / "alone")
    for bad in ("0", "two"):
        with pytest.raises(CommandError, match="--workers"):
            call_command(*command, "--out", str(tmp_path / "bad"), "--workers", bad)
