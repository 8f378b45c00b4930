"""Prolific's documented API (https://docs.prolific.com/docs/api-docs/public/), used when the
deployment sets ``PROLIFIC_API_TOKEN``: the approval list's decisions sent as submission
transitions, what is still owed of the bonus list paid as one bulk bonus and recorded
(``BonusPayment``), and the study's submissions read back, so
that a participant Prolific marks returned or timed out frees their reservations at once; and
on a study link's first join, whether Prolific lists the participant in the study at all
(``join_limits.check_listed``).

Endpoints, under ``PROLIFIC_API_URL``, with ``Authorization: Token <token>``:
``GET studies/<study_id>/submissions/`` (``results``: ``id``, ``participant_id``, ``status``),
``POST submissions/<id>/transition/`` (``action`` APPROVE or REJECT, a rejection's ``message``,
at least 100 characters, and ``rejection_category``), ``POST submissions/bonus-payments/``
(``study_id``, ``csv_bonuses``; answers the payment's ``id``) and
``POST bulk-bonus-payments/<id>/pay/``.
"""

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Min, Sum
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from prb_annotate.campaigns import prolific
from prb_annotate.models import Assignment, BonusPayment, Campaign, Membership

AWAITING_REVIEW = "AWAITING REVIEW"
# The failures after which a call cannot have been carried out: no connection was made (refused,
# no such host), or Prolific refused it (a 4xx answer). Any other failure of a sent call (a
# timeout, a dropped connection, a 5xx answer, which a proxy in front may give after passing
# the call on, an answer cut off or unreadable) leaves it unknown (``ProlificError.maybe_done``).
NEVER_SENT = (ConnectionRefusedError, socket.gaierror)
SERVER_ERROR = 500
GONE = ("RETURNED", "TIMED-OUT")
TIMEOUT_S = 30
# A join waits for Prolific while the participant looks at a blank page: a shorter wait.
ADMISSION_TIMEOUT_S = 10
# Prolific asks a category with every rejection; a quality-control decision is "low effort"
# unless the study says otherwise (the reason itself goes in the message).
REJECTION_CATEGORY = "LOW_EFFORT"
# Prolific asks every rejection for a message of at least this many characters and a category;
# the message opens with a fixed explanation, longer than that on its own, then the reason.
REJECTION_MESSAGE_MIN_CHARS = 100
REJECTION_EXPLANATION = (
    "Your submission was rejected because the quality checks of this annotation study left "
    "your answers out of its results."
)


class ProlificError(RuntimeError):
    """Prolific refused a call or could not be reached; the message says which and why.
    ``maybe_done``: the call may have been carried out all the same (its answer was lost: a
    timeout, a dropped connection, a 5xx answer, an answer that cannot be read), as opposed to
    one that was refused (a 4xx answer) or never sent."""

    def __init__(self, message: str, *, maybe_done: bool = False) -> None:
        super().__init__(message)
        self.maybe_done = maybe_done


def configured() -> bool:
    return bool(settings.PROLIFIC_API_TOKEN)


def _call(
    method: str, path: str, body: dict[str, Any] | None = None, *, timeout: float = TIMEOUT_S
) -> Any:
    url = settings.PROLIFIC_API_URL.rstrip("/") + "/" + path
    if not url.startswith(("https://", "http://")):
        raise ProlificError(f"PROLIFIC_API_URL must be an http(s) address, not {url!r}")
    data = json.dumps(body, allow_nan=False).encode() if body is not None else None
    # The scheme is checked just above.
    request = urllib.request.Request(url, data=data, method=method)  # noqa: S310
    request.add_header("Authorization", f"Token {settings.PROLIFIC_API_TOKEN}")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return _answer(response.read())
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")[:300]
        raise ProlificError(
            f"Prolific answered {error.code} to {method} {path}: {detail}",
            maybe_done=error.code >= SERVER_ERROR,
        ) from error
    except (urllib.error.URLError, OSError) as error:
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        if isinstance(reason, NEVER_SENT):
            raise ProlificError(f"Prolific could not be reached ({reason})") from error
        raise ProlificError(
            f"Prolific's answer to {method} {path} was lost ({reason})", maybe_done=True
        ) from error
    except (http.client.HTTPException, ValueError) as error:  # cut off, garbled, not JSON
        raise ProlificError(
            f"Prolific's answer to {method} {path} could not be read ({error})", maybe_done=True
        ) from error


def _answer(body: bytes) -> Any:
    text = body.decode()
    return json.loads(text) if text else {}


def _study_id(campaign: Campaign) -> str:
    if not campaign.prolific_study_id:
        raise ProlificError("The campaign has no Prolific study id: set it on the dashboard.")
    return campaign.prolific_study_id


def _submission_rows(campaign: Campaign, *, timeout: float = TIMEOUT_S) -> Iterator[dict[str, Any]]:
    """The study's submissions, a page read when the previous one is used up."""
    path: str | None = f"studies/{_study_id(campaign)}/submissions/"
    while path:
        page = _call("GET", path, timeout=timeout)
        yield from page.get("results", [])
        following = (page.get("_links") or {}).get("next") or {}
        href = str(following.get("href") or "")
        path = href.split(settings.PROLIFIC_API_URL.rstrip("/") + "/", 1)[-1] if href else None


def submissions(campaign: Campaign) -> dict[str, dict[str, Any]]:
    """The study's submissions by participant id, every page of them."""
    return {str(row.get("participant_id", "")): row for row in _submission_rows(campaign)}


def takes_part(campaign: Campaign, participant_id: str) -> bool:
    """Whether Prolific lists ``participant_id`` among the study's submissions, neither
    returned nor timed out; pages are read until it is found. ProlificError when Prolific
    refuses or cannot be reached."""
    for row in _submission_rows(campaign, timeout=ADMISSION_TIMEOUT_S):
        if str(row.get("participant_id", "")) == participant_id:
            return str(row.get("status", "")) not in GONE
    return False


@dataclass(frozen=True)
class Sent:
    approved: int
    rejected: int
    skipped: int  # not awaiting review on Prolific (decided there already, returned, ...)
    unsent: int = 0  # decisions not sent because Prolific failed on an earlier one
    failure: str = ""  # why Prolific failed, "" when every decision was sent

    @property
    def statement(self) -> str:
        """What was sent, said on the page in the reader's language."""
        counts = {
            "approved": self.approved,
            "rejected": self.rejected,
            "skipped": self.skipped,
            "unsent": self.unsent,
        }
        if self.failure:
            return (
                gettext(
                    "Prolific failed part way. Sent before it failed: %(approved)d approved, "
                    "%(rejected)d rejected; %(skipped)d not awaiting review there, left as they "
                    "are; %(unsent)d not sent. Pressing again is safe: only submissions still "
                    "awaiting review are sent."
                )
                % counts
            )
        return (
            gettext(
                "Sent to Prolific: %(approved)d approved, %(rejected)d rejected; "
                "%(skipped)d not awaiting review there, left as they are."
            )
            % counts
        )


def rejection_message(reason: str) -> str:
    """A rejection's message as Prolific takes it (at least ``REJECTION_MESSAGE_MIN_CHARS``):
    the fixed explanation, then the list's reason, in English whatever the manager's language
    since the participant reads it."""
    return f"{REJECTION_EXPLANATION} Reason: {reason}." if reason else REJECTION_EXPLANATION


def _transition(submission: dict[str, Any], decision: str, reason: str) -> None:
    body: dict[str, Any] = {"action": decision.upper()}
    if decision == prolific.REJECT:
        body |= {"message": rejection_message(reason), "rejection_category": REJECTION_CATEGORY}
    _call("POST", f"submissions/{submission['id']}/transition/", body)


def send_decisions(campaign: Campaign) -> Sent:
    """The approval list's approve and reject decisions, as transitions of the submissions
    awaiting review (a removed participant's ``reject`` included); screened-out participants
    are Prolific's to handle by their code. If Prolific fails on one, the rest are not sent and
    the answer says what was sent before and why it stopped; sending again is safe, since a
    decided submission no longer awaits review. ProlificError when the submissions cannot be
    read (nothing sent then)."""
    on_prolific = submissions(campaign)
    decided = [r for r in prolific.approval_rows(campaign) if r.decision in ("approve", "reject")]
    counts = {"approve": 0, "reject": 0, "skipped": 0}
    for done, row in enumerate(decided):
        submission = on_prolific.get(row.participant_id)
        if submission is None or submission.get("status") != AWAITING_REVIEW:
            counts["skipped"] += 1
            continue
        try:
            _transition(submission, row.decision, row.reason)
        except ProlificError as error:
            unsent = len(decided) - done
            return Sent(counts["approve"], counts["reject"], counts["skipped"], unsent, str(error))
        counts[row.decision] += 1
    return Sent(counts["approve"], counts["reject"], counts["skipped"])


@dataclass(frozen=True)
class Paid:
    participants: int
    total: Decimal

    @property
    def statement(self) -> str:
        """What the press paid, said on the page in the reader's language."""
        if not self.participants:
            return gettext("Nothing owed: every bonus due under the rule is paid already.")
        return ngettext(
            "Bonuses paid on Prolific to %(count)d participant.",
            "Bonuses paid on Prolific to %(count)d participants.",
            self.participants,
        ) % {"count": self.participants}


def pay_bonuses(campaign: Campaign, by: Any = None) -> Paid:
    """What is still owed of the bonus list (the rule's amount due less what was paid before),
    paid as one bulk bonus and recorded, one ``BonusPayment`` per participant, with ``by``.

    The shares are claimed first, in a short transaction under the campaign row's lock: a
    second press (a double submit) waits for the claim and then finds nothing owed. Prolific
    is called after that transaction, so no lock is held while it answers (on SQLite the
    write lock would stop every annotator's submit meanwhile). When Prolific refuses or
    cannot be reached the claims are withdrawn: nothing stays recorded for that press, and
    ProlificError says why.

    The claims are ``unconfirmed`` until Prolific answers the pay call. When that answer is
    lost (``ProlificError.maybe_done``) they stay so, with the bulk bonus's id: Prolific may
    have paid, and its pay call pays again when sent again, so the shares count as paid until
    a manager says what Prolific shows (``settle``)."""
    rows, claims = _claim_owed(campaign, by)
    if not rows:
        return Paid(0, Decimal("0.00"))
    claimed = BonusPayment.objects.filter(pk__in=claims)
    try:
        payment_id = _set_up(campaign, rows)
    except ProlificError:
        claimed.delete()  # nothing is paid before the pay call
        raise
    if claimed.update(prolific_payment_id=payment_id) != len(claims):
        # A manager withdrew the claims meanwhile (a press that outlived IN_FLIGHT): they may
        # be claimed again by now, so this press must not pay them.
        raise ProlificError(
            f"The shares were withdrawn while Prolific set bulk bonus {payment_id} up: nothing "
            "was paid. Press again to pay what is owed."
        )
    try:
        _call("POST", f"bulk-bonus-payments/{payment_id}/pay/", {})
    except ProlificError as error:
        if not error.maybe_done:
            claimed.delete()
            raise
        message = unconfirmed_message(payment_id, len(rows), error)
        raise ProlificError(message, maybe_done=True) from error
    _record_paid(campaign, by, rows, claims, payment_id)
    return Paid(len(rows), sum((row.owed for row in rows), Decimal("0.00")))


def _record_paid(
    campaign: Campaign, by: Any, rows: list[prolific.BonusRow], claims: list[int], payment_id: str
) -> None:
    """The press's shares recorded as paid: Prolific said so. A share a manager withdrew while
    the pay call was out is recorded again, since Prolific paid it all the same."""
    claimed = BonusPayment.objects.filter(pk__in=claims)
    claimed.update(state=BonusPayment.State.PAID)
    kept = set(claimed.values_list("pk", flat=True))
    BonusPayment.objects.bulk_create(
        BonusPayment(
            campaign=campaign,
            participant_id=row.participant_id,
            amount=row.owed,
            prolific_payment_id=payment_id,
            paid_by=by if getattr(by, "pk", None) else None,
            state=BonusPayment.State.PAID,
        )
        for row, claim in zip(rows, claims, strict=True)
        if claim not in kept
    )


def unconfirmed_message(payment_id: str, shares: int, error: ProlificError) -> str:
    return ngettext(
        "%(error)s. Prolific may have paid bulk bonus %(payment)s all the same: its %(count)d "
        "share is recorded as sent, not confirmed, and will not be paid again. Check the bulk "
        "bonus on Prolific, then record it below as paid or withdraw it.",
        "%(error)s. Prolific may have paid bulk bonus %(payment)s all the same: its %(count)d "
        "shares are recorded as sent, not confirmed, and will not be paid again. Check the "
        "bulk bonus on Prolific, then record it below as paid or withdraw it.",
        shares,
    ) % {"error": str(error).rstrip("."), "payment": payment_id, "count": shares}


@dataclass(frozen=True)
class Unconfirmed:
    """The shares of one press whose pay call Prolific never answered: ``payment_id`` is the
    bulk bonus's id ("" when the press stopped before Prolific gave one); they cannot be
    settled before ``settleable_at``, while the press may still be waiting for Prolific."""

    payment_id: str
    shares: int
    total: Decimal
    settleable_at: datetime

    @property
    def in_flight(self) -> bool:
        return timezone.now() < self.settleable_at


# Far longer than a press waits for Prolific's two answers (each call's timeout, and the web
# server's limit on a request): shares claimed since may belong to a press still running.
IN_FLIGHT = timedelta(minutes=10)


def unconfirmed(campaign: Campaign) -> list[Unconfirmed]:
    """The campaign's unconfirmed shares by bulk bonus, oldest first; a group can be settled
    once its newest share is out of flight."""
    groups = (
        BonusPayment.objects.filter(campaign=campaign, state=BonusPayment.State.UNCONFIRMED)
        .values("prolific_payment_id")
        .annotate(
            shares=Count("pk"), total=Sum("amount"), first=Min("paid_at"), latest=Max("paid_at")
        )
        .order_by("first")
    )
    return [
        Unconfirmed(
            group["prolific_payment_id"],
            group["shares"],
            group["total"].quantize(prolific.CENT),
            group["latest"] + IN_FLIGHT,
        )
        for group in groups
    ]


def settle(campaign: Campaign, payment_id: str, *, paid: bool) -> int:
    """A manager's word on an unconfirmed bulk bonus after checking it on Prolific: ``paid``
    records its shares as paid; otherwise they are withdrawn and owed again. Shares still in
    flight are left alone. The number of shares settled (0: none unconfirmed by that id)."""
    settled_before = timezone.now() - IN_FLIGHT
    shares = BonusPayment.objects.filter(
        campaign=campaign,
        state=BonusPayment.State.UNCONFIRMED,
        prolific_payment_id=payment_id,
        paid_at__lt=settled_before,
    )
    if paid:
        return shares.update(state=BonusPayment.State.PAID)
    count, _ = shares.delete()
    return count


def _claim_owed(campaign: Campaign, by: Any) -> tuple[list[prolific.BonusRow], list[int]]:
    """The rows still owed and the ids of the payment rows that claim them now."""
    with transaction.atomic():
        Campaign.objects.select_for_update(no_key=True).filter(pk=campaign.pk).first()
        rows = prolific.owed_bonus_rows(campaign)
        claims = BonusPayment.objects.bulk_create(
            BonusPayment(
                campaign=campaign,
                participant_id=row.participant_id,
                amount=row.owed,
                paid_by=by if getattr(by, "pk", None) else None,
                state=BonusPayment.State.UNCONFIRMED,
            )
            for row in rows
        )
    return rows, [claim.pk for claim in claims]


def _set_up(campaign: Campaign, rows: list[prolific.BonusRow]) -> str:
    """Prolific's first call, setting the bulk bonus up (it pays nothing yet); its id."""
    text = "\n".join(f"{row.participant_id},{row.owed:.2f}" for row in rows)
    payment = _call(
        "POST",
        "submissions/bonus-payments/",
        {"study_id": _study_id(campaign), "csv_bonuses": text},
    )
    payment_id = str(payment.get("id") or "")
    if not payment_id:
        raise ProlificError("Prolific set up the bonus payment but answered no id for it.")
    return payment_id


def read_back(campaign: Campaign) -> dict[str, str]:
    """Each member's status on Prolific, by participant id; the reservations of those Prolific
    marks returned or timed out are freed now rather than when they time out here."""
    statuses = {pid: str(row.get("status", "")) for pid, row in submissions(campaign).items()}
    gone = [pid for pid, status in statuses.items() if status in GONE]
    users = Membership.objects.filter(campaign=campaign, participant_id__in=gone).values("user_id")
    Assignment.objects.filter(
        campaign=campaign, annotator_id__in=users, status=Assignment.Status.RESERVED
    ).update(status=Assignment.Status.EXPIRED)
    return statuses
