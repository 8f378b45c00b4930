"""Replacement slots a manager can see, withdrawn when their reason is lifted, and none on a
closed campaign (where an exclusion changes the audit only and the dashboard offers to reopen
it). Runs on SQLite and PostgreSQL alike (``DATABASE_URL``)."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.audit.exclusions import (
    exclude_annotator,
    lift_exclusion,
    pairs_short_of_answers,
    withdraw_unneeded_replacements,
)
from prb_annotate.audit.quality import replacements_after_lift
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import (
    CampaignSetupError,
    reopen_for_replacements,
    set_status,
)
from prb_annotate.campaigns.progress import campaign_progress
from prb_annotate.models import Campaign, CampaignItem, Dataset
from tests.conftest import make_pairs
from tests.support.campaigns import active_campaign, annotators, submit_form

NOW = timezone.now()


def answer(campaign: Campaign, user: User, *, limit: int | None = None) -> int:
    """Take and submit items (as the dataset says: validated) until none is left or ``limit``
    are done; returns how many were submitted."""
    done = 0
    while limit is None or done < limit:
        assignment = next_assignment(campaign, user, now=NOW)
        if assignment is None:
            break
        submit_form(assignment, now=NOW, rubric_fit=assignment.chosen_position)
        done += 1
    return done


def slots(campaign: Campaign) -> dict[str, int]:
    return dict(
        CampaignItem.objects.filter(campaign=campaign).values_list(
            "pair__external_id", "replacement_annotations"
        )
    )


def verdict_counts(campaign: Campaign) -> dict[str, int]:
    counts: dict[str, int] = {}
    for verdict in campaign_verdicts(campaign).values():
        counts[verdict.verdict] = counts.get(verdict.verdict, 0) + 1
    return counts


@pytest.fixture
def four_pairs_answered(db: None) -> tuple[Campaign, list[User]]:
    """k = 2 over four pairs, both answers in from the first two of three annotators."""
    dataset = Dataset.objects.create(name="four")
    make_pairs(dataset, 4)
    campaign = active_campaign(dataset, k=2)
    people = annotators(campaign, 3)
    answer(campaign, people[0])
    answer(campaign, people[1])
    assert campaign_progress(campaign, now=NOW).items_complete == 4
    return campaign, people


def test_it_counts_open_and_filled_slots_and_withdraws_the_unfilled_ones_on_lifting(
    four_pairs_answered, manager
) -> None:
    """An exclusion opens one slot per pair; another annotator fills two; bringing the
    annotator back withdraws the two nobody filled and keeps the filled ones, so the
    campaign is complete again and the audit counts every answer."""
    campaign, (first, _, third) = four_pairs_answered
    exclude_annotator(campaign, first, "did not read", by=manager)
    progress = campaign_progress(campaign, now=NOW)
    assert (progress.replacement_slots_open, progress.replacement_slots_filled) == (4, 0)
    assert (progress.items_complete, progress.items_in_progress) == (0, 4)
    assert pairs_short_of_answers(campaign) == 4

    assert answer(campaign, third, limit=2) == 2
    progress = campaign_progress(campaign, now=NOW)
    assert (progress.replacement_slots_open, progress.replacement_slots_filled) == (2, 2)
    assert pairs_short_of_answers(campaign) == 2

    lift_exclusion(campaign, first, by=manager)
    progress = campaign_progress(campaign, now=NOW)
    assert (progress.replacement_slots_open, progress.replacement_slots_filled) == (0, 2)
    assert (progress.items_complete, progress.items_in_progress) == (4, 0)
    assert sorted(slots(campaign).values()) == [0, 0, 1, 1]
    assert verdict_counts(campaign) == {"validated": 4}
    # Nothing is left for the third annotator: the withdrawn slots are gone.
    assert next_assignment(campaign, third, now=NOW) is None


def test_it_keeps_a_slot_someone_is_annotating_until_their_reservation_lapses(
    four_pairs_answered, manager
) -> None:
    """Withdrawing never goes below the occupied slots: a replacement in someone's hands stays
    (the item never has more occupied slots than its target), and goes once it lapses."""
    campaign, (first, _, third) = four_pairs_answered
    exclude_annotator(campaign, first, "did not read", by=manager)
    held = next_assignment(campaign, third, now=NOW)
    assert held is not None
    lift_exclusion(campaign, first, by=manager)
    assert slots(campaign)[held.item.pair.external_id] == 1
    assert sum(slots(campaign).values()) == 1
    assert campaign_progress(campaign, now=NOW).replacement_slots_open == 1

    later = NOW + timedelta(minutes=campaign.reservation_minutes + 1)
    assert withdraw_unneeded_replacements(campaign, now=later) == 1
    assert sum(slots(campaign).values()) == 0


def test_it_withdraws_the_slots_a_threshold_asked_for_when_it_is_cleared(
    db: None, manager, login
) -> None:
    """A gold minimum leaves an annotator out and opens slots; clearing it on the settings
    page withdraws them."""
    dataset = Dataset.objects.create(name="gold")
    make_pairs(dataset, 3)
    campaign = active_campaign(
        dataset, k=2, gold_pair_ids=["p0000"], gold_rate=0.5, min_gold_accuracy=1.0
    )
    careless, careful, _ = annotators(campaign, 3)
    while (assignment := next_assignment(campaign, careless, now=NOW)) is not None:
        wrong = "B" if assignment.chosen_position == "A" else "A"
        is_gold = assignment.item.kind == CampaignItem.Kind.GOLD
        submit_form(
            assignment, now=NOW, rubric_fit=wrong if is_gold else assignment.chosen_position
        )
    answer(campaign, careful)
    assert campaign_progress(campaign, now=NOW).replacement_slots_open == 2

    page = login(manager).post(
        reverse("campaign_settings", args=[campaign.pk]),
        {**settings_form(campaign), "min_gold_accuracy": ""},
        follow=True,
    )
    assert "Unfilled replacement slots withdrawn from 2 pairs." in page.content.decode()
    campaign.refresh_from_db()
    assert campaign.min_gold_accuracy is None
    assert campaign_progress(campaign, now=NOW).replacement_slots_open == 0


def settings_form(campaign: Campaign) -> dict[str, str]:
    """The settings page's fields as they are now, as the browser posts them."""
    values = {
        "name": campaign.name,
        "guidelines": campaign.guidelines,
        "annotations_per_pair": str(campaign.annotations_per_pair),
        "quota_per_annotator": str(campaign.quota_per_annotator or ""),
        "reservation_minutes": str(campaign.reservation_minutes),
        "first_reservation_minutes": str(campaign.first_reservation_minutes),
        "completion_url": campaign.completion_url,
        "quality_threshold": str(campaign.quality_threshold),
        "majority_threshold": str(campaign.majority_threshold),
        "min_gold_accuracy": ""
        if campaign.min_gold_accuracy is None
        else str(campaign.min_gold_accuracy),
        "position_bias_max_p": ""
        if campaign.position_bias_max_p is None
        else str(campaign.position_bias_max_p),
        "fast_answer_seconds": str(campaign.fast_answer_seconds),
    }
    for flag in ("show_timer", "study_link_enabled", "signup_link_enabled"):
        if getattr(campaign, flag):
            values[flag] = "on"
    return values


def test_it_changes_only_the_audit_when_an_annotator_is_excluded_on_a_closed_campaign(
    four_pairs_answered, manager, login
) -> None:
    """No slot that nobody could fill: the progress stays, the audit loses the answers, the
    dashboard says how many pairs are left undecided and offers to reopen the campaign;
    bringing the annotator back restores the audit and changes nothing else."""
    campaign, (first, _, _) = four_pairs_answered
    set_status(campaign, Campaign.Status.CLOSED)
    client = login(manager)
    client.post(
        reverse("campaign_exclude", args=[campaign.pk]),
        {"annotator": first.pk, "reason": "did not read"},
    )
    assert sum(slots(campaign).values()) == 0
    progress = campaign_progress(campaign, now=NOW)
    assert (progress.items_complete, progress.replacement_slots_open) == (4, 0)
    assert verdict_counts(campaign) == {"undecided": 4}

    page = client.get(reverse("campaign_detail", args=[campaign.pk]))
    assert page.context["pairs_short"] == 4
    html = page.content.decode()
    assert "4 pairs left without enough answers by exclusions." in html
    assert reverse("campaign_reopen", args=[campaign.pk]) in html
    api = client.get(f"/api/campaigns/{campaign.pk}/progress/").json()
    assert (api["pairs_short_of_answers"], api["replacement_slots_open"]) == (4, 0)

    lift_exclusion(campaign, first, by=manager)
    assert verdict_counts(campaign) == {"validated": 4}
    assert campaign_progress(campaign, now=NOW).items_complete == 4
    assert (
        "left undecided"
        not in client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    )


def test_it_reopens_a_closed_campaign_for_replacements_on_request(
    four_pairs_answered, manager, login
) -> None:
    """The explicit action: the campaign becomes active, the short pairs get their slots, a
    third annotator fills them and the audit decides every pair again."""
    campaign, (first, _, third) = four_pairs_answered
    set_status(campaign, Campaign.Status.CLOSED)
    with pytest.raises(CampaignSetupError, match="no pair lacks answers"):
        reopen_for_replacements(campaign)
    exclude_annotator(campaign, first, "did not read", by=manager)
    assert next_assignment(campaign, third, now=NOW) is None

    response = login(manager).post(reverse("campaign_reopen", args=[campaign.pk]), follow=True)
    assert "4 pairs got replacement slots" in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.ACTIVE
    assert campaign_progress(campaign, now=NOW).replacement_slots_open == 4
    assert answer(campaign, third) == 4
    assert verdict_counts(campaign) == {"validated": 4}
    with pytest.raises(CampaignSetupError, match="only a closed campaign"):
        reopen_for_replacements(campaign)


def test_it_shows_the_slots_on_the_dashboard_and_one_count_on_the_pair_page(
    four_pairs_answered, manager, login
) -> None:
    """The tile counts open and filled slots; the pair page's header and its rule table give
    the same counted-of-required figure."""
    campaign, (first, _, _) = four_pairs_answered
    client = login(manager)
    response = client.post(
        reverse("campaign_exclude", args=[campaign.pk]),
        {"annotator": first.pk, "reason": "did not read"},
        follow=True,
    )
    html = response.content.decode()
    assert "4 replacement slots are open" in html
    assert '<span id="replacement-slots-open">4</span>' in html
    assert '<span id="replacement-slots-filled">0</span>' in html

    item = CampaignItem.objects.filter(campaign=campaign).first()
    assert item is not None
    page = client.get(reverse("campaign_pair", args=[campaign.pk, item.pair_id]))
    text = page.content.decode()
    assert '<span id="annotation-count">1 of 2 annotations required</span>' in text
    assert "1 more left out of the audit" in text
    (enough,) = [check for check in page.context["checks"] if check.name == "annotations"]
    assert enough.detail == "1 of 2 required"


def test_it_lowers_a_replacement_count_to_what_is_needed_or_taken() -> None:
    """The pure rule: item 1 needs none and has none taken (0); item 2 still needs one
    (stays); item 3 has two taken of three (2); item 4 never rises here."""
    current = {1: 1, 2: 1, 3: 3, 4: 0}
    still_needed = {2: 1, 4: 2}
    taken = {3: 2}
    assert replacements_after_lift(current, still_needed, taken) == {1: 0, 3: 2}
