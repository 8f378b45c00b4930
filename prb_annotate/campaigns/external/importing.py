"""A file of answers written into an external campaign in one transaction, all or nothing.

Every row is checked first (``fields``), then against the campaign: the pair must be one of
its items, and an annotator answers a pair once (in the file and with what was imported
before). Any problem and nothing is written: ``ImportFailed`` lists them, each naming the line
and the column. The answers are then stored as everyone's are, so the audit, the exports and
the evaluations read them unchanged: an account per annotator id (no password, unable to log
in; ``ExternalAnnotator`` keeps the id as given), a submitted assignment and a current
annotation per answer. Annotators the source left out of its audit (``counted`` false in our
own export) are excluded from this campaign's audit too.
"""

import hashlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import IO, Protocol

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from prb_annotate.campaigns.annotating import answer_columns
from prb_annotate.campaigns.external import fields, readers
from prb_annotate.campaigns.external.fields import ImportedAnswer, QuestionSet
from prb_annotate.campaigns.external.mapping import Mapping, parse_mapping
from prb_annotate.datasets.budget import DecodeBudget, upload_budget
from prb_annotate.datasets.importing import ImportFailed, Problem
from prb_annotate.datasets.provenance import stream_sha256
from prb_annotate.datasets.readers import Unreadable
from prb_annotate.models import (
    Annotation,
    AnnotatorExclusion,
    AnswerImport,
    Assignment,
    Campaign,
    CampaignItem,
    ExternalAnnotator,
)

LEFT_OUT_REASON = "left out of the audit where the answers were collected (counted: false in {})"


@dataclass(frozen=True)
class AnswerImportReport:
    record: AnswerImport
    annotators: int
    excluded: int

    def as_dict(self) -> dict[str, object]:
        """The import's figures, as the API answers them and an import job's result file holds."""
        return {
            "campaign": self.record.campaign_id,
            "source": self.record.source,
            "source_sha256": self.record.source_sha256,
            "file_format": self.record.file_format,
            "answers": self.record.answers,
            "annotators": self.annotators,
            "excluded_annotators": self.excluded,
            "summary": self.summary,
        }

    @property
    def summary(self) -> str:
        return (
            f"campaign #{self.record.campaign_id}: {self.record.answers} answers by "
            f"{self.annotators} annotators imported from {self.record.source} "
            f"(sha256 {self.record.source_sha256}, {self.record.file_format})"
        )


def questions_of(campaign: Campaign) -> QuestionSet:
    return QuestionSet(tuple(campaign.quality_criteria), campaign.rating_scale_max)


def import_answer_path(
    campaign: Campaign, path: Path, mapping: Mapping | None = None, imported_by: User | None = None
) -> AnswerImportReport:
    with path.open("rb") as stream:
        return import_answers(campaign, path.name, stream, mapping, imported_by=imported_by)


class Upload(Protocol):
    """An uploaded file as the pages and the API hand it over."""

    name: str | None
    file: IO[bytes]

    def read(self) -> bytes: ...


def import_upload(
    campaign: Campaign, upload: Upload, mapping_file: Upload | None, imported_by: User
) -> AnswerImportReport:
    """An answer file and its optional mapping file, as uploaded on the pages or to the API:
    raises MappingError for a bad mapping and ImportFailed for bad rows; writes nothing then."""
    mapping = parse_mapping(mapping_file.read(), questions_of(campaign)) if mapping_file else None
    return import_answers(
        campaign,
        upload.name or "",
        upload.file,
        mapping,
        imported_by=imported_by,
        budget=upload_budget(),
    )


def check_importable(campaign: Campaign, name: str) -> None:
    """Raise ImportFailed when no file named ``name`` can go into ``campaign`` whatever it
    holds: the campaign is not external, or the file type is not one read. Checked before a
    large file becomes a background job, so that it is refused at once, not by the worker."""
    name = name.replace("\x00", "")
    suffix = Path(name).suffix.lower()
    if not campaign.external:
        message = f"campaign {campaign.pk} ({campaign.name!r}) is not external"
        raise ImportFailed([Problem(name, None, None, message)])
    if suffix not in readers.SUFFIXES:
        message = f"unsupported file type {suffix or '(none)'} ({', '.join(readers.SUFFIXES)})"
        raise ImportFailed([Problem(name, None, None, message)])


def import_answers(
    campaign: Campaign,
    name: str,
    stream: IO[bytes],
    mapping: Mapping | None = None,
    *,
    imported_by: User | None = None,
    budget: DecodeBudget | None = None,
    on_write: Callable[[int], None] | None = None,
    before_commit: Callable[[AnswerImportReport], None] | None = None,
) -> AnswerImportReport:
    """Import the answers of file ``name``; raises ImportFailed and writes nothing when any row
    is wrong. ``budget`` bounds an upload's reading (``datasets/budget.py``); ``on_write`` is
    told how many answers were read, once all are checked and before they are written;
    ``before_commit`` gets the report as the last thing inside the write's transaction (an
    import job ends there, and rolls the write back by raising when it was cancelled)."""
    mapping = mapping or Mapping()
    name = name.replace("\x00", "")  # stored as the import's source: no database keeps NUL
    suffix = Path(name).suffix.lower()
    check_importable(campaign, name)
    sha256 = stream_sha256(stream)
    problems: list[Problem] = []
    answers, first = _read(campaign, name, stream, suffix, mapping, problems, budget)
    if not problems and not answers:
        problems.append(Problem(name, None, None, "no answers in the file"))
    if problems:
        raise ImportFailed(problems)
    if on_write is not None:
        on_write(len(answers))
    file_format = readers.file_format(suffix, first)
    return _write(campaign, name, sha256, file_format, answers, imported_by, before_commit)


def _read(
    campaign: Campaign,
    name: str,
    stream: IO[bytes],
    suffix: str,
    mapping: Mapping,
    problems: list[Problem],
    budget: DecodeBudget | None,
) -> tuple[list[ImportedAnswer], dict | None]:
    questions = questions_of(campaign)
    items = {
        external_id: (item_id, chosen, rejected)
        for item_id, external_id, chosen, rejected in CampaignItem.objects.filter(
            campaign=campaign
        ).values_list("pk", "pair__external_id", "pair__chosen", "pair__rejected")
    }
    answered = set(
        Assignment.objects.filter(campaign=campaign).values_list(
            "item__pair__external_id", "annotator__external_annotator__given_id"
        )
    )
    seen: dict[tuple[str, str], str] = {}
    answers: list[ImportedAnswer] = []
    first: dict | None = None
    try:
        for row in readers.read_rows(name, stream, suffix, mapping, problems, budget=budget):
            first = row.values if first is None else first
            values = dict(row.values)
            left, right = values.pop(readers.LEFT_TEXT, None), values.pop(readers.RIGHT_TEXT, None)
            exact = _exact_pair_id(values.get(fields.PAIR_ID), items)
            pair = items.get(exact or fields.text_of(values.get(fields.PAIR_ID, "")))
            if pair is not None and left is not None and not values.get(fields.CHOSEN_POSITION):
                values[fields.CHOSEN_POSITION] = _side_of(pair[1], left, right)
            answer = fields.parse_row(values, questions, row.location, problems)
            if answer is None:
                continue
            if exact is not None:
                answer = replace(answer, pair_id=exact)
            if answer.pair_id not in items:
                problems.append(
                    row.location.problem(
                        fields.PAIR_ID, f"unknown pair id {answer.pair_id!r} (not in the campaign)"
                    )
                )
                continue
            key = (answer.pair_id, answer.annotator)
            if key in answered:
                problems.append(
                    row.location.problem(
                        fields.ANNOTATOR,
                        f"{answer.annotator!r} already has an imported answer to "
                        f"{answer.pair_id!r}",
                    )
                )
            elif key in seen:
                problems.append(
                    row.location.problem(
                        fields.ANNOTATOR,
                        f"{answer.annotator!r} answered pair {answer.pair_id!r} twice "
                        f"(first at {seen[key]})",
                    )
                )
            else:
                seen[key] = f"{row.location.unit} {row.location.line}"
                answers.append(answer)
    except Unreadable as error:
        problems.append(Problem(name, error.line, error.field, error.message))
    _check_counted(answers, problems)
    return answers, first


def _exact_pair_id(value: object, items: Collection[str]) -> str | None:
    """The pair id as written, blanks at its edges included, when the campaign has a pair of
    exactly that id (a dataset may keep ``" p1"``); None to read it trimmed, as usual."""
    if isinstance(value, str) and value != value.strip() and value in items:
        return value
    return None


def _side_of(chosen: str, left: object, right: object) -> str:
    """Where the chosen answer was shown, from the texts of the task: A (left), B or unknown."""
    if isinstance(left, str) and left.strip() == chosen.strip():
        return "A"
    if isinstance(right, str) and right.strip() == chosen.strip():
        return "B"
    return ""


def _check_counted(answers: list[ImportedAnswer], problems: list[Problem]) -> None:
    """``counted`` is about an annotator, so all their rows say the same."""
    by_annotator: dict[str, bool] = {}
    for answer in answers:
        earlier = by_annotator.setdefault(answer.annotator, answer.counted)
        if earlier != answer.counted:
            problems.append(
                answer.location.problem(
                    fields.COUNTED, f"differs from {answer.annotator!r}'s other rows"
                )
            )


@transaction.atomic
def _write(
    campaign: Campaign,
    name: str,
    sha256: str,
    file_format: str,
    answers: list[ImportedAnswer],
    imported_by: User | None,
    before_commit: Callable[[AnswerImportReport], None] | None = None,
) -> AnswerImportReport:
    record = AnswerImport.objects.create(
        campaign=campaign,
        source=name,
        source_sha256=sha256,
        file_format=file_format,
        answers=len(answers),
        imported_by=imported_by,
    )
    users = _accounts(campaign, sorted({answer.annotator for answer in answers}))
    items = dict(
        CampaignItem.objects.filter(campaign=campaign).values_list("pair__external_id", "pk")
    )
    now = timezone.now()
    assignments = Assignment.objects.bulk_create(
        [
            Assignment(
                campaign=campaign,
                item_id=items[answer.pair_id],
                annotator=users[answer.annotator],
                chosen_position=answer.chosen_position,
                status=Assignment.Status.SUBMITTED,
                reserved_at=_when(answer.submitted_at, now),
                expires_at=_when(answer.submitted_at, now),
                submitted_at=_when(answer.submitted_at, now),
            )
            for answer in answers
        ],
        batch_size=500,
    )
    Annotation.objects.bulk_create(
        [
            Annotation(
                assignment=assignment,
                **answer_columns(answer.answers),
                time_on_task_ms=answer.time_on_task_ms,
                client_token=f"import-{record.pk}-{number}",
            )
            for number, (assignment, answer) in enumerate(
                zip(assignments, answers, strict=True), start=1
            )
        ],
        batch_size=500,
    )
    left_out = sorted({answer.annotator for answer in answers if not answer.counted})
    for given_id in left_out:
        AnnotatorExclusion.objects.get_or_create(
            campaign=campaign,
            annotator=users[given_id],
            lifted_at=None,
            defaults={"reason": LEFT_OUT_REASON.format(name), "excluded_by": imported_by},
        )
    report = AnswerImportReport(record, len(users), len(left_out))
    if before_commit is not None:
        before_commit(report)
    return report


def _when(moment: datetime | None, now: datetime) -> datetime:
    return moment or now


def _accounts(campaign: Campaign, given_ids: list[str]) -> dict[str, User]:
    """The account of each annotator id, made on first sight."""
    known = {
        row.given_id: row.user
        for row in ExternalAnnotator.objects.filter(
            campaign=campaign, given_id__in=given_ids
        ).select_related("user")
    }
    for given_id in given_ids:
        if given_id in known:
            continue
        user = User(username=_username(campaign, given_id), is_active=False)
        user.set_unusable_password()
        user.save()
        ExternalAnnotator.objects.create(campaign=campaign, user=user, given_id=given_id)
        known[given_id] = user
    return known


def _username(campaign: Campaign, given_id: str) -> str:
    """``c<campaign>:<id>``, unique across campaigns; a long id by its digest."""
    name = f"c{campaign.pk}:{given_id}"
    if len(name) <= 150:
        return name
    return f"c{campaign.pk}:{hashlib.sha256(given_id.encode()).hexdigest()}"
