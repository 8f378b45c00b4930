"""Campaigns: creation with samples and gold items, members and invite links (Prolific too),
status changes, quotas, progress counts and the create_campaign command."""

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from prb_annotate.campaigns.annotating import skip
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.joining import (
    BadJoinParameters,
    StudyIds,
    join_as_participant,
    study_ids,
)
from prb_annotate.campaigns.lifecycle import (
    CampaignSetupError,
    InvalidInvite,
    InviteClosed,
    InviteNeedsLogin,
    add_member,
    create_campaign,
    join_by_invite,
    quota_done,
    set_status,
)
from prb_annotate.campaigns.progress import annotator_progress, campaign_progress
from prb_annotate.models import (
    Assignment,
    Campaign,
    CampaignItem,
    Dataset,
    Membership,
    Participant,
)
from tests.support.campaigns import active_campaign, annotators, submit_form

NOW = timezone.now()


def test_it_creates_a_draft_campaign_over_every_pair(dataset: Dataset, manager: User) -> None:
    campaign = create_campaign(dataset, "all", k=2, created_by=manager, guidelines="Be fair.")
    assert campaign.status == Campaign.Status.DRAFT
    assert campaign.annotations_per_pair == 2
    assert campaign.guidelines == "Be fair."
    assert campaign.created_by == manager
    items = campaign.items.all()
    assert items.count() == 12
    assert sorted(item.order_key for item in items) == list(range(12))
    assert {item.kind for item in items} == {CampaignItem.Kind.REGULAR}


def test_it_samples_reproducibly_and_mixes_gold_in(dataset: Dataset) -> None:
    first = create_campaign(dataset, "a", sample=5, seed=4, gold_pair_ids=["p0000", "p0001"])
    second = create_campaign(dataset, "b", sample=5, seed=4, gold_pair_ids=["p0000", "p0001"])

    def layout(campaign):
        return [
            (item.pair.external_id, item.kind, item.order_key)
            for item in campaign.items.select_related("pair").order_by("order_key")
        ]

    assert layout(first) == layout(second)
    gold = first.items.filter(kind=CampaignItem.Kind.GOLD)
    assert sorted(item.pair.external_id for item in gold) == ["p0000", "p0001"]
    assert gold[0].gold_answers == {"rubric_fit": "chosen", "differentiator": "preference"}
    regular = first.items.filter(kind=CampaignItem.Kind.REGULAR).select_related("pair")
    assert regular.count() == 5
    assert not {"p0000", "p0001"} & {item.pair.external_id for item in regular}


def test_it_takes_gold_answers_from_a_mapping(dataset: Dataset) -> None:
    campaign = create_campaign(
        dataset, "gold", gold_pair_ids={"p0003": {"rubric_fit": "tie", "differentiator": "none"}}
    )
    item = campaign.items.get(kind=CampaignItem.Kind.GOLD)
    assert item.gold_answers == {"rubric_fit": "tie", "differentiator": "none"}


def test_it_explains_what_cannot_be_created(dataset: Dataset) -> None:
    create_campaign(dataset, "taken")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"name": "taken"}, "already exists"),
        ({"k": 0}, "at least 1"),
        ({"gold_rate": 1.5}, "between 0 and 1"),
        ({"sample": 13}, "has 12 pairs"),
        ({"gold_pair_ids": ["p0001", "nope"]}, "nope"),
        ({"gold_pair_ids": {"p0001": {"rubric_fit": "A"}}}, "rubric_fit"),
    ]
    for options, message in cases:
        name = options.pop("name", "new")
        with pytest.raises(CampaignSetupError, match=message):
            create_campaign(dataset, name, **options)
    with pytest.raises(TypeError):
        create_campaign(dataset, "new", colour="blue")
    assert Campaign.objects.count() == 1


def test_it_adds_members_idempotently(dataset: Dataset, annotator: User) -> None:
    campaign = create_campaign(dataset, "c")
    first = add_member(campaign, annotator)
    again = add_member(campaign, annotator, participant_id="P1")
    assert first.pk == again.pk
    assert again.participant_id == "P1"
    promoted = add_member(campaign, annotator, "manager")
    assert promoted.role == "manager"
    assert Membership.objects.count() == 1
    with pytest.raises(CampaignSetupError):
        add_member(campaign, annotator, "owner")


def test_it_joins_by_invite(dataset: Dataset, annotator: User) -> None:
    campaign = active_campaign(dataset)
    membership = join_by_invite(campaign.invite_token, user=annotator)
    assert membership.user == annotator
    assert membership.role == "annotator"
    assert join_by_invite(campaign.invite_token, user=annotator).pk == membership.pk
    for token in ["wrong", "", campaign.invite_token[:-1], "x" * 100]:
        with pytest.raises(InvalidInvite):
            join_by_invite(token, user=annotator)


def test_it_creates_an_account_for_a_prolific_participant(dataset: Dataset) -> None:
    campaign = active_campaign(dataset)
    ids = StudyIds("5f1a2b3c4d5e6f7a8b9c0d1e", "study-9", "s1")
    joined = join_as_participant(campaign.invite_token, ids)
    membership, user = joined.membership, joined.membership.user
    assert user.username == f"prolific-{campaign.pk}-5f1a2b3c4d5e6f7a8b9c0d1e"
    assert not user.has_usable_password()
    assert (membership.participant_id, membership.study_id, membership.session_id) == (
        "5f1a2b3c4d5e6f7a8b9c0d1e",
        "study-9",
        "s1",
    )
    assert joined.resume_key
    # Coming back through the same study link (same three values) is the same participant.
    again = join_as_participant(campaign.invite_token, ids)
    assert again.membership.pk == membership.pk
    assert next_assignment(campaign, user, now=NOW) is not None


def test_it_refuses_invites_it_cannot_honour(dataset: Dataset, manager: User) -> None:
    campaign = active_campaign(dataset)
    with pytest.raises(InviteNeedsLogin):
        join_by_invite(campaign.invite_token, user=None)
    with pytest.raises(BadJoinParameters):
        study_ids({"PROLIFIC_PID": "a b/c"})
    # A real account that happens to carry a participant's name is never opened by a link.
    User.objects.create_user(f"prolific-{campaign.pk}-manager", password="secret-pass-1")
    with pytest.raises(InvalidInvite):
        join_as_participant(campaign.invite_token, StudyIds("manager", "s", "x"))
    assert not Participant.objects.exists()
    set_status(campaign, "closed")
    with pytest.raises(InviteClosed):
        join_by_invite(campaign.invite_token, user=manager)


def test_it_keeps_a_managers_role_when_they_follow_the_invite(
    dataset: Dataset, annotator: User
) -> None:
    campaign = active_campaign(dataset)
    add_member(campaign, annotator, "manager")
    membership = join_by_invite(campaign.invite_token, user=annotator)
    assert membership.role == "manager"


def test_it_allows_only_valid_status_changes(dataset: Dataset) -> None:
    campaign = create_campaign(dataset, "c")
    allowed = [("active", "active"), ("paused", "paused"), ("active", "active")]
    for target, expected in allowed:
        assert set_status(campaign, target).status == expected
    assert set_status(campaign, "active").status == "active"  # same status: no change
    with pytest.raises(CampaignSetupError):
        set_status(campaign, "draft")
    with pytest.raises(CampaignSetupError):
        set_status(campaign, "archived")
    set_status(campaign, "closed")
    for target in ["active", "paused", "draft"]:
        with pytest.raises(CampaignSetupError):
            set_status(campaign, target)
    campaign.refresh_from_db()
    assert campaign.status == "closed"


def test_it_tells_when_the_quota_is_done(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, quota_per_annotator=2)
    (alice,) = annotators(campaign, 1)
    for expected in [(0, 2), (1, 2)]:
        assert annotator_progress(campaign, alice) == expected
        assert not quota_done(campaign, alice)
        assignment = next_assignment(campaign, alice, now=NOW)
        assert assignment is not None
        submit_form(assignment, now=NOW)
    assert annotator_progress(campaign, alice) == (2, 2)
    assert quota_done(campaign, alice)
    unlimited = active_campaign(dataset, name="open")
    assert not quota_done(unlimited, alice)
    assert annotator_progress(unlimited, alice) == (0, None)


def test_it_reports_progress_from_the_rows(dataset: Dataset) -> None:
    campaign = active_campaign(
        dataset,
        k=2,
        gold_pair_ids={"p0000": {"rubric_fit": "chosen"}, "p0001": {"rubric_fit": "tie"}},
    )
    alice, bob = annotators(campaign, 2)
    gold = {item.pk: item for item in campaign.items.filter(kind=CampaignItem.Kind.GOLD)}
    # Alice: one regular pair (12 s) and both gold pairs, answering "A" every time.
    first = next_assignment(campaign, alice, now=NOW)
    assert first is not None
    assert first.item_id not in gold
    submit_form(first, now=NOW, time_on_task_ms="12000")
    for index, item in enumerate(gold.values()):
        row = Assignment.objects.create(
            campaign=campaign,
            item=item,
            annotator=alice,
            chosen_position="A",
            reserved_at=NOW,
            expires_at=NOW + timedelta(minutes=30),
        )
        submit_form(row, now=NOW, time_on_task_ms=str(20000 + 10000 * index))
    # Bob completes Alice's pair, then skips one and holds another.
    second = next_assignment(campaign, bob, now=NOW)
    assert second is not None
    assert second.item_id == first.item_id
    submit_form(second, now=NOW)
    skipped = next_assignment(campaign, bob, now=NOW)
    assert skipped is not None
    skip(skipped.pk, bob, reason="")
    assert next_assignment(campaign, bob, now=NOW) is not None

    progress = campaign_progress(campaign, now=NOW)
    assert progress.items_total == 10
    assert progress.gold_items == 2
    assert (progress.items_complete, progress.items_in_progress) == (1, 1)
    assert progress.items_untouched == 8
    assert progress.annotations_submitted == 4
    assert progress.live_reservations == 1
    rows = {row.username: row for row in progress.annotators}
    assert (rows["annotator00"].submitted, rows["annotator00"].skipped) == (3, 0)
    assert rows["annotator00"].median_seconds == 20.0
    assert (rows["annotator00"].gold_scored, rows["annotator00"].gold_correct) == (2, 1)
    assert rows["annotator00"].gold_accuracy == 0.5
    assert (rows["annotator01"].submitted, rows["annotator01"].skipped) == (1, 1)
    assert rows["annotator01"].reserved
    assert rows["annotator01"].gold_accuracy is None
    # Once the reservation lapses, the pair counts as untouched again.
    later = campaign_progress(campaign, now=NOW + timedelta(hours=1))
    assert (later.items_in_progress, later.items_untouched, later.live_reservations) == (0, 9, 0)


def test_it_creates_a_campaign_from_the_command_line(dataset: Dataset, annotator: User) -> None:
    out = StringIO()
    call_command(
        "create_campaign",
        "--dataset=demo",
        "--name=cli",
        "--k=2",
        "--sample=6",
        "--seed=3",
        "--gold-rate=0.2",
        "--gold-ids=p0000,p0001",
        "--annotators=alice",
        "--quota=4",
        "--reservation-minutes=15",
        "--completion-url=https://app.prolific.com/submissions/complete?cc=ABC",
        "--activate",
        stdout=out,
    )
    campaign = Campaign.objects.get(name="cli")
    text = out.getvalue()
    assert f"campaign {campaign.pk}" in text
    assert f"/join/{campaign.invite_token}/" in text
    assert campaign.status == "active"
    assert campaign.annotations_per_pair == 2
    assert (campaign.quota_per_annotator, campaign.reservation_minutes) == (4, 15)
    assert campaign.gold_rate == 0.2
    assert campaign.seed == 3
    assert campaign.items.count() == 8
    assert Membership.objects.filter(campaign=campaign, user=annotator).exists()
    with pytest.raises(CommandError, match="no dataset"):
        call_command("create_campaign", "--dataset=missing", "--name=x", stdout=StringIO())
    with pytest.raises(CommandError, match="unknown users"):
        call_command(
            "create_campaign", "--dataset=demo", "--name=y", "--annotators=zed", stdout=StringIO()
        )
    with pytest.raises(CommandError, match="already exists"):
        call_command("create_campaign", "--dataset=demo", "--name=cli", stdout=StringIO())
