"""Prolific's lists for a campaign: whom to approve, reject or count as screened out, and the
bonuses to pay, as CSV files in the shapes Prolific takes.

Only Prolific members are listed: annotators whose membership carries a Prolific participant
id (they came through the study link, or a manager gave it), and only once they answered
something (a practice or qualification item, or a submitted item). Skipped items do not count:
a participant who skipped every item they were offered and answered nothing did none of the
work the study pays for, so the list does not approve them; and the pages let anyone skip, so
it is not the "skipped crucial questions" Prolific accepts as a ground for rejection either.
They are left off, for the researcher to settle on Prolific (whose advice for a participant who
did not complete a study is to ask them to return it).

A study participant a manager removed (``members.remove_member``) is a member no more, but
their study account (``Participant``, with the Prolific id), their answers and any exclusion
stay: while those answers are out of the audit (the removal's "leave their answers out", an
exclusion made before it, gold accuracy, position bias) they are listed with ``reject``, as a
member would be. A removed participant whose answers count, or who submitted none, is not
listed. A Prolific id a manager gave to another kind of account lived on its membership alone,
and goes with it.

- **Approvals** (``participant_id,decision,reason``, with that header): ``screened_out`` for a
  member who failed the qualification (and was not let in), ``reject`` for one whose answers
  are out of the audit (a manager's exclusion, gold accuracy below the minimum, position
  bias), ``approve`` otherwise; the reason comes from quality control (for an approval, the
  outlier marks if any, else empty), in English whatever the reader's language, since it goes
  to Prolific as it is.
- **Bonuses** (``participant_id,amount``, no header, one line per participant, as Prolific's
  bulk bonus takes them; amounts in the study's currency with two decimals): the campaign's
  ``BonusRule`` (an amount per item beyond a number of items, and an amount for gold accuracy
  at or above a threshold), for approved members only, less what was already paid them
  through Prolific's API (``BonusPayment``); members with nothing owed are left out.
"""

import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any
from urllib.parse import parse_qs, urlsplit

from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef, Sum
from django.utils.translation import gettext, ngettext

from prb_annotate.audit.exclusions import current_exclusions, left_out_annotators
from prb_annotate.audit.quality import LEFT_OUT_REASONS, LOW_GOLD_ACCURACY, MANAGER_EXCLUDED
from prb_annotate.campaigns.progress import AnnotatorProgress, campaign_progress, dashboard_figures
from prb_annotate.campaigns.qualification.setup import MemberQualification, member_qualifications
from prb_annotate.formats import spreadsheets
from prb_annotate.formats.numbers import percent
from prb_annotate.models import (
    BonusPayment,
    Campaign,
    Membership,
    Participant,
    QualificationAnswer,
)
from prb_annotate.models.access import SIGNUP_PARTICIPANT_PREFIX

APPROVAL_HEADER = ("participant_id", "decision", "reason")
APPROVE, REJECT, SCREENED_OUT = "approve", "reject", "screened_out"
CENT = Decimal("0.01")
MAX_AMOUNT = Decimal("1000.00")


# --- the bonus rule ---------------------------------------------------------------------


def completion_code(url: str) -> str:
    """The code in a Prolific completion or screen-out URL (its ``cc`` parameter), shown beside
    the link so that a participant whose browser does not follow it can type it in Prolific;
    "" for a URL without one."""
    values = parse_qs(urlsplit(url).query).get("cc", [])
    return values[0].strip() if values else ""


@dataclass(frozen=True)
class BonusRule:
    per_item: Decimal | None = None  # paid for each submitted item beyond ``items_beyond``
    items_beyond: int | None = None  # None: the campaign's quota, or 0 without one
    gold_amount: Decimal | None = None  # paid once for gold accuracy >= gold_min_accuracy
    gold_min_accuracy: float | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "per_item": None if self.per_item is None else str(self.per_item),
            "items_beyond": self.items_beyond,
            "gold_amount": None if self.gold_amount is None else str(self.gold_amount),
            "gold_min_accuracy": self.gold_min_accuracy,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> "BonusRule":
        data = data or {}
        return cls(
            per_item=_decimal_or_none(data.get("per_item")),
            items_beyond=data.get("items_beyond"),
            gold_amount=_decimal_or_none(data.get("gold_amount")),
            gold_min_accuracy=data.get("gold_min_accuracy"),
        )

    @property
    def is_empty(self) -> bool:
        return self.per_item is None and self.gold_amount is None

    def beyond(self, campaign: Campaign) -> int:
        if self.items_beyond is not None:
            return self.items_beyond
        return campaign.quota_per_annotator or 0

    def describe(self, campaign: Campaign) -> str:
        """The rule in words, in the reader's language (the page, its messages, the API's
        ``text``), e.g. "0.10 per item beyond 20; 0.50 for gold accuracy of 80.0% or more"."""
        parts = []
        if self.per_item is not None:
            parts.append(
                gettext("%(amount)s per item beyond %(items)d")
                % {"amount": self.per_item, "items": self.beyond(campaign)}
            )
        if self.gold_amount is not None and self.gold_min_accuracy is not None:
            parts.append(
                gettext("%(amount)s for gold accuracy of %(accuracy)s or more")
                % {"amount": self.gold_amount, "accuracy": percent(self.gold_min_accuracy)}
            )
        return "; ".join(parts) or gettext("no bonus")


def _decimal_or_none(value: Any) -> Decimal | None:
    return None if value in (None, "") else Decimal(str(value))


def checked_bonus_rule(data: Mapping[str, Any]) -> BonusRule:
    """A bonus rule from a form or a request; ValidationError (field -> message) if not."""
    errors: dict[str, str] = {}
    per_item = _amount(data.get("per_item"), "per_item", errors)
    gold_amount = _amount(data.get("gold_amount"), "gold_amount", errors)
    beyond = data.get("items_beyond")
    if beyond in ("", None):
        beyond = None
    elif isinstance(beyond, bool) or not isinstance(beyond, int) or not 0 <= beyond <= 10**6:
        errors["items_beyond"] = gettext("A whole number of items from 0 up.")
    accuracy = data.get("gold_min_accuracy")
    if accuracy in ("", None):
        accuracy = None
    elif (
        isinstance(accuracy, bool)
        or not isinstance(accuracy, int | float)
        or not 0.0 <= float(accuracy) <= 1.0
    ):
        errors["gold_min_accuracy"] = gettext("A share from 0 to 1.")
    if (gold_amount is None) != (accuracy is None) and "gold_min_accuracy" not in errors:
        errors["gold_min_accuracy"] = gettext(
            "Give the gold bonus and its accuracy threshold together."
        )
    if errors:
        raise ValidationError(errors)
    return BonusRule(
        per_item=per_item,
        items_beyond=beyond,
        gold_amount=gold_amount,
        gold_min_accuracy=None if accuracy is None else float(accuracy),
    )


def _amount(value: Any, field: str, errors: dict[str, str]) -> Decimal | None:
    if value in (None, ""):
        return None
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        amount = Decimal("NaN")
    if isinstance(value, bool) or not amount.is_finite() or not 0 < amount <= MAX_AMOUNT:
        errors[field] = gettext("An amount above 0 and at most %(most)s, e.g. 0.25.") % {
            "most": MAX_AMOUNT
        }
        return None
    if amount != amount.quantize(CENT):
        errors[field] = gettext("At most two decimals (Prolific pays whole pennies or cents).")
        return None
    return amount.quantize(CENT)


def set_bonus_rule(campaign: Campaign, rule: BonusRule) -> Campaign:
    Campaign.objects.filter(pk=campaign.pk).update(bonus_rule=rule.as_json())
    campaign.bonus_rule = rule.as_json()
    return campaign


# --- the lists --------------------------------------------------------------------------


@dataclass(frozen=True)
class ApprovalRow:
    participant_id: str
    username: str
    decision: str
    reason: str


@dataclass(frozen=True)
class BonusRow:
    participant_id: str
    username: str
    amount: Decimal  # due under the rule now
    why: str  # shown on the page only, in the reader's language
    paid: Decimal = Decimal("0.00")  # paid already through Prolific's API

    @property
    def owed(self) -> Decimal:
        """What is still to pay: the amount due less what was paid (never below nothing; a
        lowered rule takes nothing back)."""
        return max(self.amount - self.paid, Decimal("0.00"))


@dataclass(frozen=True)
class _Member:
    user_id: int
    username: str
    participant_id: str
    progress: AnnotatorProgress | None
    qualification: MemberQualification | None  # None for a participant no longer a member


def _progress(campaign: Campaign) -> dict[int, AnnotatorProgress]:
    """user id -> progress, for members and for whoever else has items in the campaign (a
    removed participant's assignments stay)."""
    return {row.user_id: row for row in campaign_progress(campaign, median_times=False).annotators}


def _members(campaign: Campaign, progress: Mapping[int, AnnotatorProgress]) -> list[_Member]:
    """Prolific members who answered something (see the module: skips alone do not count),
    by participant id."""
    qualifications = member_qualifications(campaign)
    answered = set(
        QualificationAnswer.objects.filter(item__campaign=campaign).values_list(
            "annotator_id", flat=True
        )
    )
    memberships = (
        Membership.objects.filter(campaign=campaign, role=Membership.Role.ANNOTATOR)
        .exclude(participant_id="")
        .select_related("user")
        .order_by("participant_id", "user__username")
    )
    members = []
    for membership in memberships:
        row = progress.get(membership.user_id)
        if membership.user_id not in answered and not (row and row.submitted):
            continue
        members.append(
            _Member(
                membership.user_id,
                membership.user.get_username(),
                membership.participant_id,
                row,
                qualifications.get(membership.user_id),
            )
        )
    return members


def _removed_participants(
    campaign: Campaign, progress: Mapping[int, AnnotatorProgress], left_out: Mapping[str, str]
) -> list[_Member]:
    """Study participants no longer members whose submitted answers are out of the audit, by
    participant id: what survives their removal is their study account (``Participant``, with
    the Prolific id), their answers and the exclusion."""
    member = Membership.objects.filter(campaign=campaign, user_id=OuterRef("user_id"))
    participants = (
        Participant.objects.filter(campaign=campaign)
        .exclude(participant_id__startswith=SIGNUP_PARTICIPANT_PREFIX)
        .exclude(Exists(member))
        .select_related("user")
        .order_by("participant_id")
    )
    removed = []
    for participant in participants:
        row = progress.get(participant.user_id)
        username = participant.user.get_username()
        if row is None or not row.submitted or username not in left_out:
            continue
        removed.append(
            _Member(participant.user_id, username, participant.participant_id, row, None)
        )
    return removed


def approval_rows(campaign: Campaign) -> list[ApprovalRow]:
    left_out = left_out_annotators(campaign)
    reasons = {e.annotator_id: e.reason for e in current_exclusions(campaign)}
    marks = {
        row["annotator"]: row.get("outliers") or []
        for row in dashboard_figures(campaign)["annotators"]
    }
    progress = _progress(campaign)
    listed = _members(campaign, progress) + _removed_participants(campaign, progress, left_out)
    rows = []
    for member in sorted(listed, key=lambda m: (m.participant_id, m.username)):
        decision, reason = _decision(campaign, member, left_out, reasons, marks)
        rows.append(ApprovalRow(member.participant_id, member.username, decision, reason))
    return rows


def _decision(
    campaign: Campaign,
    member: _Member,
    left_out: Mapping[str, str],
    exclusion_reasons: Mapping[int, str],
    marks: Mapping[str, list[str]],
) -> tuple[str, str]:
    qualification = member.qualification
    if qualification is not None and qualification.screened_out:
        return SCREENED_OUT, _screened_out_reason(qualification)
    code = left_out.get(member.username)
    if code is None:
        outliers = marks.get(member.username) or []
        return APPROVE, f"marked: {', '.join(outliers)}" if outliers else ""
    reason = str(LEFT_OUT_REASONS[code])
    if code == MANAGER_EXCLUDED and member.user_id in exclusion_reasons:
        reason = f"{reason}: {exclusion_reasons[member.user_id]}"
    elif (
        code == LOW_GOLD_ACCURACY and member.progress and member.progress.gold_accuracy is not None
    ):
        reason = (
            f"gold accuracy {percent(member.progress.gold_accuracy)}, below the campaign's "
            f"minimum of {percent(campaign.min_gold_accuracy)}"
        )
    return REJECT, reason


def _screened_out_reason(qualification: MemberQualification) -> str:
    tries = [f"{a['right']} of {a['total']}" for a in qualification.attempts]
    return (
        f"failed the qualification ({', then '.join(tries)} right)"
        if tries
        else "failed the qualification"
    )


def paid_bonuses(campaign: Campaign) -> dict[str, Decimal]:
    """Participant id -> the bonuses paid them through Prolific's API, in all."""
    totals = (
        BonusPayment.objects.filter(campaign=campaign)
        .values("participant_id")
        .annotate(total=Sum("amount"))
    )
    return {row["participant_id"]: row["total"].quantize(CENT) for row in totals}


def bonus_rows(campaign: Campaign) -> list[BonusRow]:
    """Each approved member's bonus due under the rule and what was paid them already; a
    participant paid before and due nothing now (the rule lowered, the decision changed) is
    listed too, so that the page shows every payment."""
    paid = paid_bonuses(campaign)
    rule = BonusRule.from_json(campaign.bonus_rule)
    approved = (
        set()
        if rule.is_empty
        else {row.username for row in approval_rows(campaign) if row.decision == APPROVE}
    )
    rows = []
    for member in _members(campaign, _progress(campaign)):
        amount, why = Decimal("0.00"), ""
        if member.username in approved and member.progress is not None:
            amount, why = _bonus(campaign, rule, member.progress)
        already = paid.get(member.participant_id, Decimal("0.00"))
        if amount > 0 or already > 0:
            rows.append(BonusRow(member.participant_id, member.username, amount, why, already))
    return rows


def owed_bonus_rows(campaign: Campaign) -> list[BonusRow]:
    """The bonus list still to pay: the rows with something owed."""
    return [row for row in bonus_rows(campaign) if row.owed > 0]


def _bonus(campaign: Campaign, rule: BonusRule, progress: AnnotatorProgress) -> tuple[Decimal, str]:
    amount = Decimal("0.00")
    why = []
    extra = max(progress.submitted - rule.beyond(campaign), 0)
    if rule.per_item is not None and extra:
        amount += rule.per_item * extra
        why.append(
            ngettext("%(count)d item beyond %(beyond)d", "%(count)d items beyond %(beyond)d", extra)
            % {"count": extra, "beyond": rule.beyond(campaign)}
        )
    accuracy = progress.gold_accuracy
    if (
        rule.gold_amount is not None
        and rule.gold_min_accuracy is not None
        and accuracy is not None
        and accuracy >= rule.gold_min_accuracy
    ):
        amount += rule.gold_amount
        why.append(gettext("gold accuracy %(accuracy)s") % {"accuracy": percent(accuracy)})
    return amount.quantize(CENT, rounding=ROUND_HALF_UP), "; ".join(why)


# --- CSV --------------------------------------------------------------------------------


def csv_text(rows: Iterable[Sequence[str]], header: Sequence[str] | None = None) -> str:
    """The one writer of Prolific's CSV files: "\\n" line ends, cells quoted only where CSV
    needs it (Prolific parses ``id,amount`` lines), formulas neutralised as everywhere."""
    buffer = io.StringIO()
    writer = spreadsheets.writer(buffer, quote_all=False, lineterminator="\n")
    if header is not None:
        writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def approvals_csv(campaign: Campaign) -> str:
    rows = approval_rows(campaign)
    return csv_text(((r.participant_id, r.decision, r.reason) for r in rows), APPROVAL_HEADER)


def bonuses_csv(campaign: Campaign) -> str:
    return csv_text((r.participant_id, f"{r.owed:.2f}") for r in owed_bonus_rows(campaign))


def csv_filename(campaign: Campaign, kind: str) -> str:
    return f"campaign-{campaign.pk}-prolific-{kind}.csv"
