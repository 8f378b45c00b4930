"""Annotations that leave the audit get replacement slots, so that no pair waits forever.

The stuck-pair case end to end: an annotator dropped by gold accuracy, replacement slots, a
fresh annotator offered the pair, the pair decided; and the same for a manager's exclusion and
for the position-bias threshold.
"""

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.utils import timezone

from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.audit.exclusions import (
    exclude_annotator,
    left_out_annotators,
    lift_exclusion,
    request_replacement_annotations,
)
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.progress import campaign_progress
from prb_annotate.models import AnnotatorExclusion, Assignment, Campaign, CampaignItem, Dataset
from tests.conftest import make_pairs
from tests.support.campaigns import active_campaign, annotators, submit_form

NOW = timezone.now()


def answer_everything(campaign: Campaign, user: User, *, wrong_on_gold: bool = False) -> None:
    """Take and submit items until none is left: regular pairs answered as the dataset says
    (validated), gold ones wrongly when asked."""
    while (assignment := next_assignment(campaign, user, now=NOW)) is not None:
        other = "B" if assignment.chosen_position == "A" else "A"
        wrong = wrong_on_gold and assignment.item.kind == CampaignItem.Kind.GOLD
        submit_form(assignment, now=NOW, rubric_fit=other if wrong else assignment.chosen_position)


def regular_item(campaign: Campaign) -> CampaignItem:
    return CampaignItem.objects.get(campaign=campaign, kind=CampaignItem.Kind.REGULAR)


def verdict_of(campaign: Campaign) -> tuple[str, tuple[str, ...]]:
    (verdict,) = campaign_verdicts(campaign).values()
    return verdict.verdict, verdict.reasons


def assert_never_over_target(campaign: Campaign) -> None:
    occupied = Q(assignments__status=Assignment.Status.SUBMITTED) | Q(
        assignments__status=Assignment.Status.RESERVED, assignments__expires_at__gt=NOW
    )
    for item in CampaignItem.objects.filter(
        campaign=campaign, kind=CampaignItem.Kind.REGULAR
    ).annotate(n=Count("assignments", filter=occupied)):
        item.campaign = campaign
        assert item.n <= item.target_annotations()


@pytest.fixture
def one_pair_with_gold(db: None) -> Campaign:
    """Two pairs: p0000 is gold, p0001 the one regular pair; k = 2, gold must be perfect."""
    dataset = Dataset.objects.create(name="stuck")
    make_pairs(dataset, 2)
    return active_campaign(
        dataset, k=2, gold_pair_ids=["p0000"], gold_rate=0.5, min_gold_accuracy=1.0
    )


def test_it_offers_a_fresh_annotator_the_pair_of_one_dropped_by_gold_accuracy(
    one_pair_with_gold: Campaign,
) -> None:
    campaign = one_pair_with_gold
    careless, careful, fresh = annotators(campaign, 3)
    answer_everything(campaign, careless, wrong_on_gold=True)
    answer_everything(campaign, careful)
    item = regular_item(campaign)
    # Both slots taken: careless's answer holds one but no longer counts.
    assert set(item.assignments.values_list("annotator__username", flat=True)) == {
        careless.username,
        careful.username,
    }
    assert left_out_annotators(campaign) == {careless.username: "low_gold_accuracy"}
    assert verdict_of(campaign) == ("undecided", ("too_few_annotations",))
    # Asked for automatically, before an annotator was told that nothing was left.
    item.refresh_from_db()
    assert item.replacement_annotations == 1
    assert campaign_progress(campaign, now=NOW).items_complete == 0
    assert next_assignment(campaign, careless, now=NOW) is None

    answer_everything(campaign, fresh)

    assert set(item.assignments.values_list("annotator__username", flat=True)) == {
        careless.username,
        careful.username,
        fresh.username,
    }
    assert verdict_of(campaign) == ("validated", ())
    assert campaign_progress(campaign, now=NOW).items_complete == 1
    assert_never_over_target(campaign)
    assert request_replacement_annotations(campaign) == 0  # idempotent


def test_it_asks_for_a_replacement_when_a_manager_excludes_an_annotator(
    dataset: Dataset, manager: User
) -> None:
    campaign = active_campaign(dataset, k=2)
    first, second, third = annotators(campaign, 3)
    answer_everything(campaign, first)
    answer_everything(campaign, second)
    assert campaign_progress(campaign, now=NOW).items_complete == 12
    assert next_assignment(campaign, third, now=NOW) is None

    exclude_annotator(campaign, first, "clicked through without reading", by=manager)

    raised = CampaignItem.objects.filter(campaign=campaign, replacement_annotations=1)
    assert raised.count() == 12
    assert {v.verdict for v in campaign_verdicts(campaign).values()} == {"undecided"}
    answer_everything(campaign, third)
    assert {v.verdict for v in campaign_verdicts(campaign).values()} == {"validated"}
    assert_never_over_target(campaign)

    # Lifting brings the answers back and keeps the history; the pairs have one answer more.
    lift_exclusion(campaign, first, by=manager)
    history = AnnotatorExclusion.objects.get(campaign=campaign, annotator=first)
    assert history.lifted_by == manager
    assert history.lifted_at is not None
    assert left_out_annotators(campaign) == {}
    assert {v.n_annotations for v in campaign_verdicts(campaign).values()} == {3}
    assert {v.verdict for v in campaign_verdicts(campaign).values()} == {"validated"}


def test_it_refuses_an_exclusion_without_reason_twice_or_of_a_stranger(
    dataset: Dataset, manager: User, outsider: User
) -> None:
    campaign = active_campaign(dataset, k=2)
    (member,) = annotators(campaign, 1)
    with pytest.raises(ValidationError) as no_reason:
        exclude_annotator(campaign, member, "  ", by=manager)
    assert "reason" in no_reason.value.message_dict
    with pytest.raises(ValidationError) as stranger:
        exclude_annotator(campaign, outsider, "spam", by=manager)
    assert "annotator" in stranger.value.message_dict
    exclude_annotator(campaign, member, "spam", by=manager)
    with pytest.raises(ValidationError) as twice:
        exclude_annotator(campaign, member, "spam again", by=manager)
    assert "already excluded" in twice.value.message_dict["annotator"][0]
    lift_exclusion(campaign, member, by=manager)
    with pytest.raises(ValidationError):
        lift_exclusion(campaign, member, by=manager)
    assert AnnotatorExclusion.objects.filter(campaign=campaign).count() == 1


def test_it_leaves_out_an_annotator_whose_a_share_is_biased_when_the_campaign_asks(
    dataset: Dataset,
) -> None:
    campaign = active_campaign(dataset, k=2)
    biased, fair, third = annotators(campaign, 3)
    # Always "A", whichever side the chosen answer is on: 12 of 12, p = 2 / 4096.
    while (assignment := next_assignment(campaign, biased, now=NOW)) is not None:
        submit_form(assignment, now=NOW, rubric_fit="A")
    answer_everything(campaign, fair)
    assert left_out_annotators(campaign) == {}

    campaign.position_bias_max_p = 0.01
    campaign.save(update_fields=["position_bias_max_p"])

    assert left_out_annotators(campaign) == {biased.username: "position_bias"}
    answer_everything(campaign, third)  # asks for replacements when it runs out
    assert {v.verdict for v in campaign_verdicts(campaign).values()} == {"validated"}
    assert_never_over_target(campaign)
