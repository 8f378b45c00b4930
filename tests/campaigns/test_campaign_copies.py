"""``create_campaign --like N``: a campaign set up like another one (pairs, gold, practice and
qualification, question set, thresholds and settings), as a queue campaign or an external one."""

import pytest
from django.core.management import CommandError, call_command

from prb_annotate.campaigns.copies import campaign_like
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.management.commands.create_campaign import run
from prb_annotate.models import Campaign, CampaignItem, Dataset, QualificationItem
from tests.support.qualification import screening_campaign


def items(campaign: Campaign, kind: str) -> dict[str, dict | None]:
    rows = campaign.items.filter(kind=kind).select_related("pair")
    return {item.pair.external_id: item.gold_answers for item in rows}


def screening(campaign: Campaign) -> list[tuple[str, str, dict, dict]]:
    rows = QualificationItem.objects.filter(campaign=campaign).select_related("pair")
    return [
        (row.phase, row.pair.external_id, row.expected_answers, row.explanations)
        for row in rows.order_by("phase", "position")
    ]


@pytest.fixture
def original(dataset: Dataset) -> Campaign:
    campaign = screening_campaign(
        dataset,
        name="round one",
        quality_threshold=3.5,
        consent_text="I agree.",
        quota_per_annotator=4,
        reading_check=True,
    )
    gold = {"p0005": {"rubric_fit": "rejected", "differentiator": "quality"}}
    CampaignItem.objects.filter(campaign=campaign, pair__external_id="p0005").update(
        kind=CampaignItem.Kind.GOLD, gold_answers=gold["p0005"]
    )
    CampaignItem.objects.filter(campaign=campaign, pair__external_id="p0011").delete()
    return campaign


def test_it_copies_the_pairs_gold_screening_and_settings(original: Campaign) -> None:
    copy = run({"name": "round two", "like": original.pk})
    assert copy.dataset_id == original.dataset_id
    assert copy.status == Campaign.Status.DRAFT
    assert items(copy, "regular") == items(original, "regular")
    assert "p0011" not in items(copy, "regular")
    assert items(copy, "gold") == items(original, "gold")
    assert screening(copy) == screening(original)
    for setting in ("quality_threshold", "consent_text", "quota_per_annotator", "reading_check"):
        with_setting = getattr(copy, setting)
        assert with_setting == getattr(original, setting), setting
    assert copy.qualification_rule == original.qualification_rule
    assert copy.annotations_per_pair == original.annotations_per_pair
    assert copy.invite_token != original.invite_token


def test_an_external_copy_takes_the_pairs_and_the_verdict_rule_only(original: Campaign) -> None:
    copy = run({"name": "collected elsewhere", "like": original.pk, "external": True})
    assert copy.external
    assert copy.status == Campaign.Status.CLOSED
    assert items(copy, "regular") == items(original, "regular")
    assert items(copy, "gold") == {}
    assert screening(copy) == []
    assert copy.quality_threshold == original.quality_threshold
    assert copy.consent_text == ""


def test_it_refuses_what_would_contradict_the_copy(original: Campaign, dataset: Dataset) -> None:
    with pytest.raises(CommandError, match="no campaign with id 999"):
        run({"name": "x", "like": 999})
    with pytest.raises(CommandError, match="drop --sample"):
        run({"name": "x", "like": original.pk, "sample": 3})
    with pytest.raises(CommandError, match="not 'other'"):
        run({"name": "x", "like": original.pk, "dataset": "other"})
    with pytest.raises(CommandError, match="already exists"):
        run({"name": original.name, "like": original.pk})
    assert Campaign.objects.count() == 1


def test_the_command_prints_the_copy_and_can_start_it(original: Campaign, capsys) -> None:
    call_command("create_campaign", "--name", "again", "--like", str(original.pk), "--activate")
    copy = Campaign.objects.get(name="again")
    assert copy.status == Campaign.Status.ACTIVE
    assert f"campaign {copy.pk}: again (active)" in capsys.readouterr().out


def test_a_copy_of_a_copy_is_the_same_campaign(dataset: Dataset) -> None:
    first = create_campaign(dataset, "sampled", k=2, sample=5, seed=3)
    second = campaign_like(first, "second")
    third = campaign_like(second, "third")
    assert items(third, "regular") == items(first, "regular")
    assert len(items(third, "regular")) == 5
