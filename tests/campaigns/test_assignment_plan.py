"""The plan behind next_assignment: the items it proposes, kept cheap by low-water marks,
match a plain count over every row, through reservations, submits, skips, expiries and raised
targets."""

import functools
import random
from datetime import timedelta

from django.db.models import Count, Q
from django.utils import timezone

from prb_annotate.campaigns import plan as assignment_plan
from prb_annotate.campaigns.annotating import skip
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.plan import MAX_CANDIDATES, Candidate, plan_for
from prb_annotate.models import Assignment, Campaign, CampaignItem, Dataset
from tests.conftest import make_pairs
from tests.support.campaigns import active_campaign, annotators, submit_form

NOW = timezone.now()


def reference_plan(campaign: Campaign, annotator_id: int, now):
    """The plan computed the plain way, with the ORM over every row."""
    live = Q(assignments__status="submitted") | Q(
        assignments__status="reserved", assignments__expires_at__gt=now
    )
    items = (
        CampaignItem.objects.filter(campaign=campaign, kind="regular")
        .annotate(
            occupied=Count("assignments", filter=live),
            shown_a=Count("assignments", filter=live & Q(assignments__chosen_position="A")),
            rows=Count("assignments"),
            own=Count(
                "assignments",
                filter=Q(assignments__annotator_id=annotator_id)
                & ~Q(assignments__status="expired"),
            ),
        )
        .order_by("order_key")
    )
    started, released, never = [], [], []
    for item in items:
        target = (
            campaign.annotations_per_pair + item.extra_annotations + item.replacement_annotations
        )
        if item.own or item.occupied >= target:
            continue
        candidate = Candidate(item.pk, item.occupied, item.shown_a, item.order_key)
        if item.occupied:
            started.append(candidate)
        elif item.rows:
            released.append(candidate)
        else:
            never.append(candidate)
    started.sort(key=lambda c: (c.occupied, c.order_key, c.item_id))
    free = sorted(released + never[:MAX_CANDIDATES], key=lambda c: c.order_key)
    return started, free


def test_it_proposes_what_a_full_count_would(db: None, monkeypatch) -> None:
    # No safety margin, so that the mark moves within this small campaign.
    monkeypatch.setattr(assignment_plan, "ID_MARGIN", 0)
    dataset = Dataset.objects.create(name="plans")
    make_pairs(dataset, 60)
    campaign = active_campaign(dataset, k=3, reservation_minutes=10)
    users = annotators(campaign, 7)
    rng = random.Random(5)
    now = NOW
    for step in range(260):
        now += timedelta(minutes=rng.choice([0, 0, 1, 4]))
        user = rng.choice(users)
        assignment = next_assignment(campaign, user, now=now)
        if assignment is not None:
            roll = rng.random()
            if roll < 0.15:
                skip(assignment.pk, user, reason="")
            elif roll < 0.85:
                submit_form(assignment, now=now)
            # else: left to lapse
        if step in (80, 160):
            # The audit asks for more answers on some complete pairs.
            complete = (
                CampaignItem.objects.filter(campaign=campaign)
                .annotate(n=Count("assignments", filter=Q(assignments__status="submitted")))
                .filter(n__gte=3)
                .order_by("order_key")[:3]
            )
            CampaignItem.objects.filter(pk__in=[item.pk for item in complete]).update(
                extra_annotations=1
            )
        asking = rng.choice(users)
        started, free = reference_plan(campaign, asking.pk, now)
        plan_now = functools.partial(
            plan_for,
            campaign_id=campaign.pk,
            invite_token=campaign.invite_token,
            k=3,
            annotator_id=asking.pk,
            now=now,
        )
        plan = plan_now()
        if step in (80, 160):
            # A raised target reaches the plans with the next plan from scratch; until then
            # the item is only offered later, never wrongly.
            assert set(plan.started) <= set(started), step
            assert set(plan.free) <= set(free), step
            plan = plan_now(exact=True)
        assert plan.started == started, step
        assert plan.free == free, step
    assert Assignment.objects.filter(status="submitted").count() > 120
    # The marks did move, so the plans above came from the short window, not a full count.
    hint = assignment_plan._hints[(campaign.pk, campaign.invite_token, 3)]
    assert hint.low_row_id > 0
    assert hint.walk_from > 0
