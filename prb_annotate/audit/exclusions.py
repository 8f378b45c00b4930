"""Annotators out of the audit, and the replacement annotations their pairs then need.

Annotations leave the audit for three reasons (``quality.LEFT_OUT_REASONS``): a manager
excluded the annotator (an ``AnnotatorExclusion`` row, reversible, history kept), their gold
accuracy is below the campaign's ``min_gold_accuracy``, or their share of "A" answers has a
binomial p-value below ``position_bias_max_p``. Every reader of verdicts (the audit, the
exports, ``manage.py evaluate``) asks ``left_out_annotators`` for the same set.

An answer that leaves the audit still holds its slot (its assignment stays submitted, and
the annotator can never be handed the item again), so without more slots its pair would wait
for an annotation that no one can be offered. ``request_replacement_annotations`` raises each
affected item's ``replacement_annotations`` to the number of its answers that left, which makes
room for as many *other* annotators; the verdict still counts k (+ split-vote extras) answers,
from those who remain. The raise is a conditional UPDATE that only goes up, so it is
idempotent, safe when two requests race, and never lowers a target below the slots already
occupied (the invariant of ``campaigns/assignment.py``).

A closed campaign is never given replacement slots: nobody can fill them, so an exclusion
there changes the audit only (``pairs_short_of_answers`` counts the pairs it leaves without
enough answers, and ``campaigns.lifecycle.reopen_for_replacements`` is the explicit way back).

When the reason is lifted (the exclusion is lifted, a threshold changes, an annotator's gold
accuracy recovers), ``withdraw_unneeded_replacements`` takes back the slots nobody has filled
yet, so that the campaign does not pay for answers the audit no longer needs. It locks the
items first and never goes below the slots already occupied beyond k (+ extras), so the
invariant holds against a reservation made at the same moment.
"""

from collections import defaultdict
from collections.abc import Collection
from datetime import datetime
from typing import Any

import pandas as pd
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext

from prb_annotate.audit import annotators, frames, quality
from prb_annotate.models import (
    Annotation,
    AnnotatorExclusion,
    Assignment,
    Campaign,
    CampaignItem,
    Membership,
)


def current_exclusions(campaign: Campaign) -> list[AnnotatorExclusion]:
    return list(
        AnnotatorExclusion.objects.filter(campaign=campaign, lifted_at__isnull=True)
        .select_related("annotator", "excluded_by")
        .order_by("annotator__username")
    )


def exclusion_history(campaign: Campaign) -> list[AnnotatorExclusion]:
    return list(
        AnnotatorExclusion.objects.filter(campaign=campaign)
        .select_related("annotator", "excluded_by", "lifted_by")
        .order_by("-created_at", "-id")
    )


def exclude_annotator(
    campaign: Campaign, annotator: User, reason: str, *, by: User | None
) -> AnnotatorExclusion:
    """Leave the annotator out of the campaign's audit, then ask for replacements.

    Raises ValidationError naming the field: the reason is required, the annotator must be an
    annotator of the campaign and not excluded already. The messages name the annotator: a
    caller that takes an account from a request finds it among the campaign's accounts first
    (``campaigns.members.campaign_account_or_404``).
    """
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": gettext("Say why the annotator is left out.")})
    if not Membership.objects.filter(
        campaign=campaign, user=annotator, role=Membership.Role.ANNOTATOR
    ).exists():
        raise ValidationError(
            {
                "annotator": gettext("%(name)s is not an annotator of this campaign.")
                % {"name": annotator.get_username()}
            }
        )
    try:
        with transaction.atomic():
            exclusion = AnnotatorExclusion.objects.create(
                campaign=campaign, annotator=annotator, reason=reason, excluded_by=by
            )
    except IntegrityError as error:
        # The partial unique constraint: one current exclusion per annotator and campaign.
        raise ValidationError(
            {
                "annotator": gettext("%(name)s is already excluded.")
                % {"name": annotator.get_username()}
            }
        ) from error
    request_replacement_annotations(campaign)
    return exclusion


def lift_exclusion(campaign: Campaign, annotator: User, *, by: User | None) -> AnnotatorExclusion:
    """Bring the annotator back into the audit; the exclusion row stays as history.

    Replacement slots nobody has filled yet are withdrawn; filled ones stay (their pairs
    simply have one answer more).
    """
    updated = AnnotatorExclusion.objects.filter(
        campaign=campaign, annotator=annotator, lifted_at__isnull=True
    )
    exclusion = updated.first()
    if exclusion is None:
        raise ValidationError(
            {
                "annotator": gettext("%(name)s is not excluded from this campaign.")
                % {"name": annotator.get_username()}
            }
        )
    exclusion.lifted_at = timezone.now()
    exclusion.lifted_by = by
    exclusion.save(update_fields=["lifted_at", "lifted_by"])
    withdraw_unneeded_replacements(campaign)
    return exclusion


def manager_excluded(campaign: Campaign) -> set[str]:
    return set(
        AnnotatorExclusion.objects.filter(campaign=campaign, lifted_at__isnull=True).values_list(
            "annotator__username", flat=True
        )
    )


def below_gold(campaign: Campaign) -> set[str]:
    """Annotators below the campaign's minimum gold accuracy, from the gold items alone."""
    if campaign.min_gold_accuracy is None:
        return set()
    gold = frames.items_frame(campaign, lengths=False, kind=CampaignItem.Kind.GOLD)
    if gold.empty:
        return set()
    frame = frames.annotations_frame(campaign, gold, kind=CampaignItem.Kind.GOLD)
    return annotators.annotators_below_gold(frame, gold, campaign.min_gold_accuracy)


def position_counts(campaign: Campaign) -> dict[str, tuple[int, int]]:
    """annotator -> (answers naming A, answers naming B) on regular items, current answers."""
    rows = (
        Annotation.objects.filter(
            assignment__campaign=campaign,
            assignment__status=Assignment.Status.SUBMITTED,
            assignment__item__kind=CampaignItem.Kind.REGULAR,
            is_current=True,
        )
        .values("assignment__annotator__username")
        .annotate(a=Count("pk", filter=_naming("A")), b=Count("pk", filter=_naming("B")))
        .order_by()
    )
    return {row["assignment__annotator__username"]: (row["a"], row["b"]) for row in rows}


def _naming(position: str) -> Q:
    """The answers whose rubric fit, as the annotator saw it, is ``position``: the rule of
    ``Annotation.rubric_fit_as_position``, asked of the database."""
    other = "B" if position == "A" else "A"
    fit = Annotation.RubricFit
    return Q(rubric_fit=fit.CHOSEN, assignment__chosen_position=position) | Q(
        rubric_fit=fit.REJECTED, assignment__chosen_position=other
    )


def left_out_annotators(campaign: Campaign) -> dict[str, str]:
    """annotator username -> why their answers are out of the audit (a ``quality`` code).

    Reads only what the reasons need (the gold items' answers, the answers' positions counted
    by the database): for a reader that does not hold the campaign's answers, such as an
    export that reads them a slice at a time. ``left_out_from_frames`` gives the same from
    frames already read.
    """
    biased = (
        quality.biased_annotators(position_counts(campaign), campaign.position_bias_max_p)
        if campaign.position_bias_max_p is not None
        else set()
    )
    return quality.left_out(
        manager_excluded=manager_excluded(campaign),
        below_gold=below_gold(campaign),
        biased=biased,
    )


def left_out_from_frames(
    campaign: Campaign, frame: pd.DataFrame, items: pd.DataFrame
) -> dict[str, str]:
    """``left_out_annotators`` from the campaign's frames (``frames.annotations_frame`` and
    ``frames.items_frame``, every item), so that the answers are not read again."""
    biased = (
        quality.biased_annotators(frame_position_counts(frame), campaign.position_bias_max_p)
        if campaign.position_bias_max_p is not None
        else set()
    )
    gold_rows = frame[frame["item_kind"] == CampaignItem.Kind.GOLD]
    gold_items = items[items["item_kind"] == CampaignItem.Kind.GOLD]
    below = (
        annotators.annotators_below_gold(gold_rows, gold_items, campaign.min_gold_accuracy)
        if campaign.min_gold_accuracy is not None and not gold_items.empty
        else set()
    )
    return quality.left_out(
        manager_excluded=manager_excluded(campaign), below_gold=below, biased=biased
    )


def frame_position_counts(frame: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """``position_counts`` from an annotations frame: answers naming A and B on regular items."""
    rows = frame[frame["item_kind"] == CampaignItem.Kind.REGULAR]
    seen = rows["rubric_fit_position"]  # the frame's own reading of each answer's position
    tallies = pd.DataFrame({"a": (seen == "A").astype(int), "b": (seen == "B").astype(int)})
    counts = tallies.groupby(rows["annotator"].to_numpy(), sort=False).sum()
    return {str(name): (int(row.a), int(row.b)) for name, row in counts.iterrows()}


def dropped_answers(campaign: Campaign, left_out: Collection[str]) -> dict[int, int]:
    """item id -> submitted answers on that regular item by annotators out of the audit."""
    if not left_out:
        return {}
    dropped: dict[int, int] = defaultdict(int)
    for item_id, count in (
        Assignment.objects.filter(
            campaign=campaign,
            status=Assignment.Status.SUBMITTED,
            item__kind=CampaignItem.Kind.REGULAR,
            annotator__username__in=list(left_out),
        )
        .values("item_id")
        .annotate(n=Count("pk"))
        .values_list("item_id", "n")
        .order_by()
    ):
        dropped[item_id] = count
    return dict(dropped)


def request_replacement_annotations(
    campaign: Campaign, left_out: dict[str, str] | None = None
) -> int:
    """Raise the replacement slots of every regular item with answers out of the audit to the
    number of those answers; returns how many items were raised (see the module docstring).
    A closed campaign gets none."""
    if campaign.status == Campaign.Status.CLOSED:
        return 0
    if left_out is None:
        left_out = left_out_annotators(campaign)
    if not left_out:
        return 0
    dropped = dropped_answers(campaign, left_out)
    current = dict(
        CampaignItem.objects.filter(pk__in=list(dropped)).values_list(
            "pk", "replacement_annotations"
        )
    )
    raised = 0
    with transaction.atomic():
        for item_id, wanted in quality.replacements_needed(dropped, current).items():
            # Only upwards: a concurrent raise to the same or a higher count makes this a no-op.
            raised += CampaignItem.objects.filter(
                pk=item_id, replacement_annotations__lt=wanted
            ).update(replacement_annotations=wanted)
    return raised


def withdraw_unneeded_replacements(
    campaign: Campaign, left_out: dict[str, str] | None = None, *, now: datetime | None = None
) -> int:
    """Lower the replacement slots that answers no longer out of the audit had asked for, to
    what is still needed but never below the slots already taken; returns how many items were
    lowered (see the module docstring)."""
    if left_out is None:
        left_out = left_out_annotators(campaign)
    dropped = dropped_answers(campaign, left_out)
    raised = list(
        CampaignItem.objects.filter(
            campaign=campaign, kind=CampaignItem.Kind.REGULAR, replacement_annotations__gt=0
        ).values_list("pk", "replacement_annotations")
    )
    if not any(count > dropped.get(item_id, 0) for item_id, count in raised):
        return 0
    now = now or timezone.now()
    lowered = 0
    with transaction.atomic():
        # Locked before their slots are counted: a reservation waits, or is counted.
        locked = list(
            CampaignItem.objects.select_for_update()
            .filter(pk__in=[item_id for item_id, _ in raised])
            .order_by("pk")
            .values_list("pk", "extra_annotations", "replacement_annotations")
        )
        occupied = _occupied_slots([item_id for item_id, _, _ in locked], now)
        k = campaign.annotations_per_pair
        taken = {
            item_id: max(occupied.get(item_id, 0) - k - extra, 0) for item_id, extra, _ in locked
        }
        current = {item_id: count for item_id, _, count in locked}
        for item_id, count in quality.replacements_after_lift(current, dropped, taken).items():
            lowered += CampaignItem.objects.filter(pk=item_id).update(replacement_annotations=count)
    return lowered


def sync_replacement_slots(campaign: Campaign) -> tuple[int, int]:
    """Replacement slots raised where answers left the audit and withdrawn where they came
    back: (items raised, items lowered). Called wherever who is left out may have changed."""
    return sync_slots_for(campaign, left_out_annotators(campaign))


def sync_slots_for(campaign: Campaign, left_out: dict[str, str]) -> tuple[int, int]:
    """``sync_replacement_slots`` for who is left out as the caller has read it already."""
    return (
        request_replacement_annotations(campaign, left_out),
        withdraw_unneeded_replacements(campaign, left_out),
    )


def _occupied_slots(item_ids: list[int], now: datetime) -> dict[int, int]:
    """item id -> submitted answers and live reservations."""
    occupying = Q(status=Assignment.Status.SUBMITTED) | Q(
        status=Assignment.Status.RESERVED, expires_at__gt=now
    )
    return dict(
        Assignment.objects.filter(occupying, item_id__in=item_ids)
        .values("item_id")
        .annotate(n=Count("pk"))
        .values_list("item_id", "n")
        .order_by()
    )


def pairs_short_of_answers(campaign: Campaign, left_out: Collection[str] | None = None) -> int:
    """Regular pairs with answers out of the audit whose remaining answers are fewer than
    their verdict counts (k + split-vote extras): pairs the audit cannot validate until
    replacements come in (undecided, unless a failure is certain already)."""
    if left_out is None:
        left_out = left_out_annotators(campaign)
    dropped = dropped_answers(campaign, left_out)
    if not dropped:
        return 0
    rows = (
        CampaignItem.objects.filter(pk__in=list(dropped))
        .annotate(
            n_submitted=Count(
                "assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)
            )
        )
        .values_list("pk", "extra_annotations", "n_submitted")
    )
    k = campaign.annotations_per_pair
    return sum(1 for item_id, extra, submitted in rows if submitted - dropped[item_id] < k + extra)


def quality_settings(campaign: Campaign) -> quality.QualitySettings:
    return quality.QualitySettings(
        quality_criteria=tuple(campaign.quality_criteria),
        fast_answer_seconds=campaign.fast_answer_seconds,
        min_gold_accuracy=campaign.min_gold_accuracy,
        position_bias_max_p=campaign.position_bias_max_p,
    )


def campaign_quality(
    campaign: Campaign,
    items: pd.DataFrame | None = None,
    frame: pd.DataFrame | None = None,
    left_out: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """``quality.annotator_quality`` for the campaign, with who is out of the audit and why.
    ``items``, ``frame`` (``frames.items_frame`` / ``annotations_frame``) and ``left_out`` when
    the caller has them already; who is left out otherwise comes from the same frames."""
    if items is None:
        items = frames.items_frame(campaign, lengths=False)
    if frame is None:
        frame = frames.annotations_frame(campaign, items)
    if left_out is None:
        left_out = left_out_from_frames(campaign, frame, items)
    return quality.annotator_quality(frame, items, quality_settings(campaign), left_out)
