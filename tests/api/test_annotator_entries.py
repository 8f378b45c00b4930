"""``POST /api/campaigns/{id}/annotators/`` takes a structured list entry by entry: each
username is one username, never split, skipped as a comment or taken for a CSV header; a bad
one refuses the whole list with 400 naming the entry's index and field. Problems of ``text``
are reported under ``text``."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from prb_annotate.campaigns.accounts import AnnotatorListError, entries_from_rows
from prb_annotate.models import Campaign, Dataset
from tests.support.campaigns import active_campaign


@pytest.fixture
def campaign(dataset: Dataset) -> Campaign:
    return active_campaign(dataset)


@pytest.fixture
def client(manager: User, login: Any) -> Client:
    return login(manager)


def post(client: Client, campaign: Campaign, body: dict[str, Any]) -> Any:
    return client.post(
        f"/api/campaigns/{campaign.pk}/annotators/", body, content_type="application/json"
    )


def usernames() -> set[str]:
    return set(User.objects.values_list("username", flat=True))


@pytest.mark.parametrize("bad", ["al,bo", "al bo", "#hid", "al;bo"])
def test_a_username_is_never_split_or_skipped(client: Client, campaign: Campaign, bad: str) -> None:
    before = usernames()
    answer = post(client, campaign, {"annotators": [{"username": "cleo"}, {"username": bad}]})

    assert answer.status_code == 400
    errors = answer.json()["errors"]
    assert list(errors) == ["annotators.1.username"]
    assert repr(bad) in errors["annotators.1.username"][0]
    # All or nothing: the good entry made no account either.
    assert usernames() == before


def test_a_first_entry_named_username_is_an_entry_not_a_header(
    client: Client, campaign: Campaign
) -> None:
    answer = post(
        client, campaign, {"annotators": [{"username": "username"}, {"username": "cleo"}]}
    )

    assert answer.status_code == 201
    assert [row["username"] for row in answer.json()] == ["username", "cleo"]
    assert {"username", "cleo"} <= usernames()


def test_a_bad_email_names_its_entry_and_field(client: Client, campaign: Campaign) -> None:
    answer = post(
        client,
        campaign,
        {"annotators": [{"username": "cleo"}, {"username": "dina", "email": "not-an-address"}]},
    )

    assert answer.status_code == 400
    assert answer.json()["errors"] == {"annotators.1.email": ["Enter a valid email address."]}
    assert "cleo" not in usernames()


def test_entry_level_and_account_level_problems_are_placed_alike(
    client: Client, campaign: Campaign
) -> None:
    answer = post(client, campaign, {"annotators": [{"username": "cleo"}, {"username": "CLEO"}]})
    assert answer.status_code == 400
    assert answer.json()["errors"] == {
        "annotators.1.username": ["CLEO is listed already (entry 0)"]
    }
    reserved = post(
        client, campaign, {"annotators": [{"username": "cleo"}, {"username": "prolific-x"}]}
    )
    assert reserved.status_code == 400
    assert list(reserved.json()["errors"]) == ["annotators.1.username"]
    assert (
        "kept for the app's own accounts" in reserved.json()["errors"]["annotators.1.username"][0]
    )
    assert "cleo" not in usernames()


def test_problems_of_text_are_reported_under_text(client: Client, campaign: Campaign) -> None:
    answer = post(client, campaign, {"text": "oscar\nbad/name"})
    assert answer.status_code == 400
    errors = answer.json()["errors"]
    assert list(errors) == ["text"]
    assert errors["text"][0].startswith("line 2: username 'bad/name'")
    reserved = post(client, campaign, {"text": "oscar\nprolific-x"})
    assert list(reserved.json()["errors"]) == ["text"]
    assert not User.objects.filter(username="oscar").exists()


def test_text_is_still_read_as_the_page_reads_it(client: Client, campaign: Campaign) -> None:
    answer = post(client, campaign, {"text": "# a comment\npia, quin pia@example.org"})
    assert answer.status_code == 201
    assert [row["username"] for row in answer.json()] == ["pia", "quin"]


def test_the_service_takes_rows_as_entries() -> None:
    entries = entries_from_rows([("username", ""), ("cleo", "cleo@example.org")])
    assert [(entry.username, entry.email, entry.line) for entry in entries] == [
        ("username", "", 0),
        ("cleo", "cleo@example.org", 1),
    ]
    with pytest.raises(AnnotatorListError) as refused:
        entries_from_rows([("al,bo", ""), ("#hid", "x")])
    located = [(problem.line, problem.field) for problem in refused.value.located]
    assert located == [(0, "username"), (1, "username"), (1, "email")]


def test_text_with_a_lone_carriage_return_reads_as_lines() -> None:
    """Any line ending separates names (a lone "\\r" made the CSV reader raise: a 500)."""
    from prb_annotate.campaigns.accounts import parse_annotators

    entries = parse_annotators("a\nb\rc\u0085d\r\ne")
    assert [entry.username for entry in entries][:2] == ["a", "b"]
    assert "e" in [entry.username for entry in entries]
