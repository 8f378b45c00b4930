"""A manager's choices for practice and qualification, and what came of them per member.

Choosing a pair sets it apart from the campaign's regular sample, like a gold pair: at creation
it is left out of the sample; later, a regular item that nobody was handed yet leaves the queue
(its ``CampaignItem`` row is removed) and one that was handed out cannot be chosen. What decides
outcomes is fixed once members answered: the qualification items, their expected answers and
the pass rule once anyone answered a qualification item; a practice item's phase and expected
answers once anyone answered it. Explanations and the screen-out URL can change at any time.
Every change locks the campaign row, so two managers' changes apply one after the other.
"""

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.db.models import Max, QuerySet
from django.utils import timezone

from prb_annotate.campaigns.qualification import rules
from prb_annotate.models import (
    Adjudication,
    Assignment,
    Campaign,
    CampaignItem,
    Membership,
    Pair,
    QualificationAnswer,
    QualificationItem,
    QualificationRecord,
)

PRACTICE = QualificationItem.Phase.PRACTICE
QUALIFICATION = QualificationItem.Phase.QUALIFICATION
Outcome = QualificationRecord.Outcome
# What a pair chosen by its id alone expects: the dataset's claim, as for gold pairs.
DEFAULT_EXPECTED = {"rubric_fit": "chosen", "differentiator": "preference"}
NOT_STARTED = "not_started"
MAX_ADMIT_REASON = 2000
ItemChoices = Collection[str] | Mapping[str, Mapping[str, Any]]


class QualificationSetupError(ValueError):
    """Practice or qualification pairs given at creation that cannot be used."""


@dataclass(frozen=True)
class ItemSpec:
    external_id: str
    phase: str
    expected: dict[str, str]
    explanations: dict[str, str]


# --- at creation ------------------------------------------------------------------------


def item_specs(practice: ItemChoices, qualification: ItemChoices) -> list[ItemSpec]:
    """The pairs given to ``create_campaign``: ids (expecting the dataset's claim), or
    ``{id: {"expected_answers": {...}, "explanations": {...}}}``."""
    specs = _specs(PRACTICE, practice) + _specs(QUALIFICATION, qualification)
    seen: set[str] = set()
    for spec in specs:
        if spec.external_id in seen:
            raise QualificationSetupError(
                f"pair {spec.external_id} is chosen for practice and for the qualification"
            )
        seen.add(spec.external_id)
    return specs


def _specs(phase: str, choices: ItemChoices) -> list[ItemSpec]:
    if isinstance(choices, str):
        raise TypeError(f"{phase} pairs must be a collection of ids, not one string")
    if not isinstance(choices, Mapping):
        choices = {str(external_id): {} for external_id in choices}
    specs = []
    for external_id, choice in choices.items():
        try:
            expected = rules.checked_expected(choice.get("expected_answers") or DEFAULT_EXPECTED)
            explanations = rules.checked_explanations(choice.get("explanations") or {})
        except rules.RuleError as error:
            raise QualificationSetupError(f"{phase} pair {external_id}: {error}") from error
        specs.append(ItemSpec(str(external_id), phase, expected, explanations))
    return specs


def create_items(
    campaign: Campaign, specs: Sequence[ItemSpec], pair_ids: Mapping[str, int]
) -> None:
    """Store the items of a new campaign (in its creation transaction), checking the rule."""
    expected = [spec.expected for spec in specs if spec.phase == QUALIFICATION]
    stored = campaign.qualification_rule
    try:
        if not isinstance(stored, Mapping):
            raise rules.RuleError(
                "qualification_rule", "An object with min_correct and required_questions."
            )
        rule = rules.checked_rule(stored.get("min_correct"), stored.get("required_questions") or ())
    except (rules.RuleError, TypeError) as error:
        raise QualificationSetupError(f"qualification rule: {error}") from error
    errors = rules.rule_errors(rule, expected)
    if errors:
        raise QualificationSetupError(" ".join(errors.values()))
    if stored and rule.as_json() != stored:
        Campaign.objects.filter(pk=campaign.pk).update(qualification_rule=rule.as_json())
        campaign.qualification_rule = rule.as_json()
    positions: dict[str, int] = {PRACTICE: 0, QUALIFICATION: 0}
    rows = []
    for spec in specs:
        rows.append(
            QualificationItem(
                campaign=campaign,
                pair_id=pair_ids[spec.external_id],
                phase=spec.phase,
                position=positions[spec.phase],
                expected_answers=spec.expected,
                explanations=spec.explanations,
            )
        )
        positions[spec.phase] += 1
    QualificationItem.objects.bulk_create(rows)


# --- the manager's page -----------------------------------------------------------------


def qualification_answered(campaign: Campaign) -> bool:
    return QualificationAnswer.objects.filter(
        item__campaign=campaign, item__phase=QUALIFICATION
    ).exists()


def choose_item(
    campaign: Campaign,
    pair: Pair,
    phase: str,
    expected: Mapping[str, Any],
    explanations: Mapping[str, Any],
) -> QualificationItem:
    """Make ``pair`` a practice or qualification item, or change the one it is.

    An empty ``phase`` keeps a chosen pair's phase: choosing it again to add an explanation
    never moves it (nor changes the pass rule). ValidationError (field -> message) when the
    pair cannot be chosen, a new pair has no phase, or the change would alter what members'
    answers were judged by.
    """
    with transaction.atomic():
        campaign = _locked(campaign)
        if pair.dataset_id != campaign.dataset_id:
            raise ValidationError({"pair": "This pair is not in the campaign's dataset."})
        existing = QualificationItem.objects.filter(campaign=campaign, pair=pair).first()
        if not phase:
            if existing is None:
                raise ValidationError(
                    {"phase": "Choose practice or qualification for a pair not chosen yet."}
                )
            phase = existing.phase
        checked_expected, checked_explanations = _checked_choice(phase, expected, explanations)
        if existing is None:
            _set_apart(campaign, pair)
            _refuse_if_fixed(campaign, phase, "Add")
            position = _next_position(campaign, phase)
            item = QualificationItem(campaign=campaign, pair=pair, phase=phase, position=position)
        else:
            item = existing
            decides = (item.phase, item.expected_answers) != (phase, checked_expected)
            if decides and _answered(item):
                raise ValidationError(
                    {
                        "expected_answers": "Members answered this item: only its explanations "
                        "can change."
                    }
                )
            if decides:
                _refuse_if_fixed(campaign, item.phase, "Change")
                _refuse_if_fixed(campaign, phase, "Change")
            if phase != item.phase:
                item.position = _next_position(campaign, phase)
        item.phase, item.expected_answers, item.explanations = (
            phase,
            checked_expected,
            checked_explanations,
        )
        _check_rule_after(campaign, item)
        item.save()
    return item


def _checked_choice(
    phase: str, expected: Mapping[str, Any], explanations: Mapping[str, Any]
) -> tuple[dict[str, str], dict[str, str]]:
    if phase not in QualificationItem.Phase.values:
        raise ValidationError({"phase": "Either practice or qualification."})
    try:
        return rules.checked_expected(expected), rules.checked_explanations(explanations)
    except rules.RuleError as error:
        raise ValidationError({error.field: error.message}) from error


def remove_item(campaign: Campaign, pair: Pair) -> None:
    """Stop using ``pair`` for practice or qualification. It does not go back to the queue."""
    with transaction.atomic():
        campaign = _locked(campaign)
        item = QualificationItem.objects.filter(campaign=campaign, pair=pair).first()
        if item is None:
            raise ValidationError({"pair": "This pair is not a practice or qualification item."})
        if _answered(item):
            raise ValidationError({"pair": "Members answered this item: it stays."})
        _refuse_if_fixed(campaign, item.phase, "Remove")
        remaining = QualificationItem.objects.filter(campaign=campaign, phase=QUALIFICATION)
        if item.phase == QUALIFICATION:
            _check_rule(campaign, [i.expected_answers for i in remaining.exclude(pk=item.pk)])
        item.delete()


def set_rule(
    campaign: Campaign, *, min_correct: int | None, required_questions: Sequence[str]
) -> Campaign:
    """The pass rule; fixed once a member answered a qualification item."""
    try:
        rule = rules.checked_rule(min_correct, required_questions)
    except rules.RuleError as error:
        raise ValidationError({error.field: error.message}) from error
    with transaction.atomic():
        locked = _locked(campaign)
        if rule.as_json() == rules.PassRule.from_json(locked.qualification_rule).as_json():
            return locked
        if qualification_answered(locked):
            raise ValidationError(
                {"min_correct": "Members answered the qualification: its rule stays."}
            )
        items = QualificationItem.objects.filter(campaign=locked, phase=QUALIFICATION)
        _check_rule(locked, [item.expected_answers for item in items], rule)
        locked.qualification_rule = rule.as_json()
        locked.save(update_fields=["qualification_rule"])
    campaign.qualification_rule = locked.qualification_rule
    return campaign


def set_screen_out_url(campaign: Campaign, url: str) -> Campaign:
    url = url.strip()
    if url:
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError as error:
            raise ValidationError({"screen_out_url": "Enter a valid URL."}) from error
        if len(url) > 1000:
            raise ValidationError({"screen_out_url": "At most 1000 characters."})
    Campaign.objects.filter(pk=campaign.pk).update(screen_out_url=url)
    campaign.screen_out_url = url
    return campaign


def admit(campaign: Campaign, annotator: User, reason: str, *, by: User) -> QualificationRecord:
    """Let a member who failed the qualification in; who, why and when are kept."""
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": "Say why this annotator is let in."})
    if len(reason) > MAX_ADMIT_REASON or "\x00" in reason:
        raise ValidationError({"reason": f"Plain text of at most {MAX_ADMIT_REASON} characters."})
    with transaction.atomic():
        # The member's row first, as every change of an outcome (see flow.py).
        membership = (
            Membership.objects.select_for_update()
            .filter(campaign=campaign, user=annotator, role=Membership.Role.ANNOTATOR)
            .first()
        )
        record = None
        if membership is not None:
            record = QualificationRecord.objects.filter(membership=membership).first()
        if record is None or record.outcome != Outcome.FAILED:
            raise ValidationError({"annotator": "Only an annotator who failed can be let in."})
        record.outcome = Outcome.ADMITTED
        record.admitted_by, record.admit_reason = by, reason
        record.admitted_at = timezone.now()
        record.save(update_fields=["outcome", "admitted_by", "admit_reason", "admitted_at"])
    return record


def _locked(campaign: Campaign) -> Campaign:
    return Campaign.objects.select_for_update().get(pk=campaign.pk)


def _answered(item: QualificationItem) -> bool:
    return QualificationAnswer.objects.filter(item=item).exists()


def _refuse_if_fixed(campaign: Campaign, phase: str, action: str) -> None:
    if phase == QUALIFICATION and qualification_answered(campaign):
        raise ValidationError(
            {"phase": f"{action}: members answered the qualification, its items stay as they are."}
        )


def _set_apart(campaign: Campaign, pair: Pair) -> None:
    """Take the pair out of the regular queue, or refuse (ValidationError)."""
    item = CampaignItem.objects.filter(campaign=campaign, pair=pair).first()
    if item is None:
        return
    if item.kind == CampaignItem.Kind.GOLD:
        raise ValidationError({"pair": "This pair is a gold item of the campaign."})
    if campaign.sample_plan is not None:
        raise ValidationError(
            {"pair": "This pair is in the campaign's planned sample; choose one outside it."}
        )
    handed_out = Assignment.objects.filter(item=item).exists()
    if handed_out or Adjudication.objects.filter(item=item).exists():
        raise ValidationError(
            {"pair": "Annotators were handed this pair already: choose one nobody has seen."}
        )
    item.delete()


def _next_position(campaign: Campaign, phase: str) -> int:
    last = QualificationItem.objects.filter(campaign=campaign, phase=phase).aggregate(
        n=Max("position")
    )["n"]
    return 0 if last is None else int(last) + 1


def _check_rule_after(campaign: Campaign, item: QualificationItem) -> None:
    others = QualificationItem.objects.filter(campaign=campaign, phase=QUALIFICATION)
    if item.pk is not None:
        others = others.exclude(pk=item.pk)
    expected = [other.expected_answers for other in others]
    if item.phase == QUALIFICATION:
        expected.append(item.expected_answers)
    _check_rule(campaign, expected)


def _check_rule(
    campaign: Campaign, expected: list[dict[str, str]], rule: rules.PassRule | None = None
) -> None:
    rule = rule or rules.PassRule.from_json(campaign.qualification_rule)
    errors = rules.rule_errors(rule, expected)
    if errors:
        raise ValidationError(errors)


# --- what came of it ----------------------------------------------------------------------


@dataclass(frozen=True)
class MemberQualification:
    """One annotator's practice and qualification, as the dashboard and the API show it."""

    user_id: int
    username: str
    participant_id: str
    outcome: str  # not_started, in_progress, passed, failed, admitted; "" without qualification
    practice_done: bool
    attempts: list[dict[str, Any]]
    started_at: datetime | None
    finished_at: datetime | None
    admitted_by: str
    admit_reason: str
    admitted_at: datetime | None

    @property
    def label(self) -> str:
        if self.outcome == NOT_STARTED:
            return "not started"
        return str(Outcome(self.outcome).label) if self.outcome else ""

    @property
    def screened_out(self) -> bool:
        return self.outcome == Outcome.FAILED


@dataclass(frozen=True)
class OutcomeCounts:
    passed: int = 0
    failed: int = 0
    in_progress: int = 0
    admitted: int = 0
    not_started: int = 0


def items_of(campaign: Campaign, phase: str) -> QuerySet[QualificationItem]:
    return (
        QualificationItem.objects.filter(campaign=campaign, phase=phase)
        .select_related("pair")
        .order_by("position", "id")
    )


def member_qualifications(campaign: Campaign) -> dict[int, MemberQualification]:
    """user id -> their practice and qualification, for every annotator of the campaign."""
    has_qualification = items_of(campaign, QUALIFICATION).exists()
    practice_ids = list(items_of(campaign, PRACTICE).values_list("pk", flat=True))
    practised: dict[int, set[int]] = {}
    for user_id, item_id in QualificationAnswer.objects.filter(
        item_id__in=practice_ids
    ).values_list("annotator_id", "item_id"):
        practised.setdefault(user_id, set()).add(item_id)
    members = (
        Membership.objects.filter(campaign=campaign, role=Membership.Role.ANNOTATOR)
        .select_related("user", "qualification__admitted_by")
        .order_by("user__username")
    )
    return {m.user_id: _member_row(m, has_qualification, practised, practice_ids) for m in members}


def _member_row(
    membership: Membership,
    has_qualification: bool,
    practised: dict[int, set[int]],
    practice_ids: list[int],
) -> MemberQualification:
    record = getattr(membership, "qualification", None)
    outcome = ""
    if has_qualification or record is not None:
        outcome = NOT_STARTED if record is None else record.outcome
    return MemberQualification(
        user_id=membership.user_id,
        username=membership.user.get_username(),
        participant_id=membership.participant_id,
        outcome=outcome,
        practice_done=set(practice_ids) <= practised.get(membership.user_id, set()),
        attempts=list(record.attempts) if record else [],
        started_at=record.started_at if record else None,
        finished_at=record.finished_at if record else None,
        admitted_by=record.admitted_by.get_username() if record and record.admitted_by else "",
        admit_reason=record.admit_reason if record else "",
        admitted_at=record.admitted_at if record else None,
    )


def outcome_counts(rows: Mapping[int, MemberQualification]) -> OutcomeCounts:
    counts = dict.fromkeys(OutcomeCounts.__dataclass_fields__, 0)
    for row in rows.values():
        if row.outcome:
            counts[row.outcome] += 1
    return OutcomeCounts(**counts)
