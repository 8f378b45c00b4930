"""What a newcomer is told and asked before their first item: how long the work takes, and the
campaign's consent text, accepted once and kept with its time on the membership.

The estimate is the quota (for a newcomer, what they could be given where it is less:
``places.newcomer_reach``; for a member, what the quota
leaves them), plus the practice and qualification items asked first (none for a member already
cleared), times the median time on task of the campaign's latest ``TIMED_ANSWERS_READ`` timed
answers (``DEFAULT_SECONDS_PER_ITEM`` while fewer than ``MIN_TIMED_ANSWERS`` answers have a
time).
Consent is asked when the campaign has a consent text: the join page asks it with the start
button, the consent page (``views/consent.py``) asks a member who arrived another way, and the
annotation pages, the practice and qualification page and ``POST /api/campaigns/<id>/next/``
send a member who has not accepted it there first.
"""

import statistics
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from prb_annotate.campaigns.qualification.gate import is_cleared
from prb_annotate.models import (
    Annotation,
    Assignment,
    Campaign,
    Membership,
    QualificationItem,
)

# Before there are answers to measure: a careful reading of two responses and nine answers.
DEFAULT_SECONDS_PER_ITEM = 120.0
# Fewer timed answers than this say little about the next annotator.
MIN_TIMED_ANSWERS = 5
# The latest answers are enough for the median, and keep the query's cost fixed.
TIMED_ANSWERS_READ = 2000


CONSENT_FIRST = gettext_noop("Accept the campaign's consent text before your next item.")


class ConsentFirst(Exception):
    """The campaign asks for consent and this member has not given it yet; ``consent_text``
    is the text to accept."""

    def __init__(self, consent_text: str) -> None:
        super().__init__(gettext(CONSENT_FIRST))
        self.consent_text = consent_text


@dataclass(frozen=True)
class TimeEstimate:
    seconds_per_item: float
    # From this many timed answers; 0 when the default is used.
    measured_answers: int
    items: int | None
    # Practice and qualification items asked before the first item: they take time too.
    screening_items: int = 0
    # The campaign's quota, when the work left (``places.py``) allows a newcomer fewer items.
    quota_cut_from: int | None = None
    # Items the member has done already: ``items`` is then what the quota leaves them.
    done: int = 0

    @property
    def total_minutes(self) -> int | None:
        """The whole work in minutes, rounded up to 5; None without a quota."""
        if self.items is None:
            return None
        minutes = (self.items + self.screening_items) * self.seconds_per_item / 60
        return max(5, int(-(-minutes // 5) * 5))

    @property
    def minutes_per_item(self) -> float:
        return round(self.seconds_per_item / 60, 1)


def median_seconds_per_item(times_ms: list[int]) -> float | None:
    """The median of the answers' times on task in seconds, or None when there are too few."""
    if len(times_ms) < MIN_TIMED_ANSWERS:
        return None
    return float(statistics.median(times_ms)) / 1000


def time_estimate(
    campaign: Campaign,
    *,
    reach: int | None = None,
    member: Membership | None = None,
) -> TimeEstimate:
    """The estimate for a newcomer who could be given at most ``reach`` items
    (``places.newcomer_reach``; fewer than the quota then), or for ``member``: what the quota leaves
    them, after the practice and qualification items unless they are cleared."""
    times = list(
        Annotation.objects.filter(
            assignment__campaign=campaign, is_current=True, time_on_task_ms__isnull=False
        )
        .order_by("-pk")
        .values_list("time_on_task_ms", flat=True)[:TIMED_ANSWERS_READ]
    )
    measured = median_seconds_per_item([int(t) for t in times if t is not None])
    screening = QualificationItem.objects.filter(campaign=campaign).count()
    quota = items = campaign.quota_per_annotator
    cut_from, done = None, 0
    if quota is not None and reach is not None and 0 < reach < quota:
        items, cut_from = reach, quota
    if member is not None:
        done = Assignment.objects.filter(
            campaign=campaign, annotator_id=member.user_id, status=Assignment.Status.SUBMITTED
        ).count()
        items = None if quota is None else max(0, quota - done)
        if is_cleared(campaign.pk, member.user_id):
            screening = 0
    seconds = DEFAULT_SECONDS_PER_ITEM if measured is None else measured
    answers = 0 if measured is None else len(times)
    return TimeEstimate(seconds, answers, items, screening, cut_from, done)


def needs_consent(membership: Membership) -> bool:
    """Whether ``membership`` must accept its campaign's consent text before an item."""
    return bool(membership.campaign.consent_text.strip()) and membership.consent_given_at is None


def check_consent(membership: Membership) -> None:
    """ConsentFirst when the member has a consent text to accept first."""
    if needs_consent(membership):
        raise ConsentFirst(membership.campaign.consent_text)


def record_consent(membership: Membership) -> Membership:
    """Keep the time the member accepted the consent text; a second acceptance keeps the first
    time (a double click, or the join page sent again)."""
    with transaction.atomic():
        Membership.objects.filter(pk=membership.pk, consent_given_at__isnull=True).update(
            consent_given_at=timezone.now()
        )
    membership.refresh_from_db(fields=["consent_given_at"])
    return membership
