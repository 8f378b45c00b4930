"""Practice and qualification answers never reach the campaign's statistics: agreement,
verdicts, quality control, progress figures, quotas and exports come out the same whether
those answers (contrary on purpose, many of them) exist or not, and the pairs set apart never
appear in any of them."""

import ast
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from prb_annotate.audit.campaign_audit import campaign_audit, campaign_verdicts
from prb_annotate.audit.exclusions import campaign_quality
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import add_member, submitted_count
from prb_annotate.campaigns.progress import annotator_standing, campaign_progress
from prb_annotate.campaigns.qualification import flow
from prb_annotate.exports.export import export_split
from prb_annotate.models import (
    Annotation,
    QualificationAnswer,
    QualificationItem,
    QualificationRecord,
)
from tests.support.campaigns import submit_form
from tests.support.qualification import (
    PRACTICE_IDS,
    QUALIFICATION_IDS,
    answer_current,
    form_for,
    screening_campaign,
)

SET_APART = set(PRACTICE_IDS) | set(QUALIFICATION_IDS)
ROOT = Path(__file__).resolve().parents[2]


def contrary_practice_and_qualification(campaign, user: User) -> None:
    """Every practice item answered wrongly three times, every qualification item wrongly,
    under a rule that lets anyone pass: many answers, all against the dataset's claim."""
    for item in QualificationItem.objects.filter(campaign=campaign, phase="practice"):
        for _ in range(3):
            task = flow.task_for(campaign, user, item.pk)
            assert task is not None
            flow.submit(campaign.pk, user, item.pk, form_for(campaign, task, right=False))
    while flow.next_step(campaign, user).stage == flow.Stage.QUALIFICATION:
        answer_current(campaign, user, right=False)
    assert flow.next_step(campaign, user).stage == flow.Stage.QUEUE


def work_the_queue(campaign, users: list[User]) -> None:
    for index, user in enumerate(users):
        while (assignment := next_assignment(campaign, user)) is not None:
            fit = "A" if (assignment.pk + index) % 3 else "B"
            submit_form(assignment, rubric_fit=fit)


def figures(campaign, users: list[User], out: Path) -> dict:
    """Every statistic the campaign's pages, API and exports give, in a comparable form."""
    audit = campaign_audit(campaign, resamples=0, dawid_skene=False)
    verdicts = {
        v.external_id: (v.verdict, tuple(v.reasons)) for v in campaign_verdicts(campaign).values()
    }
    progress = campaign_progress(campaign)
    export_split(campaign, out, subset="all", fmt="jsonl", overwrite=True)
    files = {str(path.relative_to(out)): path.read_bytes() for path in sorted(out.rglob("*.jsonl"))}
    return {
        "agreement": audit["agreement"],
        "counts": audit["counts"],
        "annotators": audit["annotators"],
        "verdicts": verdicts,
        "quality": campaign_quality(campaign),
        "progress": progress,
        "standing": [annotator_standing(campaign, user) for user in users],
        "quota": [submitted_count(campaign, user) for user in users],
        "files": files,
    }


def test_it_keeps_practice_and_qualification_out_of_every_statistic(dataset, tmp_path) -> None:
    users = [User.objects.create_user(name) for name in ("ann", "ben", "cat")]
    campaign = screening_campaign(dataset, *users, rule={"min_correct": 0}, quota_per_annotator=5)
    for user in users:
        contrary_practice_and_qualification(campaign, user)
    work_the_queue(campaign, users)
    assert QualificationAnswer.objects.filter(item__campaign=campaign).count() == 3 * (2 * 3 + 3)

    with_them = figures(campaign, users, tmp_path / "first")
    assert not set(with_them["verdicts"]) & SET_APART
    assert with_them["progress"].items_total == 12 - len(SET_APART)
    assert with_them["progress"].annotations_submitted == Annotation.objects.count()
    # Nine practice and qualification answers each, and still five items before the quota.
    assert with_them["quota"][:2] == [5, 5]
    exported = b"".join(with_them["files"].values()).decode()
    assert not any(f'"{pid}"' in exported for pid in SET_APART)
    annotations = with_them["files"]["annotations.jsonl"].decode().splitlines()
    assert len(annotations) == Annotation.objects.filter(is_current=True).count()

    QualificationAnswer.objects.filter(item__campaign=campaign).delete()
    QualificationRecord.objects.filter(membership__campaign=campaign).delete()
    without_them = figures(campaign, users, tmp_path / "second")
    assert without_them == with_them


def test_it_counts_no_qualification_answer_in_the_annotators_figures(dataset) -> None:
    """A member who answered only practice and qualification has nothing in the progress,
    quality-control or audit rows: no submitted item, no gold, no time."""
    (alone,) = [User.objects.create_user("solo")]
    campaign = screening_campaign(dataset, rule={"min_correct": 0})
    add_member(campaign, alone)
    contrary_practice_and_qualification(campaign, alone)
    row = campaign_progress(campaign).annotators[0]
    assert (row.submitted, row.skipped, row.gold_scored, row.median_seconds) == (0, 0, 0, None)
    assert campaign_quality(campaign) == []
    assert annotator_standing(campaign, alone).done == 0


STATISTICS_MODULES = [
    *sorted((ROOT / "prb_annotate" / "audit").glob("*.py")),
    *sorted((ROOT / "prb_annotate" / "exports").glob("*.py")),
    *(
        ROOT / "prb_annotate" / "campaigns" / name
        for name in ("progress.py", "plan.py", "evaluating.py")
    ),
]


@pytest.mark.parametrize("path", STATISTICS_MODULES, ids=lambda path: path.name)
def test_it_keeps_the_statistics_modules_away_from_the_qualification_tables(path: Path) -> None:
    """What computes statistics, progress and exports never names the practice and
    qualification models or their package: nothing there can read those answers."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    names |= {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    modules = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {n for n in names if n.startswith("Qualification")}, path
    assert not {m for m in modules if "qualification" in m}, path
