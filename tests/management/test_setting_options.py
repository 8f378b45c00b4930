"""Command-line options built from the settings' declarations: ``create_campaign`` refuses a
value the page and the API refuse, names the option, and prints the declared help and default."""

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from prb_annotate.campaigns.setting_fields import CAMPAIGN, PLAN
from prb_annotate.management.commands.create_campaign import Command
from prb_annotate.management.setting_options import setting_reader
from prb_annotate.models import Campaign, Dataset


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--k", "0", "argument --k: 0 is below 1, the least allowed"),
        ("--k", "51", "argument --k: 51 is above 50, the most allowed"),
        ("--k", "three", "argument --k: 'three' is not a whole number"),
        ("--gold-rate", "1.5", "argument --gold-rate: 1.5 is above 1.0, the most allowed"),
        ("--half-width", "0.6", "argument --half-width: 0.6 is above 0.499, the most allowed"),
        ("--prolific-study-id", "a b", "'a b': Letters, digits, '-' and '_' only."),
        ("--reservation-minutes", "0", "argument --reservation-minutes: 0 is below 1"),
        ("--completion-url", "done-page", "argument --completion-url: 'done-page' is not a URL"),
    ],
)
def test_it_refuses_what_the_declaration_refuses_and_creates_nothing(
    dataset: Dataset, option: str, value: str, message: str
) -> None:
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("create_campaign", "--dataset=demo", "--name=refused", option, value)
    assert not Campaign.objects.filter(name="refused").exists()


def test_it_takes_the_declared_defaults(dataset: Dataset) -> None:
    call_command("create_campaign", "--dataset=demo", "--name=plain", stdout=StringIO())
    campaign = Campaign.objects.get(name="plain")
    assert campaign.annotations_per_pair == CAMPAIGN["annotations_per_pair"].default
    assert campaign.reservation_minutes == CAMPAIGN["reservation_minutes"].default
    assert campaign.seed == CAMPAIGN["seed"].default


def test_its_help_is_the_declarations_help_with_its_default() -> None:
    parser = Command().create_parser("manage.py", "create_campaign")
    text = " ".join(parser.format_help().split())
    declared = str(CAMPAIGN["reservation_minutes"].help).removesuffix(".")
    assert f"{declared} (default: 30)." in text
    # A share written with "%" in the declaration prints as it is written.
    assert " ".join(str(PLAN["half_width"].described).split()) in text
    assert "(default: no limit)" in text


def test_the_reader_checks_length_and_reads_amounts() -> None:
    url = setting_reader(CAMPAIGN["completion_url"])
    assert url("https://example.org/done") == "https://example.org/done"
    with pytest.raises(Exception, match="longer than 1000 characters"):
        url("https://example.org/" + "x" * 1000)
    price = setting_reader(PLAN["price_per_annotation"])
    assert price("0.5") == 0.5
