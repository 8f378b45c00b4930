"""``create_campaign --like N`` with the options that set a campaign's values: those a copy can
take replace the source's, those it cannot are refused naming the option, and none is dropped
without a word. The help names what --like applies."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from prb_annotate.campaigns.copies import campaign_like
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.management.commands.create_campaign import LIKE_CHANGES, Command
from prb_annotate.models import Campaign, CampaignItem, Dataset

QUEUE_OPTIONS = [
    ("--gold-rate", "0.2"),
    ("--quota", "7"),
    ("--reservation-minutes", "12"),
    ("--completion-url", "https://app.example/done?cc=TWO"),
    ("--prolific-study-id", "study-two"),
]


@pytest.fixture
def source(dataset: Dataset) -> Campaign:
    """k = 2, seed 5, one gold item, a quota, a completion URL and a Prolific study."""
    return create_campaign(
        dataset,
        "round one",
        k=2,
        seed=5,
        gold_pair_ids=["p0011"],
        gold_rate=0.1,
        quota_per_annotator=4,
        reservation_minutes=45,
        completion_url="https://app.example/done?cc=ONE",
        prolific_study_id="study-one",
    )


def like(source: Campaign, name: str, *options: str) -> Campaign:
    call_command(
        "create_campaign", "--name", name, "--like", str(source.pk), *options, stdout=StringIO()
    )
    return Campaign.objects.get(name=name)


def test_a_copy_keeps_the_source_values_when_no_option_is_given(source: Campaign) -> None:
    copy = like(source, "again")
    assert copy.annotations_per_pair == 2
    assert copy.seed == 5
    assert copy.gold_rate == 0.1
    assert copy.quota_per_annotator == 4
    assert copy.reservation_minutes == 45
    assert copy.completion_url == "https://app.example/done?cc=ONE"
    assert copy.prolific_study_id == ""  # a new study has a new id


def test_the_options_given_replace_the_source_values(source: Campaign) -> None:
    options = [item for pair in QUEUE_OPTIONS for item in pair]
    copy = like(source, "round two", "--k", "4", "--seed", "9", *options)
    assert copy.annotations_per_pair == 4
    assert copy.seed == 9
    assert copy.gold_rate == 0.2
    assert copy.quota_per_annotator == 7
    assert copy.reservation_minutes == 12
    assert copy.completion_url == "https://app.example/done?cc=TWO"
    assert copy.prolific_study_id == "study-two"
    # The pairs and the gold stay the source's.
    pairs = {
        campaign.pk: set(campaign.items.values_list("pair__external_id", "kind"))
        for campaign in (source, copy)
    }
    assert pairs[copy.pk] == pairs[source.pk]


def test_a_value_equal_to_the_default_still_replaces_the_source_value(source: Campaign) -> None:
    copy = like(source, "back to three", "--k", "3", "--seed", "0", "--reservation-minutes", "30")
    assert (copy.annotations_per_pair, copy.seed, copy.reservation_minutes) == (3, 0, 30)


@pytest.mark.parametrize(("option", "value"), QUEUE_OPTIONS)
def test_an_external_copy_refuses_an_option_of_the_queue(
    source: Campaign, option: str, value: str
) -> None:
    with pytest.raises(CommandError, match=f"^{option}: an external copy has no queue"):
        like(source, "elsewhere", "--external", option, value)
    assert not Campaign.objects.filter(name="elsewhere").exists()


def test_an_external_copy_takes_k_and_the_seed(source: Campaign) -> None:
    copy = like(source, "elsewhere", "--external", "--k", "3", "--seed", "8")
    assert copy.external
    assert (copy.annotations_per_pair, copy.seed) == (3, 8)


def test_it_refuses_a_gold_rate_for_a_copy_without_gold(dataset: Dataset) -> None:
    plain = create_campaign(dataset, "no gold")
    assert not CampaignItem.objects.filter(campaign=plain, kind=CampaignItem.Kind.GOLD).exists()
    with pytest.raises(CommandError, match=f"--gold-rate: campaign {plain.pk} has no gold items"):
        like(plain, "with gold", "--gold-rate", "0.2")
    assert like(plain, "without gold", "--gold-rate", "0").gold_rate == 0.0


def test_it_refuses_the_active_floor_with_like_and_without_active(
    source: Campaign, dataset: Dataset
) -> None:
    with pytest.raises(CommandError, match="drop --active-floor"):
        like(source, "floored", "--active-floor", "0.4")
    with pytest.raises(CommandError, match="--active-floor applies only with --active"):
        call_command("create_campaign", "--dataset=demo", "--name=floored", "--active-floor", "0.4")
    assert not Campaign.objects.filter(name="floored").exists()


def test_a_campaign_without_like_still_takes_the_declared_defaults(dataset: Dataset) -> None:
    call_command("create_campaign", "--dataset=demo", "--name=plain", stdout=StringIO())
    plain = Campaign.objects.get(name="plain")
    assert (plain.annotations_per_pair, plain.seed, plain.gold_rate) == (3, 0, 0.0)
    assert plain.reservation_minutes == 30


def test_campaign_like_takes_changes_and_refuses_the_unknown(source: Campaign) -> None:
    copy = campaign_like(source, "changed", changes={"quality_threshold": 3.0, "seed": 2})
    assert (copy.quality_threshold, copy.seed) == (3.0, 2)
    with pytest.raises(TypeError, match="a copy cannot change: name"):
        campaign_like(source, "renamed", changes={"name": "x"})


def test_the_help_names_the_options_like_applies() -> None:
    parser = Command().create_parser("manage.py", "create_campaign")
    text = " ".join(parser.format_help().split())
    like_help = text.split("--like CAMPAIGN_ID ")[-1].split(" --activate ")[0]
    for option in LIKE_CHANGES:
        assert f"--{option.replace('_', '-')}" in like_help
    assert like_help.endswith("(with --external: --k and --seed only)")
