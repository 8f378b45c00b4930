"""Managers' decisions on a campaign's pairs: adjudications, revisable, with their history.

Invariant: an item has at most one current adjudication (the partial unique constraint
``adjudication_one_current``); older rows are its history, never changed but for losing
``is_current``. A decision of ``withdrawn`` is current too: it hands the pair back to the
annotators' verdict while keeping the record of who withdrew what.

Concurrency: two managers deciding the same pair at once. ``adjudicate`` locks the item's row
first (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's IMMEDIATE transactions let one writer
in at a time), so the second waits for the first to commit, then demotes the first's row and
adds its own: the later decision wins and exactly one row stays current. Only the item row is
locked, and always before the adjudication rows, so two decisions cannot deadlock.

What the rule does with a decision lives in ``rule.apply_adjudications`` (pure); this module
only reads and writes the rows.
"""

from collections.abc import Iterable, Mapping

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from prb_annotate.audit import rule
from prb_annotate.audit.rule import Adjudicated, PairVerdict
from prb_annotate.models import Adjudication, Campaign, CampaignItem

MAX_NOTE_CHARS = 5000
DECISIONS = tuple(Adjudication.Decision.values)


def check_adjudication(item: CampaignItem, decision: str, reason: str, note: str) -> None:
    """Why this decision cannot be recorded, as a ValidationError naming the field."""
    errors: dict[str, str] = {}
    if item.kind != CampaignItem.Kind.REGULAR:
        errors["item"] = f"Pair {item.pair_id} is a gold item of campaign {item.campaign_id}: "
        errors["item"] += "it has no verdict to decide."
    if decision not in DECISIONS:
        errors["decision"] = f"Choose one of {', '.join(DECISIONS)} (got {decision!r})."
    if reason not in rule.ADJUDICATION_REASONS:
        errors["reason"] = f"Unknown reason code {reason!r}."
    if len(note) > MAX_NOTE_CHARS:
        errors["note"] = f"At most {MAX_NOTE_CHARS} characters (got {len(note)})."
    if errors:
        raise ValidationError({field: [message] for field, message in errors.items()})


def adjudicate(
    item: CampaignItem,
    decision: str,
    reason: str,
    *,
    note: str = "",
    by: User | None = None,
) -> Adjudication:
    """Record a manager's decision on ``item``'s pair; the previous one becomes history.

    One transaction: the item row is locked, the current decision (if any) demoted, the new
    one added. Withdrawing when nothing is decided is refused, so history holds only changes.
    """
    check_adjudication(item, decision, reason, note)
    with transaction.atomic():
        # Serialises decisions on this item (see the module docstring).
        CampaignItem.objects.select_for_update().filter(pk=item.pk).values_list("pk").get()
        current = Adjudication.objects.filter(item=item, is_current=True)
        in_force = current.exclude(decision=Adjudication.Decision.WITHDRAWN).exists()
        if decision == Adjudication.Decision.WITHDRAWN and not in_force:
            raise ValidationError({"decision": ["This pair has no decision to withdraw."]})
        current.update(is_current=False)
        return Adjudication.objects.create(
            item=item,
            decision=decision,
            reason=reason,
            note=note,
            decided_by=by if by is not None and by.pk is not None else None,
        )


def as_adjudicated(row: Adjudication) -> Adjudicated:
    return Adjudicated(
        decision=row.decision,
        reason=row.reason,
        note=row.note,
        decided_by=row.decided_by.get_username() if row.decided_by is not None else "",
        decided_at=row.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def current_adjudications(campaign: Campaign) -> dict[int, Adjudicated]:
    """The decisions in force on the campaign's pairs, keyed by pair id (withdrawn ones are
    not in force)."""
    rows = (
        Adjudication.objects.filter(item__campaign=campaign, is_current=True)
        .exclude(decision=Adjudication.Decision.WITHDRAWN)
        .select_related("decided_by", "item")
    )
    return {row.item.pair_id: as_adjudicated(row) for row in rows}


def with_adjudications(
    campaign: Campaign, by_pair: Mapping[int, PairVerdict]
) -> dict[int, PairVerdict]:
    """The campaign's verdicts with its managers' decisions applied."""
    return rule.apply_adjudications(by_pair, current_adjudications(campaign))


def history(item: CampaignItem) -> list[Adjudication]:
    """Every decision on the item, newest first."""
    return list(
        Adjudication.objects.filter(item=item)
        .select_related("decided_by")
        .order_by("-created_at", "-id")
    )


def adjudication_queue(by_pair: Iterable[PairVerdict]) -> list[PairVerdict]:
    """Undecided pairs nobody has adjudicated: split votes with all annotations in first, then
    the others (missing ratings, annotations still to come), each group by record id."""

    def order(verdict: PairVerdict) -> tuple[int, tuple[tuple[int, int | str], ...]]:
        split = rule.UNDECIDED_SPLIT_VOTE in verdict.reasons
        waiting = rule.TOO_FEW_ANNOTATIONS in verdict.reasons
        return (0 if split and not waiting else 1, rule.natural_key(verdict.external_id))

    undecided = [
        verdict
        for verdict in by_pair
        if verdict.verdict == rule.UNDECIDED and not verdict.adjudicated
    ]
    return sorted(undecided, key=order)


# The adjudication queue's lists: what waits for a decision, or every pair of one verdict.
QUEUE_LISTS = ("undecided", rule.VALIDATED, rule.EXCLUDED, "all")


def queue_list(by_pair: Iterable[PairVerdict], shown: str) -> list[PairVerdict]:
    """The queue's list ``shown`` (one of ``QUEUE_LISTS``): ``undecided`` is the adjudication
    queue; ``validated`` and ``excluded`` the pairs with that verdict now (adjudicated or
    not), ``all`` every pair, each by record id."""
    if shown == "undecided":
        return adjudication_queue(by_pair)
    chosen = [verdict for verdict in by_pair if shown == "all" or verdict.verdict == shown]
    return sorted(chosen, key=lambda verdict: rule.natural_key(verdict.external_id))
