"""The assignment engine: who gets which item next, reservations and their expiry, skips,
A/B counterbalancing, gold mixing and quotas."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db.models import Count, Q
from django.utils import timezone

from prb_annotate.campaigns.annotating import skip
from prb_annotate.campaigns.assignment import (
    balanced_position,
    is_gold_slot,
    next_assignment,
    reclaim_expired,
    responses_ab,
)
from prb_annotate.campaigns.lifecycle import set_status
from prb_annotate.models import Assignment, CampaignItem, Dataset, Membership
from tests.conftest import make_pairs
from tests.support.campaigns import active_campaign, annotators, submit_form

NOW = timezone.now()


def run_to_the_end(campaign, users, *, now=NOW):
    """Every annotator in turn takes an item and submits it, until nobody gets one."""
    while True:
        progressed = False
        for user in users:
            assignment = next_assignment(campaign, user, now=now)
            if assignment is not None:
                submit_form(assignment, now=now)
                progressed = True
        if not progressed:
            return


def test_it_shows_the_same_reservation_on_reload(dataset: Dataset) -> None:
    campaign = active_campaign(dataset)
    (alice,) = annotators(campaign, 1)
    first = next_assignment(campaign, alice, now=NOW)
    again = next_assignment(campaign, alice, now=NOW + timedelta(minutes=29))
    assert first is not None
    assert again is not None
    assert again.pk == first.pk
    assert again.chosen_position == first.chosen_position
    assert Assignment.objects.count() == 1


def test_it_gives_each_pair_k_annotators_and_nobody_a_pair_twice(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, k=3)
    users = annotators(campaign, 5)
    run_to_the_end(campaign, users)
    per_item = Assignment.objects.values("item").annotate(n=Count("pk"))
    assert sorted(row["n"] for row in per_item) == [3] * 12
    assert not Assignment.objects.exclude(status=Assignment.Status.SUBMITTED).exists()
    pairs = Assignment.objects.values_list("item_id", "annotator_id")
    assert len(set(pairs)) == len(pairs)


def test_it_finishes_started_pairs_first_then_least_annotated_then_seed_order(
    dataset: Dataset,
) -> None:
    campaign = active_campaign(dataset, k=3)
    alice, bob, carol, dave = annotators(campaign, 4)
    by_order = list(campaign.items.order_by("order_key"))
    first = next_assignment(campaign, alice, now=NOW)
    assert first is not None
    assert first.item_id == by_order[0].pk
    # A started pair comes before an untouched one.
    second = next_assignment(campaign, bob, now=NOW)
    assert second is not None
    assert second.item_id == by_order[0].pk
    # Carol's own item, then Dave: item 0 has two occupied slots, item 1 has one.
    submit_form(first, now=NOW)
    submit_form(second, now=NOW)
    carol_first = next_assignment(campaign, carol, now=NOW)
    assert carol_first is not None
    assert carol_first.item_id == by_order[0].pk
    submit_form(carol_first, now=NOW)
    alice_second = next_assignment(campaign, alice, now=NOW)
    assert alice_second is not None
    assert alice_second.item_id == by_order[1].pk
    bob_second = next_assignment(campaign, bob, now=NOW)
    assert bob_second is not None
    assert bob_second.item_id == by_order[1].pk
    submit_form(bob_second, now=NOW)
    # Started items: item 1 has two (alice reserved, bob submitted). Make item 2 less annotated.
    carol_second = next_assignment(campaign, carol, now=NOW)
    assert carol_second is not None
    assert carol_second.item_id == by_order[1].pk
    # Item 1 is now full (alice live, bob and carol): dave opens item 2, the next by seed.
    dave_first = next_assignment(campaign, dave, now=NOW)
    assert dave_first is not None
    assert dave_first.item_id == by_order[2].pk


def test_it_prefers_the_least_annotated_started_pair(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, k=3)
    alice, bob, carol, dave = annotators(campaign, 4)
    by_order = list(campaign.items.order_by("order_key"))
    for user in (alice, bob):
        assignment = next_assignment(campaign, user, now=NOW)
        assert assignment is not None
        submit_form(assignment, now=NOW)  # item 0: 2 of 3
    # Carol skips item 0 and opens item 1 instead; item 0 still needs one.
    carol_item = next_assignment(campaign, carol, now=NOW)
    assert carol_item is not None
    assert carol_item.item_id == by_order[0].pk
    skip(carol_item.pk, carol, reason="not my field")
    carol_next = next_assignment(campaign, carol, now=NOW)
    assert carol_next is not None
    assert carol_next.item_id == by_order[1].pk
    submit_form(carol_next, now=NOW)
    # Dave: item 1 (1 annotation) comes before item 0 (2 annotations).
    dave_item = next_assignment(campaign, dave, now=NOW)
    assert dave_item is not None
    assert dave_item.item_id == by_order[1].pk


def test_it_is_reproducible_from_the_seed(db: None) -> None:
    orders = []
    for index, seed in enumerate([7, 7, 8]):
        dataset = Dataset.objects.create(name=f"d{index}")
        make_pairs(dataset, 12)
        campaign = active_campaign(dataset, name=f"c{index}", seed=seed)
        orders.append([item.pair.external_id for item in campaign.items.order_by("order_key")])
    assert orders[0] == orders[1]
    assert orders[0] != orders[2]


def test_it_reclaims_expired_reservations(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, k=1, reservation_minutes=30)
    alice, bob = annotators(campaign, 2)
    held = next_assignment(campaign, alice, now=NOW)
    assert held is not None
    # While alice's reservation lives, bob gets another item.
    other = next_assignment(campaign, bob, now=NOW + timedelta(minutes=1))
    assert other is not None
    assert other.item_id != held.item_id
    skip(other.pk, bob, reason="")
    assert reclaim_expired(campaign, now=NOW + timedelta(minutes=29)) == 0
    later = NOW + timedelta(minutes=31)
    # Once it lapsed, the slot is free by the clock alone: bob gets alice's item ...
    taken = next_assignment(campaign, bob, now=later)
    assert taken is not None
    assert taken.item_id == held.item_id
    # ... and alice's row says expired.
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED


def test_it_marks_lapsed_rows_expired_in_a_sweep(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, k=2)
    users = annotators(campaign, 3)
    for user in users:
        next_assignment(campaign, user, now=NOW)
    assert reclaim_expired(campaign, now=NOW + timedelta(hours=1)) == 3
    assert reclaim_expired(campaign, now=NOW + timedelta(hours=1)) == 0
    statuses = set(Assignment.objects.values_list("status", flat=True))
    assert statuses == {Assignment.Status.EXPIRED}


def test_it_gives_an_annotator_back_their_lapsed_item_if_it_has_room(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, k=1)
    alice, bob = annotators(campaign, 2)
    first = next_assignment(campaign, alice, now=NOW)
    assert first is not None
    later = NOW + timedelta(hours=2)
    again = next_assignment(campaign, alice, now=later)
    assert again is not None
    assert again.pk == first.pk
    assert again.status == Assignment.Status.RESERVED
    assert again.expires_at > later
    # Once someone else took the slot, the lapsed item does not come back.
    much_later = later + timedelta(hours=2)
    taken = next_assignment(campaign, bob, now=much_later)
    assert taken is not None
    assert taken.item_id == first.item_id
    fresh = next_assignment(campaign, alice, now=much_later)
    assert fresh is not None
    assert fresh.item_id != first.item_id
    first.refresh_from_db()
    assert first.status == Assignment.Status.EXPIRED


def test_it_puts_an_expired_item_back_into_its_annotators_queue(dataset: Dataset) -> None:
    """Two annotators and k = 2: a pair whose reservation lapsed can only be finished by the
    annotator who let it lapse."""
    campaign = active_campaign(dataset, k=2)
    alice, bob = annotators(campaign, 2)
    lapsed = next_assignment(campaign, alice, now=NOW)
    assert lapsed is not None
    later = NOW + timedelta(hours=1)
    assert reclaim_expired(campaign, now=later) == 1
    run_to_the_end(campaign, [bob], now=later)
    run_to_the_end(campaign, [alice], now=later)
    lapsed.refresh_from_db()
    assert lapsed.status == Assignment.Status.SUBMITTED  # the same row, reused
    assert Assignment.objects.filter(item=lapsed.item).count() == 2
    assert not Assignment.objects.exclude(status=Assignment.Status.SUBMITTED).exists()
    assert Assignment.objects.filter(status=Assignment.Status.SUBMITTED).count() == 24


def test_it_gives_a_skipped_item_to_someone_else_and_never_back(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, k=1)
    alice, bob = annotators(campaign, 2)
    first = next_assignment(campaign, alice, now=NOW)
    assert first is not None
    skipped = skip(first.pk, alice, reason="offensive content")
    assert skipped.status == Assignment.Status.SKIPPED
    assert skipped.skip_reason == "offensive content"
    alice_next = next_assignment(campaign, alice, now=NOW + timedelta(hours=5))
    assert alice_next is not None
    assert alice_next.item_id != first.item_id
    bob_next = next_assignment(campaign, bob, now=NOW)
    assert bob_next is not None
    assert bob_next.item_id == first.item_id


def side_tallies(campaign, group):
    return (
        Assignment.objects.filter(campaign=campaign)
        .values(group)
        .annotate(
            a=Count("pk", filter=Q(chosen_position="A")),
            b=Count("pk", filter=Q(chosen_position="B")),
        )
    )


def test_it_balances_sides_per_annotator_and_per_item(db: None) -> None:
    """Within one at every step while items remain to choose from. At the very end of a
    campaign the last open slots can force a side: items stay within one, an annotator's
    last item may leave them at two."""
    dataset = Dataset.objects.create(name="balance")
    make_pairs(dataset, 40)
    for k, count in ((2, 7), (3, 5), (3, 8), (4, 7)):
        campaign = active_campaign(dataset, name=f"k{k}-{count}", k=k, seed=k)
        users = annotators(campaign, count, prefix=f"k{k}-{count}-")
        slots = 40 * k
        while Assignment.objects.filter(campaign=campaign).count() < 0.8 * slots:
            for user in users:
                assignment = next_assignment(campaign, user, now=NOW)
                assert assignment is not None
                submit_form(assignment, now=NOW)
            for group in ("annotator", "item"):
                for tally in side_tallies(campaign, group):
                    assert abs(tally["a"] - tally["b"]) <= 1, (k, count, group, tally)
        run_to_the_end(campaign, users)
        assert Assignment.objects.filter(campaign=campaign).count() == slots
        for tally in side_tallies(campaign, "item"):
            assert abs(tally["a"] - tally["b"]) <= 1, (k, count, tally)
        for tally in side_tallies(campaign, "annotator"):
            assert abs(tally["a"] - tally["b"]) <= 2, (k, count, tally)


def test_it_picks_the_lagging_side() -> None:
    cases = [
        # (annotator A, B, item A, B, tie break, item's last slot) -> side
        ((0, 0, 0, 0, "B", False), "B"),
        ((1, 0, 0, 0, "A", False), "B"),
        ((0, 0, 0, 1, "B", False), "A"),
        ((2, 1, 1, 0, "A", False), "B"),
        ((1, 0, 0, 1, "A", False), "B"),  # conflict on equal terms: the annotator wins ...
        ((1, 0, 0, 1, "B", True), "A"),  # ... unless it is the item's last slot
        ((3, 1, 0, 1, "A", True), "B"),  # conflict: the annotator is further off
        ((0, 1, 2, 0, "A", False), "B"),  # conflict: the item is further off
    ]
    for (ua, ub, ia, ib, tie, last), expected in cases:
        side = balanced_position(
            annotator_a=ua, annotator_b=ub, item_a=ia, item_b=ib, tie_break=tie, last_slot=last
        )
        assert side == expected, (ua, ub, ia, ib, tie, last)


def test_it_shows_the_chosen_answer_on_the_stored_side(dataset: Dataset) -> None:
    campaign = active_campaign(dataset)
    alice, bob = annotators(campaign, 2)
    for user in (alice, bob):
        assignment = next_assignment(campaign, user, now=NOW)
        assert assignment is not None
        pair = assignment.item.pair
        a, b = responses_ab(assignment)
        expected = (pair.chosen, pair.rejected)
        assert (a, b) == (expected if assignment.chosen_position == "A" else expected[::-1])


def test_it_places_exactly_one_gold_slot_per_block() -> None:
    for rate in (0.1, 0.2, 0.25, 0.3, 1 / 3, 0.5):
        slots = [is_gold_slot(n, rate, seed=3, annotator_id=9) for n in range(600)]
        for n in range(1, 601):
            assert abs(sum(slots[:n]) - rate * n) <= 1, (rate, n)
    other = [is_gold_slot(n, 0.2, seed=3, annotator_id=10) for n in range(100)]
    mine = [is_gold_slot(n, 0.2, seed=3, annotator_id=9) for n in range(100)]
    assert other != mine  # not the same rhythm for everyone
    assert not any(is_gold_slot(n, 0.0, seed=0, annotator_id=1) for n in range(50))


def test_it_mixes_gold_items_in_at_the_gold_rate(db: None) -> None:
    dataset = Dataset.objects.create(name="with-gold")
    make_pairs(dataset, 60)
    gold_ids = [f"p{index:04d}" for index in range(20)]
    campaign = active_campaign(dataset, k=3, gold_pair_ids=gold_ids, gold_rate=0.25)
    alice, bob, carol = annotators(campaign, 3)
    for user in (alice, bob, carol):
        for _ in range(24):
            assignment = next_assignment(campaign, user, now=NOW)
            assert assignment is not None
            submit_form(assignment, now=NOW)
    for user in (alice, bob, carol):
        kinds = list(
            Assignment.objects.filter(annotator=user)
            .order_by("pk")
            .values_list("item__kind", flat=True)
        )
        assert kinds.count(CampaignItem.Kind.GOLD) == 6  # one in every block of four
    # Gold items are shown to every annotator, past k; regular ones never past k.
    gold_items = CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.GOLD)
    assert gold_items.count() == 20
    regular_counts = (
        Assignment.objects.filter(item__kind=CampaignItem.Kind.REGULAR)
        .values("item")
        .annotate(n=Count("pk"))
    )
    assert max(row["n"] for row in regular_counts) <= 3


def test_it_stops_at_the_quota(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, quota_per_annotator=2)
    (alice,) = annotators(campaign, 1)
    for _ in range(2):
        assignment = next_assignment(campaign, alice, now=NOW)
        assert assignment is not None
        submit_form(assignment, now=NOW)
    assert next_assignment(campaign, alice, now=NOW) is None


def test_it_hands_out_nothing_unless_active(dataset: Dataset) -> None:
    campaign = active_campaign(dataset)
    (alice,) = annotators(campaign, 1)
    set_status(campaign, "paused")
    assert next_assignment(campaign, alice, now=NOW) is None
    set_status(campaign, "active")
    assert next_assignment(campaign, alice, now=NOW) is not None
    set_status(campaign, "closed")
    assert next_assignment(campaign, alice, now=NOW) is None


def test_it_returns_none_when_every_pair_is_full(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, k=1)
    alice, bob = annotators(campaign, 2)
    run_to_the_end(campaign, [alice])
    assert Assignment.objects.filter(annotator=alice).count() == 12
    assert next_assignment(campaign, bob, now=NOW) is None


def test_it_refuses_people_who_are_not_annotators(dataset: Dataset, outsider: User) -> None:
    campaign = active_campaign(dataset)
    with pytest.raises(Membership.DoesNotExist):
        next_assignment(campaign, outsider, now=NOW)
