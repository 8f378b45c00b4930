"""Prolific's documented API (https://docs.prolific.com/docs/api-docs/public/), used when the
deployment sets ``PROLIFIC_API_TOKEN``: the approval list's decisions sent as submission
transitions, the bonus list paid as one bulk bonus, and the study's submissions read back, so
that a participant Prolific marks returned or timed out frees their reservations at once; and
on a study link's first join, whether Prolific lists the participant in the study at all
(``join_limits.check_listed``).

Endpoints, under ``PROLIFIC_API_URL``, with ``Authorization: Token <token>``:
``GET studies/<study_id>/submissions/`` (``results``: ``id``, ``participant_id``, ``status``),
``POST submissions/<id>/transition/`` (``action`` APPROVE or REJECT, a rejection's ``message``
and ``rejection_category``), ``POST submissions/bonus-payments/`` (``study_id``,
``csv_bonuses``; answers the payment's ``id``) and ``POST bulk-bonus-payments/<id>/pay/``.
"""

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils.translation import gettext

from prb_annotate.campaigns import prolific
from prb_annotate.models import Assignment, Campaign, Membership

AWAITING_REVIEW = "AWAITING REVIEW"
GONE = ("RETURNED", "TIMED-OUT")
TIMEOUT_S = 30
# A join waits for Prolific while the participant looks at a blank page: a shorter wait.
ADMISSION_TIMEOUT_S = 10
# Prolific asks a category with every rejection; a quality-control decision is "low effort"
# unless the study says otherwise (the reason itself goes in the message).
REJECTION_CATEGORY = "LOW_EFFORT"


class ProlificError(RuntimeError):
    """Prolific refused a call or could not be reached; the message says which and why."""


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
            text = response.read().decode()
    except urllib.error.HTTPError as error:
        detail = error.read().decode(errors="replace")[:300]
        raise ProlificError(
            f"Prolific answered {error.code} to {method} {path}: {detail}"
        ) from error
    except (urllib.error.URLError, OSError) as error:
        raise ProlificError(f"Prolific could not be reached ({error})") from error
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

    @property
    def statement(self) -> str:
        """What was sent, said on the page in the reader's language."""
        return gettext(
            "Sent to Prolific: %(approved)d approved, %(rejected)d rejected; "
            "%(skipped)d not awaiting review there, left as they are."
        ) % {"approved": self.approved, "rejected": self.rejected, "skipped": self.skipped}


def send_decisions(campaign: Campaign) -> Sent:
    """The approval list's approve and reject decisions, as transitions of the submissions
    awaiting review (a removed participant's ``reject`` included); screened-out participants
    are Prolific's to handle by their code. A rejection's message is the list's reason, in
    English whatever the manager's language: Prolific shows it to the participant."""
    on_prolific = submissions(campaign)
    counts = {"approve": 0, "reject": 0, "skipped": 0}
    for row in prolific.approval_rows(campaign):
        submission = on_prolific.get(row.participant_id)
        if row.decision not in ("approve", "reject"):
            continue
        if submission is None or submission.get("status") != AWAITING_REVIEW:
            counts["skipped"] += 1
            continue
        body: dict[str, Any] = {"action": row.decision.upper()}
        if row.decision == "reject":
            body |= {"message": row.reason, "rejection_category": REJECTION_CATEGORY}
        _call("POST", f"submissions/{submission['id']}/transition/", body)
        counts[row.decision] += 1
    return Sent(counts["approve"], counts["reject"], counts["skipped"])


def pay_bonuses(campaign: Campaign) -> int:
    """The bonus list paid as one bulk bonus; the number of participants paid."""
    rows = prolific.bonus_rows(campaign)
    if not rows:
        return 0
    text = "\n".join(f"{row.participant_id},{row.amount}" for row in rows)
    payment = _call(
        "POST",
        "submissions/bonus-payments/",
        {"study_id": _study_id(campaign), "csv_bonuses": text},
    )
    _call("POST", f"bulk-bonus-payments/{payment['id']}/pay/", {})
    return len(rows)


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
