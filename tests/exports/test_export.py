"""Export of validated splits: layout, manifest, determinism, round trip, pseudonyms."""

import hashlib
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test import override_settings

from prb_annotate.audit.campaign_audit import campaign_audit, campaign_verdicts
from prb_annotate.audit.frames import IdIn
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.datasets.importing import import_path
from prb_annotate.datasets.records import pair_to_record
from prb_annotate.exports.data_files import ParquetRecordsFile
from prb_annotate.exports.export import analyze_if_never_analyzed, export_split
from prb_annotate.exports.layout import config_names
from prb_annotate.exports.pseudonyms import PSEUDONYM_RULE, pseudonym
from prb_annotate.exports.slices import ExportError, chunk_columns, validation_object
from prb_annotate.models import Annotation, Campaign, CampaignItem, Dataset, Pair
from tests.support.exports import (
    ART_IDS,
    EXCLUDED_IDS,
    GOLD_ID,
    LIFE_IDS,
    PLAIN_ID,
    SOCIETY_IDS,
    UNDECIDED_IDS,
    annotated_campaign,
    import_dataset,
    jsonl,
    records,
)

CONFIGS = {
    "Art_and_Entertainment": "Art_and_Entertainment",
    "Lifestyle_and_Personal_Development": "Lifestyle_and_Personal_Development",
    "Society & Culture": "Society_Culture",
    "": "uncategorized",
}
ALL_IDS = {*ART_IDS, *LIFE_IDS, *SOCIETY_IDS, str(PLAIN_ID)}


@pytest.fixture
def users(db: None) -> list[User]:
    # No passwords: hashing one takes a second, and nobody logs in here.
    return [User.objects.create(username=name) for name in ("alice", "bob", "carol")]


@pytest.fixture
def campaign(users: list[User]) -> Campaign:
    return annotated_campaign(import_dataset(), users)


def data_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != "manifest.json")


def read_records(root: Path) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted(root.glob("*/test.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def test_it_lays_out_one_folder_per_category_with_a_manifest_and_a_card(
    campaign: Campaign, tmp_path: Path
) -> None:
    out = tmp_path / "export"
    manifest = export_split(campaign, out, subset="all", fmt="jsonl")

    expected = {f"{config}/test.jsonl" for config in CONFIGS.values()}
    expected |= {"annotations.jsonl", "manifest.json", "README.md"}
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} == expected
    assert json.loads((out / "manifest.json").read_text()) == manifest

    assert manifest["campaign"]["id"] == campaign.pk
    assert manifest["dataset"] == {
        "id": campaign.dataset_id,
        "name": "prb",
        "source": "upload:prb.jsonl",
        "source_sha256": hashlib.sha256(jsonl(records())).hexdigest(),
        "description": "",
    }
    assert manifest["k"] == 3
    assert manifest["thresholds"]["quality_threshold"] == 4.0
    assert manifest["question_set"]["quality"]["criteria"] == campaign.quality_criteria
    assert manifest["pseudonym"] == PSEUDONYM_RULE
    assert manifest["tool"]["name"] == "prb-annotate"
    assert manifest["tool"]["version"]
    assert manifest["counts"]["pairs"] == {
        "validated": 7,
        "excluded": 2,
        "undecided": 2,
        "total": 11,
        "adjudicated": 0,
    }
    assert manifest["counts"]["by_category"]["Society & Culture"] == {
        "validated": 1,
        "excluded": 0,
        "undecided": 1,
        "total": 2,
        "exported": 2,
        "adjudicated": 0,
    }
    assert manifest["counts"]["exported_pairs"] == 11
    # In category order: the empty category first.
    assert [c["config_name"] for c in manifest["configs"]] == [
        "uncategorized",
        "Art_and_Entertainment",
        "Lifestyle_and_Personal_Development",
        "Society_Culture",
    ]
    differentiator = next(
        q for q in manifest["agreement"]["questions"] if q["question"] == "differentiator"
    )
    alpha = differentiator["coefficients"]["alpha_nominal"]
    assert set(alpha) == {"value", "ci_low", "ci_high", "method", "reliable", "reason"}
    # Eleven pairs rated twice, all answered alike: the reason says so in words.
    assert alpha["reliable"] is False
    assert alpha["reason"].startswith(
        "no two annotators disagreed on any of the 11 pairs rated twice or more"
    )
    assert manifest["agreement"]["validated_share"]["count"] == 7

    card = (out / "README.md").read_text()
    header = card.split("---\n")[1]
    for config in CONFIGS.values():
        assert f'- config_name: "{config}"' in header
        assert f'path: "{config}/test.jsonl"' in header
    assert "path: annotations.jsonl" in header
    assert manifest["card"]["sha256"] == hashlib.sha256(card.encode()).hexdigest()


def test_it_records_row_counts_and_hashes_that_match_the_files(
    campaign: Campaign, tmp_path: Path
) -> None:
    for fmt in ("jsonl", "parquet", "csv"):
        out = tmp_path / fmt
        manifest = export_split(campaign, out, subset="all", fmt=fmt)
        listed = {entry["path"]: entry for entry in manifest["files"]}
        assert set(listed) == {
            p.relative_to(out).as_posix() for p in data_files(out) if p.name != "README.md"
        }
        for path, entry in listed.items():
            content = (out / path).read_bytes()
            assert entry["sha256"] == hashlib.sha256(content).hexdigest(), path
            assert entry["bytes"] == len(content)
            if fmt == "jsonl":
                rows = len(content.splitlines())
            elif fmt == "parquet":
                rows = pq.ParquetFile(out / path).metadata.num_rows
            else:
                rows = len(pd.read_csv(out / path))
            assert entry["rows"] == rows, path
        assert listed["annotations." + fmt]["rows"] == manifest["counts"]["annotations"]


def test_it_exports_byte_identical_files_twice(campaign: Campaign, tmp_path: Path) -> None:
    for fmt in ("jsonl", "parquet", "csv"):
        first = tmp_path / f"{fmt}-1"
        second = tmp_path / f"{fmt}-2"
        export_split(campaign, first, subset="all", fmt=fmt, with_validation=True)
        export_split(campaign, second, subset="all", fmt=fmt, with_validation=True)
        names = [p.relative_to(first) for p in sorted(first.rglob("*")) if p.is_file()]
        assert names == [p.relative_to(second) for p in sorted(second.rglob("*")) if p.is_file()]
        for name in names:
            assert (first / name).read_bytes() == (second / name).read_bytes(), name


@pytest.mark.django_db(transaction=True)
def test_it_reads_the_same_rows_ahead_in_a_worker_as_inside_a_transaction(
    campaign: Campaign, tmp_path: Path
) -> None:
    """Outside a transaction whole-campaign reads may use other connections (server-side
    cursors, a reading thread); inside one, only the caller's. Both give the same bytes."""
    assert not connection.in_atomic_block
    for fmt in ("jsonl", "parquet"):
        export_split(campaign, tmp_path / f"{fmt}-worker", subset="all", fmt=fmt)
        with transaction.atomic():
            export_split(campaign, tmp_path / f"{fmt}-inline", subset="all", fmt=fmt)
        worker, inline = (
            sorted((tmp_path / f"{fmt}-{how}").rglob("*")) for how in ("worker", "inline")
        )
        assert [p.name for p in worker] == [p.name for p in inline]
        assert len(worker) > 4
        for one, other in zip(worker, inline, strict=True):
            assert one.is_dir() or one.read_bytes() == other.read_bytes(), one.name


def test_it_orders_records_by_id_in_byte_order(campaign: Campaign, tmp_path: Path) -> None:
    """Upper case before lower case, "alpha-10" before "alpha-2": the same on every database."""
    export_split(campaign, tmp_path / "out", subset="all")
    lines = (tmp_path / "out" / "Art_and_Entertainment" / "test.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["Beta-3", "Zeta-1", "alpha-10", "alpha-2"]
    annotations = pd.read_json(tmp_path / "out" / "annotations.jsonl", lines=True, dtype=False)
    ids = list(annotations["id"])
    assert ids == sorted(ids, key=lambda value: value.encode())


def test_it_round_trips_records_through_import(campaign: Campaign, tmp_path: Path) -> None:
    """JSON Lines gives every record back exactly. Parquet does too for records of one shape;
    a column cannot tell a field some records lack from a null, so the Art file, where only
    some records carry unknown fields, is left out of its comparison."""
    originals = {
        pair.external_id: json.dumps(pair_to_record(pair), ensure_ascii=False)
        for pair in Pair.objects.filter(dataset=campaign.dataset).exclude(external_id=GOLD_ID)
    }
    for fmt, skipped in [("jsonl", set()), ("parquet", set(ART_IDS))]:
        out = tmp_path / fmt
        export_split(campaign, out, subset="all", fmt=fmt)
        name = f"again-{fmt}"
        for path in sorted(out.glob(f"*/test.{fmt}")):
            import_path(path, name)
        again = {
            pair.external_id: json.dumps(pair_to_record(pair), ensure_ascii=False)
            for pair in Dataset.objects.get(name=name).pairs.all()
        }
        assert set(again) == set(originals), fmt
        for external_id in set(originals) - skipped:
            assert again[external_id] == originals[external_id], (fmt, external_id)


def test_it_imports_an_export_folder_as_the_pairs_it_holds(
    campaign: Campaign, tmp_path: Path
) -> None:
    """The folder as a whole: its record files are read, its annotations, manifest and card
    are not (they are not pairs), in every format."""
    for fmt in ("jsonl", "csv", "parquet"):
        out = tmp_path / fmt
        manifest = export_split(campaign, out, subset="all", fmt=fmt, with_validation=True)
        assert (out / f"annotations.{fmt}").is_file()
        report = import_path(out, f"from-folder-{fmt}")
        exported = {pair.external_id for pair in Pair.objects.filter(dataset=campaign.dataset)} - {
            GOLD_ID
        }
        again = set(report.dataset.pairs.values_list("external_id", flat=True))
        assert again == exported, fmt
        assert report.dataset.pairs.count() == manifest["counts"]["exported_pairs"], fmt


def test_it_writes_files_that_pandas_loads(campaign: Campaign, tmp_path: Path) -> None:
    readers = {
        "jsonl": lambda path: pd.read_json(path, lines=True),
        "parquet": pd.read_parquet,
        "csv": pd.read_csv,
    }
    for fmt, read in readers.items():
        out = tmp_path / fmt
        manifest = export_split(campaign, out, subset="all", fmt=fmt, with_validation=True)
        for entry in manifest["files"]:
            frame = read(out / entry["path"])
            assert len(frame) == entry["rows"], (fmt, entry["path"])
        art = read(out / "Art_and_Entertainment" / f"test.{fmt}")
        assert {"id", "question", "profile", "rubric_aspects", "narrative", "chosen"} <= set(
            art.columns
        )
        annotations = read(out / f"annotations.{fmt}")
        assert {"annotator", "rubric_fit", "quality_chosen_correctness"} <= set(annotations.columns)


def test_it_keeps_the_held_back_fields_and_unknown_fields(
    campaign: Campaign, tmp_path: Path
) -> None:
    export_split(campaign, tmp_path / "out", subset="all")
    records = {str(record["id"]): record for record in read_records(tmp_path / "out")}
    zeta = records["Zeta-1"]
    assert zeta["rubric_aspects"] == [
        {"aspect": "depth", "evidence": "long posts", "reason": "likes detail"}
    ]
    assert zeta["narrative"] == "I want something deep (Zeta-1)."
    assert zeta["source"] == {"z": 1, "a": [1, 2, {"y": None, "b": "x"}]}
    assert records["alpha-2"]["score"] == 0.5
    # A plain-shape record comes back in its own shape, its id still a number.
    assert records[str(PLAIN_ID)] == {
        "id": PLAIN_ID,
        "prompt": "Plain prompt?",
        "chosen": "Yes.",
        "rejected": "No.",
    }


def test_it_selects_the_subset_and_never_exports_gold_items(
    campaign: Campaign, tmp_path: Path
) -> None:
    decided = ALL_IDS - EXCLUDED_IDS - UNDECIDED_IDS
    for subset, expected in [
        ("validated", decided),
        ("excluded", EXCLUDED_IDS | UNDECIDED_IDS),
        ("all", ALL_IDS),
    ]:
        out = tmp_path / subset
        manifest = export_split(campaign, out, subset=subset, with_validation=True)
        records = read_records(out)
        assert {str(record["id"]) for record in records} == expected, subset
        assert {record["validation"]["verdict"] for record in records} <= (
            {"validated"} if subset == "validated" else {"validated", "excluded", "undecided"}
        )
        annotation_ids = set(pd.read_json(out / "annotations.jsonl", lines=True, dtype=False)["id"])
        assert annotation_ids == expected, subset
        assert manifest["counts"]["exported_pairs"] == len(expected)
        assert GOLD_ID not in annotation_ids
    excluded = {str(r["id"]): r["validation"] for r in read_records(tmp_path / "excluded")}
    assert excluded["life-2"]["verdict"] == "excluded"
    assert excluded["life-2"]["reasons"] == ["differentiator_not_preference"]
    assert excluded["life-4"]["verdict"] == "undecided"
    assert excluded["life-4"]["n_annotations"] == 2


def test_it_adds_the_validation_object_only_when_asked(campaign: Campaign, tmp_path: Path) -> None:
    export_split(campaign, tmp_path / "plain")
    assert all("validation" not in record for record in read_records(tmp_path / "plain"))
    export_split(campaign, tmp_path / "full", with_validation=True)
    beta = next(r for r in read_records(tmp_path / "full") if r["id"] == "Beta-3")
    assert list(beta)[-1] == "validation"
    assert beta["validation"] == {
        "n_annotations": 3,
        "majority": {"rubric_fit": "chosen", "differentiator": "preference"},
        "quality_medians": {
            "chosen": dict.fromkeys(campaign.quality_criteria, 5.0),
            "rejected": dict.fromkeys(campaign.quality_criteria, 4.0),
        },
        "verdict": "validated",
        "reasons": [],
        "adjudicated": False,
        "annotators_verdict": "validated",
    }


def test_it_pseudonymises_annotators_stably_and_not_reversibly(
    campaign: Campaign, users: list[User], tmp_path: Path
) -> None:
    export_split(campaign, tmp_path / "one")
    export_split(campaign, tmp_path / "two", subset="all")
    one = pd.read_json(tmp_path / "one" / "annotations.jsonl", lines=True, dtype=False)
    two = pd.read_json(tmp_path / "two" / "annotations.jsonl", lines=True, dtype=False)
    expected = {pseudonym(campaign.pk, user.pk) for user in users}
    assert set(one["annotator"]) == set(two["annotator"]) == expected
    assert len(expected) == 3

    # Nothing in the export names an account, and the pseudonym is no plain hash of one.
    export_bytes = b"".join(p.read_bytes() for p in (tmp_path / "two").rglob("*") if p.is_file())
    for user in users:
        assert user.username.encode() not in export_bytes
        for clear in (str(user.pk), user.username, f"{campaign.pk}:{user.pk}"):
            for digest in (hashlib.sha256, hashlib.md5, hashlib.sha1):
                assert digest(clear.encode()).hexdigest()[:16] not in expected
    # It depends on the server's secret and on the campaign.
    with override_settings(SECRET_KEY="another-secret-key-for-this-test-only-0123456789"):
        assert pseudonym(campaign.pk, users[0].pk) not in expected
    assert pseudonym(campaign.pk + 1, users[0].pk) not in expected


def test_it_refuses_a_folder_in_the_way_and_leaves_nothing_half_written(
    campaign: Campaign, tmp_path: Path
) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(ExportError, match=r"not empty.*--overwrite"):
        export_split(campaign, taken)
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]

    # A record that already has a "validation" field cannot get one: the export fails midway.
    pair = Pair.objects.get(external_id="life-3")
    pair.extra = {**pair.extra, "validation": "from the source"}
    pair.save()
    with pytest.raises(ExportError, match="life-3"):
        export_split(campaign, tmp_path / "new", subset="all", with_validation=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]

    export_split(campaign, taken, overwrite=True)
    assert (taken / "manifest.json").exists()
    assert not (taken / "notes.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_it_stores_columns_whose_types_differ_between_records_as_json_in_parquet(
    tmp_path: Path,
) -> None:
    """Types are merged over every chunk: a struct gains fields, a late column is null before
    it appears, and a column holding text in one chunk and numbers in another (or integers
    beyond 64 bits) is written as JSON text in every row group."""
    chunks: list[list[dict[str, Any]]] = [
        [{"id": "a", "meta": 1, "tags": [{"x": 1}], "big": 1}],
        [{"id": "b", "meta": "text", "tags": [{"y": "z"}], "late": True, "big": 2**70}],
        [{"id": "c", "meta": None, "tags": [], "big": None}],
    ]
    # One row group per chunk, so that every group is checked.
    file = ParquetRecordsFile(tmp_path, "t.parquet", row_group_rows=1)
    for chunk in chunks:
        file.add(chunk_columns(chunk), len(chunk))
    written = file.finish()

    table = pq.read_table(tmp_path / "t.parquet")
    assert written.rows == 3
    assert pq.ParquetFile(tmp_path / "t.parquet").num_row_groups == 3
    assert table.schema.names == ["id", "meta", "tags", "big", "late"]
    assert str(table.schema.field("tags").type) == "list<element: struct<x: int64, y: string>>"
    assert table.column("meta").to_pylist() == ["1", '"text"', None]
    assert table.column("big").to_pylist() == ["1", str(2**70), None]
    assert table.column("late").to_pylist() == [None, True, None]
    assert table.column("tags").to_pylist() == [[{"x": 1, "y": None}], [{"x": None, "y": "z"}], []]


def test_it_names_configs_after_categories_without_clashes() -> None:
    names = config_names(["Art & Design", "Art/Design", "", "annotations", "Société"])
    assert names == {
        "": "uncategorized",
        "Art & Design": "Art_Design",
        "Art/Design": "Art_Design_2",
        "Société": "Société",
        "annotations": "annotations_2",
    }


def test_it_exports_from_the_command_line(campaign: Campaign, tmp_path: Path, capsys) -> None:
    out = tmp_path / "cli"
    call_command(
        "export_split",
        "--campaign",
        str(campaign.pk),
        "--subset",
        "validated",
        "--format",
        "parquet",
        "--out",
        str(out),
        "--with-validation",
    )
    assert "Exported 7 validated pairs" in capsys.readouterr().out
    frame = pd.read_parquet(out / "Art_and_Entertainment" / "test.parquet")
    assert list(frame["id"]) == ["Beta-3", "Zeta-1", "alpha-2"]
    assert set(frame["validation"].map(lambda v: v["verdict"])) == {"validated"}
    with pytest.raises(CommandError, match="No campaign"):
        call_command("export_split", "--campaign", "999999", "--out", str(tmp_path / "x"))
    with pytest.raises(CommandError, match="not empty"):
        call_command("export_split", "--campaign", str(campaign.pk), "--out", str(out))


def test_it_reads_the_same_verdicts_and_agreement_as_the_audit(
    campaign: Campaign, tmp_path: Path
) -> None:
    """The export audits the campaign slice by slice; its verdicts, counts and agreement are
    those of the audit page for the same data and seed."""
    manifest = export_split(campaign, tmp_path / "out", subset="all", with_validation=True)
    verdicts = campaign_verdicts(campaign)
    by_id = {verdict.external_id: verdict for verdict in verdicts.values()}
    records = [
        json.loads(line)
        for path in (tmp_path / "out").glob("*/test.jsonl")
        for line in path.read_text().splitlines()
    ]
    assert len(records) == len(verdicts)
    for record in records:
        assert record["validation"] == validation_object(by_id[str(record["id"])])
    for verdict in ("validated", "excluded", "undecided"):
        expected = sum(v.verdict == verdict for v in verdicts.values())
        assert manifest["counts"]["pairs"][verdict] == expected

    report = campaign_audit(campaign, resamples=manifest["agreement"]["resamples"])
    agreement = manifest["agreement"]
    assert [q["question"] for q in agreement["questions"]] == [
        q["question"] for q in report["agreement"]
    ]
    for mine, theirs in zip(agreement["questions"], report["agreement"], strict=True):
        assert mine["units"] == theirs["units"]
        assert mine["ratings"] == theirs["ratings"]
        for coefficient in theirs["coefficients"]:
            assert mine["coefficients"][coefficient["key"]] == {
                key: coefficient[key]
                for key in ("value", "ci_low", "ci_high", "method", "reliable", "reason")
            }
    assert agreement["validated_share"] == report["validity"]["overall"]["validated_share"]
    assert agreement["validated_share_by_category"] == {
        row["category"]: row["validated_share"] for row in report["validity"]["per_category"]
    }


def test_it_marks_annotations_the_audit_leaves_out(
    campaign: Campaign, users: list[User], tmp_path: Path
) -> None:
    """An annotator below the minimum gold accuracy keeps their rows, with counted false."""
    gold = Annotation.objects.filter(
        assignment__campaign=campaign, assignment__item__pair__external_id=GOLD_ID
    ).first()
    assert gold is not None, "the seeded queue gives someone the gold item"
    gold.rubric_fit = "rejected"
    gold.save()
    campaign.min_gold_accuracy = 0.5
    campaign.save()
    export_split(campaign, tmp_path / "out", subset="all")
    rows = pd.read_json(tmp_path / "out" / "annotations.jsonl", lines=True, dtype=False)
    careless = pseudonym(campaign.pk, gold.assignment.annotator_id)
    assert set(rows.loc[rows["annotator"] == careless, "counted"]) == {False}
    assert set(rows.loc[rows["annotator"] != careless, "counted"]) == {True}
    assert GOLD_ID not in set(rows["id"])


def test_it_exports_an_empty_subset(db: None, tmp_path: Path) -> None:
    """Before anyone has annotated, nothing is validated: the export is empty but complete."""
    campaign = create_campaign(import_dataset(), "fresh", k=3)
    for fmt, read in [
        ("jsonl", lambda path: pd.read_json(path, lines=True)),
        ("parquet", pd.read_parquet),
        ("csv", pd.read_csv),
    ]:
        out = tmp_path / fmt
        manifest = export_split(campaign, out, fmt=fmt)
        assert manifest["configs"] == []
        assert manifest["counts"]["pairs"]["undecided"] == 12
        assert manifest["counts"]["exported_pairs"] == manifest["counts"]["annotations"] == 0
        assert sorted(p.name for p in out.iterdir()) == [
            "README.md",
            f"annotations.{fmt}",
            "manifest.json",
        ]
        assert len(read(out / f"annotations.{fmt}")) == 0


def test_it_exports_a_campaign_without_regular_pairs(db: None, tmp_path: Path) -> None:
    """Only the gold item left (the others removed, say in the admin before anyone started):
    no records, no annotation rows, and agreement over no units."""
    campaign = create_campaign(import_dataset(), "gold only", k=3, gold_pair_ids=[GOLD_ID])
    campaign.items.filter(kind=CampaignItem.Kind.REGULAR).delete()
    manifest = export_split(campaign, tmp_path / "out", subset="all")
    assert manifest["counts"]["pairs"]["total"] == 0
    assert manifest["configs"] == []
    assert {question["units"] for question in manifest["agreement"]["questions"]} == {0}
    assert (tmp_path / "out" / "annotations.jsonl").read_bytes() == b""


def test_a_slice_reads_exactly_the_ids_it_names(db: None) -> None:
    """IdIn sends the ids as one parameter with their bounds: the rows are those of __in,
    for ids far apart, ids in any order, and none."""
    dataset = import_dataset()
    pks = sorted(Pair.objects.filter(dataset=dataset).values_list("pk", flat=True))
    for wanted in ([pks[0], pks[-1]], [pks[5], pks[2], pks[9]], pks[3:4], []):
        found = Pair.objects.filter(IdIn("pk", wanted)).values_list("pk", flat=True)
        assert sorted(found) == sorted(
            Pair.objects.filter(pk__in=wanted).values_list("pk", flat=True)
        )
        assert sorted(found) == sorted(wanted)


def test_it_gathers_planner_statistics_the_database_lacks(campaign: Campaign) -> None:
    """On PostgreSQL, tables never analyzed are analyzed before the slices are read (without
    statistics the planner scans whole tables for every slice); then nothing is left to do."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL planner statistics")
    models = [Pair, CampaignItem, Annotation]
    analyze_if_never_analyzed(models)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT min(reltuples) FROM pg_class WHERE relname = ANY(%s)",
            [[model._meta.db_table for model in models]],
        )
        assert cursor.fetchone()[0] >= 0
    assert analyze_if_never_analyzed(models) == []
