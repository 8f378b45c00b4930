"""A member's way through practice and qualification: the next step, submits, feedback.

The steps, in order: every practice item the member has not answered (each answer is followed
by feedback; a practice item may be answered again at any time), then the qualification items
of the current attempt. An attempt ends when its last item is answered: it passes or fails by
the campaign's pass rule (``rules.py``); a first attempt that fails is followed by feedback on
every item (right or wrong, and why) and a second attempt on the same items (the chosen answer
on the other side); a second that fails screens the member out. The feedback between attempts
never gives the expected answers: they would answer the second attempt. Submits lock the
member's row first, as the queue does (see the package's docstring).
"""

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from prb_annotate.campaigns.annotating import (
    MAX_CLIENT_TOKEN,
    Answers,
    Submission,
    SubmitError,
    check_answers,
    parse_submission,
    status_word,
)
from prb_annotate.campaigns.qualification import rules
from prb_annotate.campaigns.qualification.setup import PRACTICE, QUALIFICATION, Outcome
from prb_annotate.languages import texts
from prb_annotate.models import (
    Assignment,
    Campaign,
    Membership,
    QualificationAnswer,
    QualificationItem,
    QualificationRecord,
)
from prb_annotate.security.access import in_participant_scope

CLEARED_OUTCOMES = (Outcome.PASSED, Outcome.ADMITTED)
SCREENED_OUT_MESSAGE = gettext_noop("You did not pass the qualification of this campaign.")


class Stage(StrEnum):
    PRACTICE = "practice"
    QUALIFICATION = "qualification"
    SCREENED_OUT = "screened_out"
    QUEUE = "queue"


@dataclass(frozen=True)
class Task:
    """A practice or qualification item to answer, as this member is shown it."""

    item: QualificationItem  # with its pair
    attempt: int  # qualification attempt, or the practice try this answer would be
    chosen_position: str
    number: int  # 1-based, within its phase
    total: int

    @property
    def phase(self) -> str:
        return self.item.phase

    def responses(self) -> tuple[str, str]:
        """(response A, response B)."""
        pair = self.item.pair
        if self.chosen_position == "A":
            return pair.chosen, pair.rejected
        return pair.rejected, pair.chosen

    def form_assignment(self, campaign: Campaign) -> Assignment:
        """What the annotation form's parser needs: the questions and the side shown."""
        return Assignment(campaign=campaign, chosen_position=self.chosen_position)


@dataclass(frozen=True)
class Step:
    stage: Stage
    task: Task | None = None
    record: QualificationRecord | None = None


@dataclass(frozen=True)
class QuestionFeedback:
    question: str
    label: str
    given: str  # as the member saw it: "Response A", "Tie", "Personal preference"...
    expected: str
    correct: bool
    explanation: str


@dataclass(frozen=True)
class ItemFeedback:
    item_id: int
    external_id: str
    question_text: str
    phase: str
    attempt: int
    correct: bool
    questions: list[QuestionFeedback]
    # False between qualification attempts: the next attempt asks the same items, so the
    # answers (given and expected) are withheld and only right or wrong and the reason shown.
    answers_shown: bool = True


@dataclass(frozen=True)
class AttemptResult:
    attempt: int
    right: int
    total: int
    passed: bool
    outcome: str  # the record's outcome after this attempt


@dataclass(frozen=True)
class QualificationSubmit:
    answer: QualificationAnswer
    created: bool
    feedback: ItemFeedback | None  # practice: after every answer
    result: AttemptResult | None  # qualification: when the answer ended an attempt
    record: QualificationRecord | None


# --- the next step ----------------------------------------------------------------------


def member(campaign_id: int, user: User) -> Membership:
    """The user's annotator membership (Membership.DoesNotExist when there is none)."""
    return (
        Membership.objects.select_related("campaign")
        .filter(in_participant_scope())
        .get(campaign_id=campaign_id, user_id=user.pk, role=Membership.Role.ANNOTATOR)
    )


def next_step(campaign: Campaign, user: User, *, now: datetime | None = None) -> Step:
    """Where the member stands: a practice or qualification item to answer, screened out, or
    on to the queue. Starts their qualification record when it hands out its first item."""
    membership = member(campaign.pk, user)
    items = _items(campaign)
    answered = _answered(items, user)
    record = _record(membership)
    if record is not None and record.outcome == Outcome.FAILED:
        return Step(Stage.SCREENED_OUT, record=record)
    practice = [item for item in items if item.phase == PRACTICE]
    for number, item in enumerate(practice, start=1):
        if not any(key[0] == item.pk for key in answered):
            position = rules.position_for(campaign.seed, user.pk, item.pk)
            return Step(Stage.PRACTICE, Task(item, 1, position, number, len(practice)), record)
    qualification = [item for item in items if item.phase == QUALIFICATION]
    if not qualification or (record is not None and record.outcome in CLEARED_OUTCOMES):
        return Step(Stage.QUEUE, record=record)
    if record is None:
        record = _start_record(membership, now or timezone.now())
    for number, item in enumerate(qualification, start=1):
        if (item.pk, record.attempt) not in answered:
            task = _qualification_task(campaign, user, item, record.attempt, number, qualification)
            return Step(Stage.QUALIFICATION, task, record)
    # Every item of the attempt answered, yet it is open (a submit ends the attempt it
    # completes, so only rows written by other means get here): end it now, and look again.
    with transaction.atomic():
        _locked_member(campaign.pk, user)
        record.refresh_from_db()
        if record.outcome == Outcome.IN_PROGRESS:
            _end_attempt_if_complete(campaign, record, user, now or timezone.now())
    return next_step(campaign, user, now=now)


def task_for(campaign: Campaign, user: User, item_id: int) -> Task | None:
    """A given item to answer now: any practice item (a retry), or a qualification item of
    the current attempt that the member has not answered yet; None otherwise."""
    step = next_step(campaign, user)
    if step.stage == Stage.SCREENED_OUT:
        return None
    if step.task is not None and step.task.item.pk == item_id:
        return step.task
    items = _items(campaign)
    practice = [item for item in items if item.phase == PRACTICE]
    for number, item in enumerate(practice, start=1):
        if item.pk == item_id:
            tries = _tries(item, user)
            position = rules.position_for(campaign.seed, user.pk, item.pk)
            return Task(item, tries + 1, position, number, len(practice))
    return None


def _qualification_task(
    campaign: Campaign,
    user: User,
    item: QualificationItem,
    attempt: int,
    number: int,
    qualification: list[QualificationItem],
) -> Task:
    position = rules.position_for(campaign.seed, user.pk, item.pk, flipped=attempt % 2 == 0)
    return Task(item, attempt, position, number, len(qualification))


def _items(campaign: Campaign) -> list[QualificationItem]:
    return list(
        QualificationItem.objects.filter(campaign=campaign)
        .select_related("pair")
        .order_by("phase", "position", "id")
    )


def _answered(items: list[QualificationItem], user: User) -> set[tuple[int, int]]:
    """(item id, attempt) of the member's answers."""
    rows = QualificationAnswer.objects.filter(
        item__in=[item.pk for item in items], annotator=user
    ).values_list("item_id", "attempt")
    return {(item_id, attempt) for item_id, attempt in rows}


def _tries(item: QualificationItem, user: User) -> int:
    last = QualificationAnswer.objects.filter(item=item, annotator=user).aggregate(n=Max("attempt"))
    return int(last["n"] or 0)


def _record(membership: Membership) -> QualificationRecord | None:
    return QualificationRecord.objects.filter(membership=membership).first()


def _start_record(membership: Membership, now: datetime) -> QualificationRecord:
    record, _ = QualificationRecord.objects.get_or_create(
        membership=membership, defaults={"started_at": now}
    )
    return record


# --- submits ----------------------------------------------------------------------------


def submit(
    campaign_id: int,
    user: User,
    item_id: int,
    data: Mapping[str, Any],
    *,
    now: datetime | None = None,
) -> QualificationSubmit:
    """Store the member's answer to a practice or qualification item (the annotation form's
    fields, parsed as for a regular item); one transaction, idempotent by client token.

    SubmitError codes: "invalid" (400), "inactive" (409), "order" (409: not this item now),
    "screened_out" (403). Membership.DoesNotExist and QualificationItem.DoesNotExist for what
    is not the caller's.
    """
    token = str(data.get("client_token") or "").strip()
    return _submit(
        campaign_id,
        user,
        item_id,
        token,
        lambda form: parse_submission(data, assignment=form),
        now or timezone.now(),
    )


def submit_answers(
    campaign_id: int,
    user: User,
    item_id: int,
    answers: Answers,
    *,
    client_token: str,
    time_on_task_ms: int | None = None,
    now: datetime | None = None,
) -> QualificationSubmit:
    """``submit`` for answers built in code (dataset orientation), checked as the form is."""

    def submission(form: Assignment) -> Submission:
        check_answers(answers, form.campaign)
        if not client_token or len(client_token) > MAX_CLIENT_TOKEN:
            raise SubmitError("Missing client token.", {"client_token": "Missing or too long."})
        return Submission(answers, client_token, time_on_task_ms)

    return _submit(campaign_id, user, item_id, client_token, submission, now or timezone.now())


def _submit(
    campaign_id: int,
    user: User,
    item_id: int,
    token: str,
    submission_for: Callable[[Assignment], Submission],
    now: datetime,
) -> QualificationSubmit:
    try:
        with transaction.atomic():
            membership = _locked_member(campaign_id, user)
            replay = _replay(token, user, item_id)
            if replay is not None:
                return replay
            return _store(membership, user, item_id, submission_for, now)
    except IntegrityError as error:
        raise SubmitError(
            "This client token was already used for another answer.",
            {"client_token": "Already used; reload the page."},
        ) from error


def _locked_member(campaign_id: int, user: User) -> Membership:
    # The member's row, locked: the queue takes the same lock first (assignment.py), so an
    # outcome written here and an item handed out there happen one after the other.
    return (
        Membership.objects.select_for_update(of=("self",))
        .select_related("campaign")
        .filter(in_participant_scope())
        .get(campaign_id=campaign_id, user_id=user.pk, role=Membership.Role.ANNOTATOR)
    )


def _replay(token: str, user: User, item_id: int) -> QualificationSubmit | None:
    if not token or len(token) > MAX_CLIENT_TOKEN or "\x00" in token:
        return None  # the form check says why
    answer = (
        QualificationAnswer.objects.select_related("item__pair").filter(client_token=token).first()
    )
    if answer is None:
        return None
    if answer.annotator_id != user.pk or answer.item_id != item_id:
        raise SubmitError(
            "This client token was already used for another answer.",
            {"client_token": "Already used; reload the page."},
        )
    record = QualificationRecord.objects.filter(
        membership__campaign_id=answer.item.campaign_id, membership__user_id=user.pk
    ).first()
    feedback = item_feedback(answer) if answer.item.phase == PRACTICE else None
    return QualificationSubmit(answer, False, feedback, None, record)


def _store(
    membership: Membership,
    user: User,
    item_id: int,
    submission_for: Callable[[Assignment], Submission],
    now: datetime,
) -> QualificationSubmit:
    campaign = membership.campaign
    if campaign.status != Campaign.Status.ACTIVE:
        raise SubmitError(
            gettext("This campaign is %(status)s; answers are not accepted.")
            % {"status": status_word(campaign.status)},
            code="inactive",
        )
    item = QualificationItem.objects.select_related("pair").get(pk=item_id, campaign=campaign)
    record = _record(membership)
    if record is not None and record.outcome == Outcome.FAILED:
        raise SubmitError(gettext(SCREENED_OUT_MESSAGE), code="screened_out")
    if item.phase == PRACTICE:
        attempt = _tries(item, user) + 1
        position = rules.position_for(campaign.seed, user.pk, item.pk)
    else:
        # The campaign's row too: a manager changing the qualification items or the pass rule
        # locks it (setup.py), so an attempt is judged by one item set and one rule, and a
        # first answer and a change that must precede every answer happen one after the other.
        Campaign.objects.select_for_update(no_key=True).filter(pk=campaign.pk).values("pk").get()
        record = _qualification_record(membership, user, item, now)
        attempt = record.attempt
        position = rules.position_for(campaign.seed, user.pk, item.pk, flipped=attempt % 2 == 0)
    submission = submission_for(Assignment(campaign=campaign, chosen_position=position))
    given = asdict(submission.answers)
    answer = QualificationAnswer.objects.create(
        item=item,
        annotator=user,
        attempt=attempt,
        chosen_position=position,
        answers=given,
        marks=rules.marks(item.expected_answers, given),
        time_on_task_ms=submission.time_on_task_ms,
        client_token=submission.client_token,
        created_at=now,
    )
    if answer.marks and answer.correct and membership.proven_at is None:
        # A right practice or qualification answer proves a newcomer (``assignment.py``).
        Membership.objects.filter(pk=membership.pk).update(proven_at=now)
    if item.phase == PRACTICE:
        return QualificationSubmit(answer, True, item_feedback(answer), None, record)
    assert record is not None
    result = _end_attempt_if_complete(campaign, record, user, now)
    return QualificationSubmit(answer, True, None, result, record)


def _qualification_record(
    membership: Membership, user: User, item: QualificationItem, now: datetime
) -> QualificationRecord:
    """The record a qualification answer goes to, after the checks that it may be given now."""
    campaign = membership.campaign
    practice = QualificationItem.objects.filter(campaign=campaign, phase=PRACTICE)
    if practice.exclude(answers__annotator=user).exists():
        raise SubmitError(gettext("Answer the practice items first."), code="order")
    record = _start_record(membership, now)
    if record.outcome in CLEARED_OUTCOMES:
        raise SubmitError(gettext("You have passed the qualification already."), code="order")
    if QualificationAnswer.objects.filter(
        item=item, annotator=user, attempt=record.attempt
    ).exists():
        raise SubmitError(gettext("You answered this item in this attempt already."), code="order")
    return record


def _end_attempt_if_complete(
    campaign: Campaign, record: QualificationRecord, user: User, now: datetime
) -> AttemptResult | None:
    items = list(QualificationItem.objects.filter(campaign=campaign, phase=QUALIFICATION))
    answers = QualificationAnswer.objects.filter(item__in=items, annotator=user)
    marks = list(answers.filter(attempt=record.attempt).values_list("marks", flat=True))
    if len(marks) < len(items):
        return None
    passed = rules.attempt_passes(rules.PassRule.from_json(campaign.qualification_rule), marks)
    right = sum(all(m.values()) for m in marks)
    attempt = record.attempt
    record.attempts = [
        *record.attempts,
        {
            "attempt": attempt,
            "right": right,
            "total": len(items),
            "passed": passed,
            "finished_at": now.isoformat(),
        },
    ]
    if passed:
        record.outcome, record.finished_at = Outcome.PASSED, now
    elif attempt < rules.ATTEMPTS:
        record.attempt = attempt + 1
    else:
        record.outcome, record.finished_at = Outcome.FAILED, now
        # Their reservations made before (if any) free their slots for others now.
        Assignment.objects.filter(
            campaign=campaign, annotator=user, status=Assignment.Status.RESERVED
        ).update(status=Assignment.Status.EXPIRED)
    record.save(update_fields=["outcome", "finished_at", "attempt", "attempts"])
    return AttemptResult(attempt, right, len(items), passed, record.outcome)


# --- feedback ---------------------------------------------------------------------------


# The differentiator's answers in words (``Annotation.Differentiator``'s labels), marked for the
# catalogue: feedback shows them in the reader's language.
DIFFERENTIATOR_WORDS = {
    "preference": gettext_noop("personal preference"),
    "quality": gettext_noop("general quality"),
    "both": gettext_noop("both"),
    "none": gettext_noop("no real difference"),
}


def seen_as(question: str, answer: str, chosen_position: str) -> str:
    """An answer in dataset orientation as the member saw it, in the active language."""
    if question == "rubric_fit":
        if answer == "tie":
            return gettext("Tie")
        other = "B" if chosen_position == "A" else "A"
        side = chosen_position if answer == "chosen" else other
        if answer in ("chosen", "rejected"):
            return gettext("Response %(side)s") % {"side": side}
        return gettext("no answer")
    word = DIFFERENTIATOR_WORDS.get(answer)
    return gettext(word).capitalize() if word else gettext("no answer")


def item_feedback(answer: QualificationAnswer) -> ItemFeedback:
    """What was expected of one answer and why, in the A/B order the member saw."""
    item = answer.item
    questions = [
        QuestionFeedback(
            question=question,
            label=gettext(rules.QUESTION_LABELS[question]),
            given=seen_as(question, str(answer.answers.get(question, "")), answer.chosen_position),
            expected=seen_as(question, expected, answer.chosen_position),
            correct=bool(answer.marks.get(question)),
            explanation=texts.explanation(
                item.campaign, item.pair.external_id, question, item.explanations.get(question, "")
            ),
        )
        for question, expected in item.expected_answers.items()
    ]
    return ItemFeedback(
        item_id=item.pk,
        external_id=item.pair.external_id,
        question_text=item.pair.question,
        phase=item.phase,
        attempt=answer.attempt,
        correct=answer.correct,
        questions=questions,
    )


def attempt_feedback(campaign: Campaign, user: User, attempt: int) -> list[ItemFeedback]:
    """Feedback on every item of one finished qualification attempt, in item order: whether
    each question was right and why, never which answer was expected (the second attempt asks
    the same items with the sides swapped, so the letters would answer it)."""
    answers = (
        QualificationAnswer.objects.filter(
            item__campaign=campaign, item__phase=QUALIFICATION, annotator=user, attempt=attempt
        )
        .select_related("item__pair", "item__campaign")
        .order_by("item__position", "item_id")
    )
    return [withheld(item_feedback(answer)) for answer in answers]


def withheld(feedback: ItemFeedback) -> ItemFeedback:
    """``feedback`` without the answers: right or wrong and the explanation only."""
    questions = [replace(question, given="", expected="") for question in feedback.questions]
    return replace(feedback, questions=questions, answers_shown=False)


def latest_practice_feedback(item: QualificationItem, user: User) -> ItemFeedback | None:
    answer = (
        QualificationAnswer.objects.filter(item=item, annotator=user)
        .select_related("item__pair", "item__campaign")
        .order_by("-attempt")
        .first()
    )
    return None if answer is None else item_feedback(answer)


def screen_out_url(membership: Membership) -> str:
    """Where a screened-out member goes: a study participant (one with a Prolific id) to the
    campaign's screen-out URL; anyone else, or with no URL set, to the app's page ("")."""
    if not membership.participant_id:
        return ""
    return membership.campaign.screen_out_url


def outcome_of(campaign: Campaign, user: User) -> str:
    """The member's qualification outcome; "not_started" before their first qualification
    item, "" when the campaign has none (and they have no record)."""
    record = QualificationRecord.objects.filter(
        membership__campaign=campaign, membership__user_id=user.pk
    ).first()
    if record is not None:
        return str(record.outcome)
    has_items = QualificationItem.objects.filter(campaign=campaign, phase=QUALIFICATION).exists()
    return "not_started" if has_items else ""
