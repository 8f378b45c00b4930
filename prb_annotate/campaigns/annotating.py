"""Submitting, revising and skipping: what happens to an annotator's answers.

Answers are stored in dataset orientation (about the chosen and the rejected answer). The
annotator saw Response A and Response B; ``Assignment.chosen_position`` says which side showed
the chosen answer, and ``answers_from_form`` turns the A/B form into dataset orientation.
"""

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from functools import cached_property
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Exists, Max, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from prb_annotate.campaigns.qualification.gate import BLOCKED_SUBMIT_COLUMN
from prb_annotate.db.plainsql import (
    db_time,
    execute,
    fetch,
    has_row_locks,
    insert,
    operation_transaction,
    row_lock,
)
from prb_annotate.models import (
    RAISED_SLOTS_SQL,
    Annotation,
    Assignment,
    Campaign,
    CampaignItem,
    Membership,
)
from prb_annotate.security.access import PARTICIPANT_SCOPE_SQL, in_participant_scope

MAX_CLIENT_TOKEN = 64
MAX_COMMENT = 5000
MAX_SKIP_REASON = 500
MAX_TIME_ON_TASK_MS = 2**31 - 1
MAX_ROW_ID = 2**63 - 1
TRUE_VALUES = frozenset({"on", "true", "1", "yes"})
FALSE_VALUES = frozenset({"", "off", "false", "0", "no"})
# PostgreSQL text cannot hold NUL characters: refused as bad input on every database.
NUL = "\x00"
NUL_MESSAGE = gettext_noop("Remove the NUL character (code 0).")
FULL_MESSAGE = gettext_noop(
    "This pair already has enough annotations; your answer was not recorded."
)
NOT_CLEARED_MESSAGE = gettext_noop(
    "Answer the practice and pass the qualification first; your answer was not recorded."
)


@dataclass(frozen=True)
class Answers:
    """One annotator's judgement of a pair, in dataset orientation."""

    quality_chosen: dict[str, int]
    quality_rejected: dict[str, int]
    rubric_fit: str  # chosen / rejected / tie
    differentiator: str  # preference / quality / both / none
    confidence: str  # low / medium / high
    comment: str = ""
    flagged: bool = False


ANSWER_FIELDS = tuple(field.name for field in fields(Answers))


def answer_columns(answers: Answers) -> dict[str, Any]:
    """The Annotation columns an annotator's answers fill."""
    return {name: getattr(answers, name) for name in ANSWER_FIELDS}


@dataclass(frozen=True)
class Submission:
    """Everything a submit form carries: the answers plus the request's bookkeeping."""

    answers: Answers
    client_token: str
    time_on_task_ms: int | None


@dataclass(frozen=True)
class SubmitResult:
    annotation: Annotation
    created: bool
    message: str


def status_word(status: str) -> str:
    """A campaign's status as a sentence names it, in the active language ("paused")."""
    return str(Campaign.Status(status).label).lower() if status in Campaign.Status else status


class SubmitError(Exception):
    """A submit or skip that changed nothing; ``field_errors`` maps form fields to messages.

    ``code`` tells the API which status to answer: "invalid" (400: fix the form),
    "full" (409: the pair has enough annotations), "inactive" (409: campaign not active),
    "submitted" (409: cannot skip what was submitted), "qualification" (403: practice or
    qualification first, or failed).
    """

    def __init__(
        self, message: str, field_errors: dict[str, str] | None = None, *, code: str = "invalid"
    ) -> None:
        # Texts are in the language active where the error is raised (English on the API, the
        # reader's on a page).
        super().__init__(message)
        self.message = message
        self.field_errors: dict[str, str] = field_errors or {}
        self.code = code


# --- the form ----------------------------------------------------------------------------


def answers_from_form(data: Mapping[str, Any], *, assignment: Assignment) -> Answers:
    """Parse the A/B form the annotator filled in into dataset orientation.

    Checks every field of the form at once (``client_token`` and ``time_on_task_ms``
    included) and raises one SubmitError with a message per bad field.
    """
    return parse_submission(data, assignment=assignment).answers


def parse_submission(data: Mapping[str, Any], *, assignment: Assignment) -> Submission:
    """Like ``answers_from_form``, and also returns the client token and time on task."""
    campaign = assignment.campaign
    errors: dict[str, str] = {}
    quality: dict[str, dict[str, int]] = {"A": {}, "B": {}}
    for side in ("A", "B"):
        for criterion in campaign.quality_criteria:
            name = f"quality_{side}_{criterion}"
            rating = _int_field(data.get(name), 1, campaign.rating_scale_max)
            if rating is None:
                errors[name] = _("Rate %(criterion)s of response %(side)s from 1 to %(high)s.") % {
                    "criterion": _(criterion),
                    "side": side,
                    "high": campaign.rating_scale_max,
                }
            else:
                quality[side][criterion] = rating

    fit = _text(data.get("rubric_fit")).strip()
    fit_key = fit.upper() if fit.lower() != "tie" else "tie"
    if fit_key not in {"A", "B", "tie"}:
        errors["rubric_fit"] = _("Choose A, B or tie.")
    differentiator = _text(data.get("differentiator")).strip().lower()
    if differentiator not in Annotation.Differentiator.values:
        errors["differentiator"] = _("Choose what mainly distinguishes the two responses.")
    confidence = _text(data.get("confidence")).strip().lower()
    if confidence not in Annotation.Confidence.values:
        errors["confidence"] = _("Choose low, medium or high.")
    comment = _text(data.get("comment")).strip()
    if len(comment) > MAX_COMMENT:
        errors["comment"] = _("Keep the comment under %(limit)s characters.") % {
            "limit": MAX_COMMENT
        }
    elif NUL in comment:
        errors["comment"] = _(NUL_MESSAGE)
    flagged = _bool_field(data.get("flagged"))
    if flagged is None:
        errors["flagged"] = _("Flagged is either on or off.")

    client_token = _text(data.get("client_token")).strip()
    if not client_token:
        errors["client_token"] = _("Missing client token; reload the page.")
    elif len(client_token) > MAX_CLIENT_TOKEN:
        errors["client_token"] = f"Client token longer than {MAX_CLIENT_TOKEN} characters."
    elif NUL in client_token:
        errors["client_token"] = _(NUL_MESSAGE)
    time_on_task_ms: int | None = None
    raw_time = data.get("time_on_task_ms")
    if raw_time not in (None, ""):
        time_on_task_ms = _int_field(raw_time, 0, MAX_TIME_ON_TASK_MS, round_floats=True)
        if time_on_task_ms is None:
            errors["time_on_task_ms"] = _("Time on task is a whole number of milliseconds.")

    if errors:
        raise SubmitError(_("Please correct the marked fields."), errors)

    chosen_side = assignment.chosen_position
    rejected_side = "B" if chosen_side == "A" else "A"
    if fit_key == "tie":
        rubric_fit = Annotation.RubricFit.TIE
    elif fit_key == chosen_side:
        rubric_fit = Annotation.RubricFit.CHOSEN
    else:
        rubric_fit = Annotation.RubricFit.REJECTED
    answers = Answers(
        quality_chosen=quality[chosen_side],
        quality_rejected=quality[rejected_side],
        rubric_fit=str(rubric_fit),
        differentiator=differentiator,
        confidence=confidence,
        comment=comment,
        flagged=bool(flagged),
    )
    return Submission(answers, client_token, time_on_task_ms)


def form_values(annotation: Annotation, assignment: Assignment) -> dict[str, str]:
    """An annotation as the A/B form that produced it (to pre-fill a revision)."""
    chosen_side = assignment.chosen_position
    rejected_side = "B" if chosen_side == "A" else "A"
    values: dict[str, str] = {}
    for criterion, rating in annotation.quality_chosen.items():
        values[f"quality_{chosen_side}_{criterion}"] = str(rating)
    for criterion, rating in annotation.quality_rejected.items():
        values[f"quality_{rejected_side}_{criterion}"] = str(rating)
    values["rubric_fit"] = annotation.rubric_fit_as_position(chosen_side)
    values["differentiator"] = annotation.differentiator
    values["confidence"] = annotation.confidence
    values["comment"] = annotation.comment
    values["flagged"] = "on" if annotation.flagged else ""
    return values


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):  # JSON true/false where text was expected
        return ""
    if isinstance(value, str | int | float):
        return str(value)
    return ""


def _int_field(value: Any, low: int, high: int, *, round_floats: bool = False) -> int | None:
    """A whole number within [low, high] from form text or JSON; None when it is not one.

    JSON floats count when they are whole (5.0), or always with ``round_floats`` (a browser's
    timer gives fractions of a millisecond)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        if not math.isfinite(value) or not (round_floats or value.is_integer()):
            return None
        number = round(value)
    elif isinstance(value, int):
        number = value
    elif isinstance(value, str) and 0 < len(value.strip()) <= 12:
        text = value.strip()
        if not (text.isascii() and text.lstrip("-").isdigit()):
            return None
        number = int(text)
    else:
        return None
    return number if low <= number <= high else None


def _bool_field(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return bool(value)
    text = _text(value).strip().lower()
    if text in TRUE_VALUES:
        return True
    if text in FALSE_VALUES:
        return False
    return None


def check_answers(answers: Answers, campaign: Campaign) -> None:
    """Answers built in code get the same checks as the form (SubmitError otherwise)."""
    errors: dict[str, str] = {}
    criteria = set(campaign.quality_criteria)
    for name, ratings in (
        ("quality_chosen", answers.quality_chosen),
        ("quality_rejected", answers.quality_rejected),
    ):
        if set(ratings) != criteria or not all(
            isinstance(r, int) and not isinstance(r, bool) and 1 <= r <= campaign.rating_scale_max
            for r in ratings.values()
        ):
            errors[name] = f"One rating from 1 to {campaign.rating_scale_max} per criterion."
    if answers.rubric_fit not in Annotation.RubricFit.values:
        errors["rubric_fit"] = "Choose chosen, rejected or tie."
    if answers.differentiator not in Annotation.Differentiator.values:
        errors["differentiator"] = "Choose what mainly distinguishes the two responses."
    if answers.confidence not in Annotation.Confidence.values:
        errors["confidence"] = "Choose low, medium or high."
    if len(answers.comment) > MAX_COMMENT:
        errors["comment"] = f"Keep the comment under {MAX_COMMENT} characters."
    elif NUL in answers.comment:
        errors["comment"] = _(NUL_MESSAGE)
    if errors:
        raise SubmitError("Please correct the marked fields.", errors)


# --- submit, revise, skip ----------------------------------------------------------------


# The assignment and its item, locked in that order (PostgreSQL).
SUBMIT_LOCK_SQL = """
SELECT a.id FROM prb_annotate_assignment a JOIN prb_annotate_campaignitem i ON i.id = a.item_id
WHERE a.id = %s AND a.annotator_id = %s
"""

# After the lock, everything a submit decides on: the assignment, its item's target, the
# campaign's state and questions, the annotation the client token made if any, the item's
# other assignments that hold a slot (submitted ones and live reservations), whether the
# annotator is not cleared for regular items (qualification/gate.py), and whether they still
# owe the campaign's consent (a reservation made before a consent text was set is no way
# around it). Only an annotator member of the campaign, in the scope of an account made by an
# invite link (security/access.py), finds their assignment here: a removed annotator's
# assignments stay theirs in the audit but take no answer, revision or replay (the membership
# row, one per campaign and account, joins by its unique index: no statement of its own).
SUBMIT_TEMPLATE = """
SELECT a.status, a.chosen_position,
       CASE WHEN a.status = 'reserved' AND a.expires_at > %s THEN 1 ELSE 0 END,
       i.kind, i.gold_answers,
       c.annotations_per_pair + {raised}, c.status,
       c.quality_criteria, c.rating_scale_max,
       t.id, t.assignment_id,
       (SELECT COUNT(*) FROM prb_annotate_assignment o
        WHERE o.item_id = a.item_id AND o.id <> a.id AND o.status = 'submitted'),
       (SELECT COUNT(*) FROM prb_annotate_assignment o
        WHERE o.item_id = a.item_id AND o.id <> a.id AND o.status = 'reserved'
          AND o.expires_at > %s),
       {blocked},
       CASE WHEN {consent_missing} THEN 1 ELSE 0 END
FROM prb_annotate_assignment a
JOIN prb_annotate_campaignitem i ON i.id = a.item_id
JOIN prb_annotate_campaign c ON c.id = a.campaign_id
JOIN prb_annotate_membership m
  ON m.campaign_id = a.campaign_id AND m.user_id = a.annotator_id AND m.role = 'annotator'
LEFT JOIN prb_annotate_annotation t ON t.client_token = %s
WHERE a.id = %s AND a.annotator_id = %s AND {participant_scope}
"""
# The member has not accepted the campaign's consent text (briefing.needs_consent).
CONSENT_MISSING_SQL = "TRIM(c.consent_text) <> '' AND m.consent_given_at IS NULL"
SUBMIT_SQL = SUBMIT_TEMPLATE.format(
    blocked=BLOCKED_SUBMIT_COLUMN,
    consent_missing=CONSENT_MISSING_SQL,
    raised=RAISED_SLOTS_SQL,
    participant_scope=PARTICIPANT_SCOPE_SQL,
)
CONSENT_MESSAGE = gettext_noop("Accept the campaign's consent text before your next answer.")

# A gold answer that is right proves a newcomer (``assignment.py``): their first such answer.
PROVEN_SQL = """
UPDATE prb_annotate_membership SET proven_at = %s
WHERE proven_at IS NULL
  AND EXISTS (SELECT 1 FROM prb_annotate_assignment a
              WHERE a.id = %s AND a.campaign_id = prb_annotate_membership.campaign_id
                AND a.annotator_id = prb_annotate_membership.user_id)
"""

MARK_SUBMITTED_SQL = """
UPDATE prb_annotate_assignment SET status = 'submitted', submitted_at = %s WHERE id = %s
"""


@dataclass(frozen=True)
class _Locked:
    """An assignment as SUBMIT_SQL reads it, under its lock: the fields after
    ``assignment_id`` are the query's columns, in its order."""

    assignment_id: int
    status: str
    chosen_position: str
    live: bool  # a reservation that has not expired
    kind: str
    gold_answers: dict[str, Any] | None
    target: int
    campaign_status: str
    quality_criteria: list[str]
    rating_scale_max: int
    token_annotation_id: int | None  # the annotation this client token made, if any
    token_assignment_id: int | None
    others_submitted: int
    others_reserved: int  # live reservations of others on the item
    blocked: bool  # not cleared for regular items
    consent_missing: bool  # has not accepted the consent text

    @classmethod
    def from_row(cls, assignment_id: int, row: Sequence[Any]) -> "_Locked":
        values = dict(zip(_LOCKED_COLUMNS, row, strict=True))
        # Plain SQL gives 0/1 for the flags, and a JSON column as text on SQLite.
        for name in ("live", "blocked", "consent_missing"):
            values[name] = bool(values[name])
        for name in ("target", "others_submitted", "others_reserved"):
            values[name] = int(values[name])
        for name in ("gold_answers", "quality_criteria"):
            values[name] = _json(values[name])
        return cls(assignment_id=assignment_id, **values)

    @cached_property
    def form_assignment(self) -> Assignment:
        """What ``parse_submission`` needs: the side of the chosen answer and the questions.
        Built as loaded rows with the other fields deferred, which computes no defaults (a
        new Campaign would draw an invite token)."""
        questions = ["id", "quality_criteria", "rating_scale_max"]
        campaign = Campaign.from_db(
            None, questions, [None, self.quality_criteria, self.rating_scale_max]
        )
        assignment = Assignment.from_db(
            None, ["id", "chosen_position"], [self.assignment_id, self.chosen_position]
        )
        assignment.campaign = campaign
        return assignment


_LOCKED_COLUMNS = tuple(field.name for field in fields(_Locked))[1:]


def submit(
    assignment_id: int,
    annotator: User,
    answers: Answers,
    *,
    client_token: str,
    time_on_task_ms: int | None = None,
    now: datetime | None = None,
) -> SubmitResult:
    """Record the annotator's answers for their assignment; one transaction.

    - The same ``client_token`` again (double click, network retry) returns the annotation
      it made, ``created=False``, even if the campaign closed in between.
    - A submitted assignment is revised: a new row with the next revision becomes current.
    - A live reservation always counts. A lapsed, expired or skipped one counts only if the
      item still has room next to the others' submitted answers and live reservations;
      otherwise SubmitError(code="full") and nothing is stored.
    - A member not cleared for regular items (practice or qualification to do, or failed)
      gets SubmitError(code="qualification"), even for a reservation made before.
    - Someone else's assignment raises Assignment.DoesNotExist, as if it did not exist; so
      does one's own once one is no longer an annotator of its campaign (removed: nothing is
      stored, and the answers already submitted stay as they were).
    """
    _check_row_id(assignment_id)
    if not client_token or len(client_token) > MAX_CLIENT_TOKEN:
        raise SubmitError("Missing client token.", {"client_token": "Missing or too long."})
    if NUL in client_token:
        raise SubmitError("Invalid client token.", {"client_token": _(NUL_MESSAGE)})
    if time_on_task_ms is not None and not 0 <= time_on_task_ms <= MAX_TIME_ON_TASK_MS:
        raise SubmitError("Invalid time on task.", {"time_on_task_ms": "Out of range."})
    submission = Submission(answers, client_token, time_on_task_ms)
    return _submit(assignment_id, annotator, client_token, now, lambda _: submission)


def submit_form(
    assignment_id: int,
    annotator: User,
    data: Mapping[str, Any],
    *,
    now: datetime | None = None,
) -> SubmitResult:
    """``parse_submission`` and ``submit`` in one: the form is read against the assignment as
    the submit's own transaction sees it, so the assignment is read once. The same answers
    and errors, in the same order: someone else's assignment first, then the form's fields."""
    _check_row_id(assignment_id)
    client_token = _text(data.get("client_token")).strip()
    if NUL in client_token:
        client_token = ""  # never looked up (PostgreSQL refuses it); the form check says why
    return _submit(
        assignment_id,
        annotator,
        client_token,
        now,
        lambda locked: parse_submission(data, assignment=locked.form_assignment),
    )


def _submit(
    assignment_id: int,
    annotator: User,
    client_token: str,
    now: datetime | None,
    submission_for: Callable[[_Locked], Submission],
) -> SubmitResult:
    now = now or timezone.now()
    try:
        with operation_transaction():
            locked = _lock_for_submit(assignment_id, annotator, client_token, now)
            return _store(locked, submission_for(locked), now)
    except IntegrityError as error:
        # The same token sent at the same moment for two different assignments (a client
        # bug): the unique token decides, and the loser changed nothing. The same token for
        # the same assignment never gets here: the assignment lock serializes those.
        raise SubmitError(
            "This client token was already used for another answer.",
            {"client_token": "Already used; reload the page."},
        ) from error


def _check_row_id(assignment_id: int) -> None:
    if not 0 < assignment_id <= MAX_ROW_ID:
        raise Assignment.DoesNotExist("No such assignment.")


def _lock_for_submit(
    assignment_id: int, annotator: User, client_token: str, now: datetime
) -> _Locked:
    # Lock the assignment and its item, in that order. The assignment lock makes a double
    # click wait for the first submit and then find its token; the item lock orders this room
    # check against next_assignment reserving the item's last slot.
    if has_row_locks() and not fetch(
        SUBMIT_LOCK_SQL + row_lock(of="a, i"), [assignment_id, annotator.pk]
    ):
        raise Assignment.DoesNotExist("No such assignment.")
    when = db_time(now)
    rows = fetch(SUBMIT_SQL, [when, when, client_token, assignment_id, annotator.pk])
    if not rows:
        raise Assignment.DoesNotExist("No such assignment.")
    return _Locked.from_row(assignment_id, rows[0])


def _store(locked: _Locked, submission: Submission, now: datetime) -> SubmitResult:
    """The submit's decisions, on the locked assignment."""
    assignment_id = locked.assignment_id
    if locked.token_annotation_id is not None:
        if locked.token_assignment_id != assignment_id:
            raise SubmitError(
                "This client token was already used for another answer.",
                {"client_token": "Already used; reload the page."},
            )
        existing = Annotation.objects.get(pk=locked.token_annotation_id)
        return SubmitResult(existing, created=False, message=_("Your answer was already saved."))
    if locked.campaign_status != Campaign.Status.ACTIVE:
        raise SubmitError(
            _("This campaign is %(status)s; answers are not accepted.")
            % {"status": status_word(locked.campaign_status)},
            code="inactive",
        )
    if locked.blocked:
        raise SubmitError(_(NOT_CLEARED_MESSAGE), code="qualification")
    if locked.consent_missing:
        raise SubmitError(_(CONSENT_MESSAGE), code="consent")
    answers = submission.answers
    check_answers(answers, locked.form_assignment.campaign)
    token, time_on_task_ms = submission.client_token, submission.time_on_task_ms

    if _gold_right(locked, answers):
        execute(PROVEN_SQL, [db_time(now), assignment_id])
    if locked.status == Assignment.Status.SUBMITTED:
        return SubmitResult(
            _add_revision(assignment_id, answers, token, time_on_task_ms),
            created=True,
            message=_("Your revised answer was saved."),
        )
    if locked.kind != CampaignItem.Kind.GOLD:
        # A live reservation already owns its slot; the check on submitted answers still
        # guards against slots handed out twice (clocks that disagree between servers).
        taken = locked.others_submitted
        if not locked.live:
            taken += locked.others_reserved
        if taken >= locked.target:
            raise SubmitError(_(FULL_MESSAGE), code="full")
    execute(MARK_SUBMITTED_SQL, [db_time(now), assignment_id])
    annotation = _create_annotation(assignment_id, answers, token, time_on_task_ms, 1)
    return SubmitResult(annotation, created=True, message=_("Your answer was saved."))


def _gold_right(locked: _Locked, answers: Answers) -> bool:
    """Whether this is a gold item answered as its expected answers say (as the audit's gold
    accuracy counts it)."""
    if locked.kind != CampaignItem.Kind.GOLD or not locked.gold_answers:
        return False
    return all(getattr(answers, key, None) == value for key, value in locked.gold_answers.items())


def _json(value: Any) -> Any:
    # A JSON column read by plain SQL: text on SQLite, and on PostgreSQL as the driver hands it.
    return json.loads(value) if isinstance(value, str | bytes) else value


def _add_revision(
    assignment_id: int, answers: Answers, client_token: str, time_on_task_ms: int | None
) -> Annotation:
    """Called with the assignment locked, so two revisions cannot take the same number."""
    annotations = Annotation.objects.filter(assignment_id=assignment_id)
    last = annotations.aggregate(last=Max("revision"))["last"] or 0
    annotations.filter(is_current=True).update(is_current=False)
    return _create_annotation(assignment_id, answers, client_token, time_on_task_ms, last + 1)


def _create_annotation(
    assignment_id: int,
    answers: Answers,
    client_token: str,
    time_on_task_ms: int | None,
    revision: int,
) -> Annotation:
    # Plain SQL: one insert per submit, where ORM query building would cost more than it.
    annotation = Annotation(
        assignment_id=assignment_id,
        revision=revision,
        is_current=True,
        **answer_columns(answers),
        time_on_task_ms=time_on_task_ms,
        client_token=client_token,
    )
    return insert(annotation)


# The assignment's account is still an annotator of its campaign (security/access.py's rule).
_ANNOTATOR_MEMBER = Exists(
    Membership.objects.filter(
        in_participant_scope(),
        campaign_id=OuterRef("campaign_id"),
        user_id=OuterRef("annotator_id"),
        role=Membership.Role.ANNOTATOR,
    )
)


def skip(
    assignment_id: int, annotator: User, *, reason: str = "", now: datetime | None = None
) -> Assignment:
    """Give the item up: its slot goes to someone else and it never comes back to this annotator.

    Skipping again changes nothing. A submitted assignment cannot be skipped (SubmitError).
    Someone else's assignment, or one's own once one is no longer an annotator of its campaign,
    raises Assignment.DoesNotExist, as the submit does.
    """
    if not 0 < assignment_id <= MAX_ROW_ID:
        raise Assignment.DoesNotExist("No such assignment.")
    with transaction.atomic():
        own = Assignment.objects.filter(pk=assignment_id, annotator_id=annotator.pk)
        if has_row_locks():
            # Lock first and read the membership in a statement of its own, as the submit
            # does: a removal that committed while this waited for the lock is seen then.
            own.select_for_update().values_list("pk").first()
        assignment = own.filter(_ANNOTATOR_MEMBER).select_related("campaign").get()
        if assignment.status == Assignment.Status.SUBMITTED:
            raise SubmitError(
                _("You already submitted this pair; revise it instead."), code="submitted"
            )
        if NUL in reason:
            raise SubmitError("Please correct the marked fields.", {"reason": _(NUL_MESSAGE)})
        if assignment.status != Assignment.Status.SKIPPED:
            assignment.status = Assignment.Status.SKIPPED
            assignment.skip_reason = reason.strip()[:MAX_SKIP_REASON]
            assignment.save(update_fields=["status", "skip_reason"])
    return assignment


def current_annotation(assignment: Assignment) -> Annotation | None:
    return Annotation.objects.filter(assignment=assignment, is_current=True).first()
