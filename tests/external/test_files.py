"""Answer files other tools write, and every kind of bad file."""

import io
import json
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from prb_annotate.audit.campaign_audit import campaign_audit, campaign_verdicts
from prb_annotate.campaigns.external.importing import import_answer_path, questions_of
from prb_annotate.campaigns.external.mapping import parse_mapping
from prb_annotate.campaigns.lifecycle import (
    CampaignSetupError,
    create_campaign,
    reopen_for_replacements,
    set_status,
)
from prb_annotate.datasets.importing import ImportFailed
from prb_annotate.exports.long_table import long_table
from prb_annotate.models import Annotation, Assignment, Campaign, Dataset

CRITERIA = ["correctness", "relevance"]


@pytest.fixture
def external(dataset: Dataset, manager: User) -> Campaign:
    return external_campaign(dataset, manager)


def external_campaign(dataset: Dataset, manager: User) -> Campaign:
    return create_campaign(
        dataset,
        "collected elsewhere",
        k=2,
        external=True,
        created_by=manager,
        quality_criteria=CRITERIA,
        rating_scale_max=5,
    )


def pair_ids(campaign: Campaign) -> list[str]:
    return sorted(campaign.items.values_list("pair__external_id", flat=True))


def studio_task(number: int, pair: Any, chosen_left: bool, answers: list[dict]) -> dict:
    """A task as Label Studio exports it (JSON export, one object per task)."""
    left, right = (pair.chosen, pair.rejected) if chosen_left else (pair.rejected, pair.chosen)
    return {
        "id": number,
        "data": {
            "pair_id": pair.external_id,
            "prompt": pair.question,
            "left": left,
            "right": right,
        },
        "annotations": [
            {
                "id": number * 10 + n,
                "completed_by": answer["by"],
                "was_cancelled": False,
                "lead_time": 42.5,
                "result": [
                    {
                        "from_name": "comparison",
                        "to_name": "comparison",
                        "type": "pairwise",
                        "value": {"selected": answer["selected"]},
                    },
                    {
                        "from_name": "why",
                        "to_name": "prompt",
                        "type": "choices",
                        "value": {"choices": [answer["why"]]},
                    },
                    {
                        "from_name": "left_correctness",
                        "to_name": "left",
                        "type": "rating",
                        "value": {"rating": answer["left"]},
                    },
                    {
                        "from_name": "right_correctness",
                        "to_name": "right",
                        "type": "rating",
                        "value": {"rating": answer["right"]},
                    },
                ],
            }
            for n, answer in enumerate(answers)
        ],
        "predictions": [],
    }


STUDIO_MAPPING = {
    "values": {"differentiator": {"Personal preference": "preference", "Quality": "quality"}},
    "label_studio": {
        "pair_id": "pair_id",
        "from_names": {
            "comparison": "rubric_fit_position",
            "why": "differentiator",
            "left_correctness": "quality_A_correctness",
            "right_correctness": "quality_B_correctness",
        },
    },
}


def test_a_label_studio_export_is_read_with_its_mapping(external: Campaign, tmp_path: Path) -> None:
    pairs = list(external.dataset.pairs.order_by("external_id"))
    yes = {"why": "Personal preference", "left": 5, "right": 4}
    tasks = [
        # Chosen on the left: picking left picks the chosen answer.
        studio_task(
            1,
            pairs[0],
            True,
            [{"by": 7, "selected": "left", **yes}, {"by": 8, "selected": "left", **yes}],
        ),
        # Chosen on the right: picking left picks the rejected one.
        studio_task(
            2,
            pairs[1],
            False,
            [
                {"by": 7, "selected": "left", **yes},
                {"by": {"id": 8, "email": "b@example.org"}, "selected": "left", **yes},
            ],
        ),
    ]
    export = tmp_path / "project-3-at-2026.json"
    export.write_text(json.dumps(tasks))
    mapping = tmp_path / "mapping.json"
    mapping.write_text(json.dumps(STUDIO_MAPPING))
    call_command(
        "import_annotations", str(export), "--campaign", str(external.pk), "--mapping", str(mapping)
    )
    rows = Annotation.objects.filter(assignment__campaign=external).select_related(
        "assignment__item__pair", "assignment__annotator__external_annotator"
    )
    found = {
        (
            row.assignment.item.pair.external_id,
            row.assignment.annotator.external_annotator.given_id,
        ): (
            row.assignment.chosen_position,
            row.rubric_fit,
            row.quality_chosen,
            row.quality_rejected,
            row.time_on_task_ms,
        )
        for row in rows
    }
    first, second = pairs[0].external_id, pairs[1].external_id
    assert found[(first, "7")] == ("A", "chosen", {"correctness": 5}, {"correctness": 4}, 42500)
    assert found[(second, "7")] == ("B", "rejected", {"correctness": 4}, {"correctness": 5}, 42500)
    assert (second, "b@example.org") in found
    verdicts = campaign_verdicts(external)
    assert verdicts[pairs[1].pk].verdict == "excluded"


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def good_row(pair_id: str, annotator: str, changes: dict[str, Any] | None = None) -> dict[str, Any]:
    row = {
        "pair_id": pair_id,
        "annotator": annotator,
        "chosen_position": "A",
        "rubric_fit": "chosen",
        "differentiator": "preference",
        "confidence": "high",
        "quality_chosen_correctness": 5,
        "quality_rejected_correctness": 4,
        "quality_chosen_relevance": 5,
        "quality_rejected_relevance": 4,
    }
    return row | (changes or {})


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"pair_id": "no-such-pair"}, "pair_id", "unknown pair id"),
        (
            {"quality_chosen_correctness": 6},
            "quality_chosen_correctness",
            "not a whole number 1 to 5",
        ),
        ({"quality_rejected_relevance": 0}, "quality_rejected_relevance", "not a whole number"),
        ({"differentiator": "style"}, "differentiator", "unknown value 'style'"),
        ({"rubric_fit": "left"}, "rubric_fit", "unknown value 'left'"),
        ({"confidence": "sure"}, "confidence", "unknown value 'sure'"),
        ({"flagged": "maybe"}, "flagged", "unknown value 'maybe'"),
        ({"time_on_task_ms": -3}, "time_on_task_ms", "not a whole number of milliseconds"),
        ({"quality_chosen_tone": 3}, "quality_chosen_tone", "unknown column"),
        ({"annotator": ""}, "annotator", "missing"),
    ],
)
def test_a_bad_row_names_its_line_and_field_and_nothing_is_written(
    external: Campaign, tmp_path: Path, change: dict[str, Any], field: str, message: str
) -> None:
    first, second = pair_ids(external)[:2]
    path = write_csv(
        tmp_path / "answers.csv", [good_row(first, "r1"), good_row(second, "r1", change)]
    )
    with pytest.raises(ImportFailed) as failed:
        import_answer_path(external, path)
    text = str(failed.value)
    assert f'answers.csv line 3, field "{field}"' in text
    assert message in text
    assert not Assignment.objects.filter(campaign=external).exists()
    assert not User.objects.filter(username__startswith=f"c{external.pk}:").exists()


def test_a_pair_answered_twice_by_one_annotator_is_refused(
    external: Campaign, tmp_path: Path
) -> None:
    first = pair_ids(external)[0]
    path = write_csv(tmp_path / "twice.csv", [good_row(first, "r1"), good_row(first, "r1")])
    with pytest.raises(
        ImportFailed, match=r"twice.csv line 3.*answered pair .* twice \(first at line 2\)"
    ):
        import_answer_path(external, path)
    once = write_csv(tmp_path / "once.csv", [good_row(first, "r1")])
    import_answer_path(external, once)
    with pytest.raises(ImportFailed, match="already has an imported answer"):
        import_answer_path(external, once)
    assert Assignment.objects.filter(campaign=external).count() == 1


def test_an_answer_as_seen_needs_its_side(external: Campaign, tmp_path: Path) -> None:
    first = pair_ids(external)[0]
    changes = {"chosen_position": "", "rubric_fit": "", "rubric_fit_position": "B"}
    row = good_row(first, "r1", changes)
    with pytest.raises(ImportFailed, match="needs the chosen_position column"):
        import_answer_path(external, write_csv(tmp_path / "seen.csv", [row]))


def test_a_queue_campaign_takes_no_file(dataset: Dataset, tmp_path: Path) -> None:
    campaign = create_campaign(dataset, "with a queue", k=1)
    path = write_csv(tmp_path / "a.csv", [good_row(pair_ids(campaign)[0], "r1")])
    with pytest.raises(ImportFailed, match="not external"):
        import_answer_path(campaign, path)


def test_columns_and_values_come_through_the_mapping(external: Campaign, tmp_path: Path) -> None:
    first = pair_ids(external)[0]
    row = {"item": first, "worker": "w9", "better": "Response 1", "why": "taste", "batch": 3}
    path = write_csv(tmp_path / "survey.csv", [row])
    mapping = parse_mapping(
        json.dumps(
            {
                "columns": {
                    "item": "pair_id",
                    "worker": "annotator",
                    "better": "rubric_fit",
                    "why": "differentiator",
                },
                "values": {
                    "rubric_fit": {"Response 1": "chosen"},
                    "differentiator": {"taste": "preference"},
                },
                "ignore": ["batch"],
            }
        ),
        questions_of(external),
    )
    import_answer_path(external, path, mapping)
    annotation = Annotation.objects.get(assignment__campaign=external)
    assert (annotation.rubric_fit, annotation.differentiator) == ("chosen", "preference")
    assert annotation.assignment.chosen_position == ""
    bad = tmp_path / "bad-mapping.json"
    bad.write_text(json.dumps({"columns": {"item": "item_id"}}))
    with pytest.raises(CommandError, match=r"columns\.item: unknown column 'item_id'"):
        call_command(
            "import_annotations", str(path), "--campaign", str(external.pk), "--mapping", str(bad)
        )


def test_the_long_table_gives_the_audits_alpha(finished: Campaign, tmp_path: Path) -> None:
    out = tmp_path / "long.csv"
    call_command("audit", "--campaign", str(finished.pk), "--format", "long", "--out", str(out))
    table = pd.read_csv(out)
    assert list(table.columns) == ["rater", "unit", "question", "value"]
    assert table.equals(long_table(finished).astype(table.dtypes.to_dict()))
    report = campaign_audit(finished, resamples=0)
    expected = {
        (question["question"], coefficient["key"]): coefficient["value"]
        for question in report["agreement"]
        for coefficient in question["coefficients"]
    }
    fit = table[table["question"] == "rubric_fit"].pivot(
        index="rater", columns="unit", values="value"
    )
    codes = fit.apply(lambda column: column.map({"chosen": 0, "rejected": 1, "tie": 2}))
    alpha = krippendorff.alpha(
        reliability_data=codes.to_numpy(dtype=float), level_of_measurement="nominal"
    )
    assert alpha == pytest.approx(expected[("rubric_fit", "alpha_nominal")], abs=1e-12)
    rating = "quality_chosen_correctness"
    ratings = table[table["question"] == rating].pivot(
        index="rater", columns="unit", values="value"
    )
    alpha = krippendorff.alpha(
        reliability_data=ratings.to_numpy(dtype=float),
        level_of_measurement="ordinal",
        value_domain=np.arange(1, finished.rating_scale_max + 1),
    )
    assert alpha == pytest.approx(expected[(rating, "alpha_ordinal")], abs=1e-12)


def test_create_campaign_external_makes_a_campaign_without_a_queue(dataset: Dataset) -> None:
    out = io.StringIO()
    call_command(
        "create_campaign", "--dataset", dataset.name, "--name", "outside", "--external", stdout=out
    )
    campaign = Campaign.objects.get(name="outside")
    assert campaign.external
    assert campaign.status == Campaign.Status.CLOSED
    assert f"import_annotations FILE --campaign {campaign.pk}" in out.getvalue()
    assert "study link" not in out.getvalue()
    with pytest.raises(CampaignSetupError, match="no queue to activate"):
        create_campaign(dataset, "outside, active", external=True, activate=True)
    with pytest.raises(CampaignSetupError, match="no queue to reopen"):
        reopen_for_replacements(campaign)
    with pytest.raises(CampaignSetupError):
        set_status(campaign, Campaign.Status.ACTIVE)


def test_split_votes_of_an_imported_campaign_go_to_adjudication(
    external: Campaign, manager: User, login: Any, tmp_path: Path
) -> None:
    """k = 2 and the two answers disagree: a split vote. No queue can send it to a third
    annotator, so the audit page points to the adjudication queue and the button's view says
    why it asks nobody."""
    from django.urls import reverse

    first = pair_ids(external)[0]
    rows = [good_row(first, "r1"), good_row(first, "r2", {"rubric_fit": "rejected"})]
    import_answer_path(external, write_csv(tmp_path / "split.csv", rows), imported_by=manager)
    client = login(manager)
    page = client.get(reverse("campaign_audit", args=[external.pk])).content.decode()
    assert "1 pair has a split vote." in page
    assert 'id="split-votes-imported"' in page
    assert reverse("campaign_adjudication_queue", args=[external.pk]) in page
    assert reverse("campaign_audit_request_extra", args=[external.pk]) not in page
    asked = client.post(
        reverse("campaign_audit_request_extra", args=[external.pk]), follow=True
    ).content.decode()
    assert "An imported campaign has no queue to send a pair to another annotator" in asked
    assert "Asked one more annotator" not in asked
