"""Our own annotations export, imported into an external campaign: the same audit."""

import math
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from prb_annotate.audit.campaign_audit import campaign_audit, campaign_verdicts
from prb_annotate.audit.exclusions import left_out_annotators
from prb_annotate.campaigns.external.copies import external_copy
from prb_annotate.campaigns.external.importing import import_answer_path
from prb_annotate.exports.export import export_split
from prb_annotate.exports.pseudonyms import pseudonym
from prb_annotate.models import AnswerImport, Campaign, ExternalAnnotator


def coefficients(report: dict[str, Any]) -> dict[tuple[str, str], float]:
    return {
        (question["question"], coefficient["key"]): coefficient["value"]
        for question in report["agreement"]
        for coefficient in question["coefficients"]
    }


def assert_same_audit(original: Campaign, copy: Campaign) -> None:
    ours, theirs = campaign_verdicts(original), campaign_verdicts(copy)
    assert set(ours) == set(theirs)
    for pair_id, verdict in ours.items():
        assert (theirs[pair_id].verdict, theirs[pair_id].reasons) == (
            verdict.verdict,
            verdict.reasons,
        ), pair_id
    first, second = campaign_audit(original, resamples=0), campaign_audit(copy, resamples=0)
    expected, found = coefficients(first), coefficients(second)
    assert expected.keys() == found.keys()
    assert any(not math.isnan(value) for value in expected.values() if value is not None)
    for key, value in expected.items():
        if value is None or math.isnan(value):
            assert found[key] is None or math.isnan(found[key]), key
        else:
            assert found[key] == pytest.approx(value, abs=1e-12), key
    assert first["validity"]["overall"] == second["validity"]["overall"]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_an_export_imported_gives_the_same_audit(
    finished: Campaign, copy: Campaign, tmp_path: Path, fmt: str
) -> None:
    export_split(finished, tmp_path / "e", subset="all", fmt=fmt)
    report = import_answer_path(copy, tmp_path / "e" / f"annotations.{fmt}")
    assert report.record.file_format == "annotations-export"
    # The annotators the original's audit leaves out (gold accuracy; which of the simulated
    # annotators fall below it depends on their gold slots, drawn from their row ids), carried
    # by ``counted``.
    left_out = left_out_annotators(finished)
    assert left_out
    assert report.excluded == len(left_out)
    assert_same_audit(finished, copy)


def test_annotator_ids_are_kept_as_given_and_pseudonymised_again(
    finished: Campaign, copy: Campaign, exported: Path, tmp_path: Path
) -> None:
    import_answer_path(copy, exported / "annotations.jsonl")
    given = set(ExternalAnnotator.objects.filter(campaign=copy).values_list("given_id", flat=True))
    originals = {
        pseudonym(finished.pk, user_id)
        for user_id in finished.assignments.values_list("annotator_id", flat=True)
    }
    assert given
    assert given <= originals
    export_split(copy, tmp_path / "again", subset="all", fmt="jsonl")
    text = (tmp_path / "again" / "annotations.jsonl").read_text()
    assert not any(name in text for name in given)
    record = AnswerImport.objects.get(campaign=copy)
    assert record.source == "annotations.jsonl"
    assert len(record.source_sha256) == 64


def test_an_export_of_the_copy_imported_again_gives_the_same_audit(
    finished: Campaign, copy: Campaign, exported: Path, tmp_path: Path, manager: User
) -> None:
    import_answer_path(copy, exported / "annotations.jsonl")
    export_split(copy, tmp_path / "second", subset="all", fmt="jsonl")
    again = external_copy(copy, "copy of the copy", manager)
    import_answer_path(again, tmp_path / "second" / "annotations.jsonl")
    assert_same_audit(finished, again)
