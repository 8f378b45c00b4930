"""Hub ids through ``datasets``, tested on what can run without a Hub: ``datasets``' offline
mode reading its own cache of an earlier load, and the line said when there is none.

The cache is written by ``datasets``' own JSON builder from local files, into the folder an
earlier load of the Hub id would have left (``NAME/CONFIG/0.0.0/COMMIT``). No Hub is asked
anything: ``HF_HUB_OFFLINE`` is on, so a load of a Hub id goes to that cache alone. The Hub
itself (resolving a revision to a commit online) is not exercised here.
"""

import hashlib
import json
from pathlib import Path

import datasets
import huggingface_hub.constants
import pytest
from datasets.data_files import DataFilesDict
from datasets.packaged_modules.json.json import Json
from django.core.management import CommandError, call_command

from prb_annotate.datasets.hub import HubUnreachable, import_hub
from prb_annotate.datasets.importing import ImportFailed
from prb_annotate.models import Dataset, Pair
from tests.support.importing import ART, counts

HUB_ID = "prb_hub_test"
COMMIT = hashlib.sha1(b"a commit of prb_hub_test").hexdigest()
SOCIETY = "Society_and_Culture"


def plain(index: int, **changes: str) -> dict:
    record = {
        "id": f"h{index:03d}",
        "prompt": f"Which book next, question {index}?",
        "chosen": f"Read *Middlemarch*, answer {index}.",
        "rejected": "Any book.",
    }
    return record | changes


def cache_config(cache: Path, sources: Path, config: str, records: list[dict]) -> None:
    """Prepare one config's test split with datasets, where a load of HUB_ID at COMMIT
    would have put it."""
    data_file = sources / f"{config}.jsonl"
    data_file.write_text("".join(json.dumps(record) + "\n" for record in records))
    builder = Json(
        cache_dir=str(cache),
        dataset_name=HUB_ID,
        config_name=config,
        config_id=config,
        hash=COMMIT,
        data_files=DataFilesDict.from_patterns({"test": [str(data_file)]}),
    )
    builder.download_and_prepare()


@pytest.fixture
def offline(monkeypatch, tmp_path) -> Path:
    """datasets in offline mode, its cache in tmp_path; the cache folder is returned."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    return cache


@pytest.fixture
def cached_hub(offline, tmp_path) -> Path:
    sources = tmp_path / "sources"
    sources.mkdir()
    cache_config(offline, sources, ART, [plain(1), plain(2)])
    cache_config(offline, sources, SOCIETY, [plain(3)])
    return offline


def test_it_imports_hub_configs_and_records_the_commit(db, cached_hub) -> None:
    report = import_hub(HUB_ID, "hub", configs=[ART, SOCIETY], split="test")
    assert (report.created, report.categories) == (3, {ART: 2, SOCIETY: 1})
    assert report.files == [f"{ART}/test", f"{SOCIETY}/test"]
    dataset = Dataset.objects.get(name="hub")
    assert dataset.source == (
        f"hf://datasets/{HUB_ID}@{COMMIT}, configs {ART}, {SOCIETY}, split test"
    )
    assert len(dataset.source_sha256) == 64
    assert Pair.objects.get(external_id="h003").category == SOCIETY
    again = import_hub(HUB_ID, "hub", configs=[ART, SOCIETY], split="test")
    assert (again.unchanged, again.source_sha256) == (3, dataset.source_sha256)


def test_the_command_imports_a_hub_id_at_a_revision(db, cached_hub) -> None:
    call_command(
        "import_pairs",
        "--hub",
        HUB_ID,
        "--config",
        ART,
        "--split",
        "test",
        "--revision",
        COMMIT,
        "--dataset",
        "hub",
    )
    dataset = Dataset.objects.get(name="hub")
    assert dataset.source == f"hf://datasets/{HUB_ID}@{COMMIT}, configs {ART}, split test"
    assert dataset.pairs.count() == 2


def test_a_commit_other_than_the_one_read_is_refused(db, cached_hub) -> None:
    other = hashlib.sha1(b"another commit").hexdigest()
    with pytest.raises(ImportFailed, match=f"loaded commit {COMMIT}, not the revision asked"):
        import_hub(HUB_ID, "hub", configs=[ART], split="test", revision=other)
    assert counts() == (0, 0)


def test_a_bad_record_is_named_by_config_split_and_row(db, offline, tmp_path) -> None:
    cache_config(offline, tmp_path, ART, [plain(1), plain(2, chosen="")])
    with pytest.raises(ImportFailed) as failure:
        import_hub(HUB_ID, "hub", configs=[ART], split="test")
    assert str(failure.value.problems[0]) == (
        f'{ART}/test row 2 (id "h002"), field "chosen": empty text'
    )
    assert counts() == (0, 0)


def test_an_unreachable_hub_is_one_line_pointing_to_the_folder_route(db, offline) -> None:
    with pytest.raises(HubUnreachable) as failure:
        import_hub("nobody/not-cached", "hub", split="test")
    assert str(failure.value) == (
        'cannot reach the Hugging Face Hub for "nobody/not-cached" (HF_HUB_OFFLINE is set) and '
        "datasets has no copy of it in its cache; import a folder instead: where the Hub is "
        'reachable, run load_dataset("nobody/not-cached", revision=...).save_to_disk(FOLDER), '
        "then import_pairs FOLDER (docs/datasets.md)"
    )
    with pytest.raises(CommandError, match="HF_HUB_OFFLINE is set") as command:
        call_command("import_pairs", "--hub", "nobody/not-cached", "--dataset", "hub")
    assert "\n" not in str(command.value)
    assert counts() == (0, 0)


def test_a_config_not_cached_is_named(db, cached_hub) -> None:
    with pytest.raises(ImportFailed, match="Couldn't find cache for prb_hub_test"):
        import_hub(HUB_ID, "hub", configs=["Nope"], split="test")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["data.jsonl", "--hub", HUB_ID], "give either a PATH or --hub ID"),
        ([], "give either a PATH or --hub ID"),
        (["data.jsonl", "--split", "test"], "--split go with --hub"),
        (["--hub", "not a hub id"], "not a Hub id"),
        (["--hub", HUB_ID, "--split", "test[:10]"], "a split is imported whole"),
    ],
)
def test_the_command_refuses_hub_options_out_of_place(db, arguments, message) -> None:
    with pytest.raises(CommandError, match=message.replace("[", r"\[")):
        call_command("import_pairs", *arguments, "--dataset", "hub")
