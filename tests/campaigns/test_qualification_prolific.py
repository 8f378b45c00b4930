"""Prolific's lists: the approval CSV (``participant_id,decision,reason``) and the bulk bonus
CSV (``participant_id,amount`` lines) match their documented columns, list Prolific members
only, follow quality control and the qualification, and download alike from the dashboard's
Prolific page and the API. A study participant removed with their answers left out stays on
the approval list with ``reject``; a participant who only skipped items is not listed."""

import csv
import io
import re
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.urls import reverse
from rest_framework.authtoken.models import Token

from prb_annotate.audit.exclusions import exclude_annotator
from prb_annotate.campaigns import prolific
from prb_annotate.campaigns.annotating import skip
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.joining import StudyIds, join_as_participant
from prb_annotate.campaigns.lifecycle import add_member, create_campaign, set_status
from prb_annotate.campaigns.members import KEEP, LEAVE_OUT, remove_member, return_study
from prb_annotate.models import Campaign, Membership, Participant
from tests.support.campaigns import submit_form
from tests.support.qualification import fail_twice, pass_first, screening_campaign

BONUS_LINE = re.compile(r"[A-Za-z0-9_-]+,[0-9]+\.[0-9]{2}")


def study_participant(campaign: Campaign, pid: str) -> User:
    """A participant who came by the campaign's study link (the join's own service), each from
    a network of their own."""
    ids = StudyIds(pid, campaign.prolific_study_id, f"session-{pid}")
    network = f"198.51.{Participant.objects.count()}.0/24"
    joined = join_as_participant(campaign.invite_token, ids, address=network)
    return joined.membership.user


def rows_by_id(campaign: Campaign) -> dict[str, list[str]]:
    header, *rows = list(csv.reader(io.StringIO(prolific.approvals_csv(campaign))))
    assert header == ["participant_id", "decision", "reason"]
    return {row[0]: row[1:] for row in rows}


def work(campaign, user: User, *, items: int) -> None:
    """Answer ``items`` items, every one as the dataset claims (gold items right)."""
    for _ in range(items):
        assignment = next_assignment(campaign, user)
        assert assignment is not None
        submit_form(assignment, rubric_fit=assignment.chosen_position)


@pytest.fixture
def study(dataset, manager):
    """Four Prolific participants (one passed and worked, one screened out, one excluded by
    the manager, one who never started) and a staff annotator who worked."""
    campaign = screening_campaign(
        dataset,
        gold_pair_ids=["p0011"],
        gold_rate=0.5,
        min_gold_accuracy=0.5,
        bonus_rule={
            "per_item": "0.10",
            "items_beyond": 2,
            "gold_amount": "0.50",
            "gold_min_accuracy": 0.75,
        },
    )
    people = {}
    for name, pid in [
        ("good", "PIDGOOD"),
        ("out", "PIDOUT"),
        ("bad", "PIDBAD"),
        ("idle", "PIDIDLE"),
        ("staff", ""),
    ]:
        people[name] = User.objects.create_user(name)
        add_member(campaign, people[name], participant_id=pid)
    pass_first(campaign, people["good"])
    work(campaign, people["good"], items=4)
    fail_twice(campaign, people["out"])
    pass_first(campaign, people["bad"])
    work(campaign, people["bad"], items=2)
    exclude_annotator(campaign, people["bad"], "copied answers", by=manager)
    pass_first(campaign, people["staff"])
    work(campaign, people["staff"], items=3)
    campaign.refresh_from_db()
    return campaign


def test_it_writes_the_approval_list_in_its_documented_columns(study) -> None:
    text = prolific.approvals_csv(study)
    reader = csv.reader(io.StringIO(text))
    header, *rows = list(reader)
    assert header == ["participant_id", "decision", "reason"]
    assert all(len(row) == 3 for row in rows)
    by_id = {row[0]: row for row in rows}
    assert set(by_id) == {"PIDBAD", "PIDGOOD", "PIDOUT"}
    assert [row[0] for row in rows] == sorted(by_id)
    assert by_id["PIDGOOD"][1] == "approve"
    assert by_id["PIDOUT"][1:] == [
        "screened_out",
        "failed the qualification (0 of 3, then 1 of 3 right)",
    ]
    assert by_id["PIDBAD"][1:] == ["reject", "excluded by a manager: copied answers"]
    assert text.endswith("\n")
    assert "\r" not in text


def test_it_writes_the_bonus_list_as_prolific_takes_it(study) -> None:
    """No header; approved participants with something earned; amounts with two decimals:
    0.10 for each of the two items beyond 2, and 0.50 for gold accuracy of 75% or more."""
    text = prolific.bonuses_csv(study)
    lines = text.splitlines()
    assert all(BONUS_LINE.fullmatch(line) for line in lines), lines
    assert lines == ["PIDGOOD,0.70"]
    (row,) = prolific.bonus_rows(study)
    assert row.amount == Decimal("0.70")
    assert "2 items beyond 2" in row.why
    assert "gold accuracy 100.0%" in row.why


def test_it_refuses_a_bonus_rule_it_cannot_pay(study) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"per_item": "0.105"}, "per_item"),
        ({"per_item": "-1"}, "per_item"),
        ({"per_item": "NaN"}, "per_item"),
        ({"gold_amount": "1.00"}, "gold_min_accuracy"),
        ({"gold_amount": "1.00", "gold_min_accuracy": 1.5}, "gold_min_accuracy"),
        ({"items_beyond": -3}, "items_beyond"),
    ]
    for data, field in cases:
        with pytest.raises(ValidationError) as error:
            prolific.checked_bonus_rule(data)
        assert field in error.value.message_dict, data
    rule = prolific.checked_bonus_rule({"per_item": "0.2"})
    assert rule.per_item == Decimal("0.20")
    assert rule.describe(study) == "0.20 per item beyond 0"


def test_it_downloads_both_lists_from_the_dashboard_and_the_api(study, manager, login) -> None:
    client = login(manager)
    dashboard = client.get(reverse("campaign_detail", args=[study.pk])).content.decode()
    page_url = reverse("campaign_prolific", args=[study.pk])
    assert f'href="{page_url}"' in dashboard
    page = client.get(page_url).content.decode()
    api = Token.objects.create(user=manager)
    for kind, name in (
        ("approvals", "campaign_prolific_approvals"),
        ("bonuses", "campaign_prolific_bonuses"),
    ):
        url = reverse(name, args=[study.pk])
        assert f'href="{url}"' in page
        assert f'href="{url}"' in dashboard
        download = client.get(url)
        assert download["Content-Type"].startswith("text/csv")
        assert f"campaign-{study.pk}-prolific-{kind}.csv" in download["Content-Disposition"]
        from_api = client.get(
            reverse(f"api_{name}", args=[study.pk]), HTTP_AUTHORIZATION=f"Token {api.key}"
        )
        assert from_api.status_code == 200
        assert from_api.content == download.content
    assert 'data-decision="screened_out"' in page


def test_it_sets_the_bonus_rule_on_the_page_and_in_the_api(study, manager, login) -> None:
    client = login(manager)
    saved = client.post(
        reverse("campaign_prolific_bonus_rule", args=[study.pk]),
        {"per_item": "0.25", "items_beyond": "", "gold_amount": "", "gold_min_accuracy": ""},
    )
    assert saved.status_code == 302
    study.refresh_from_db()
    assert prolific.BonusRule.from_json(study.bonus_rule).per_item == Decimal("0.25")
    token = Token.objects.create(user=manager)
    url = reverse("api_campaign_prolific_bonus_rule", args=[study.pk])
    headers = {"HTTP_AUTHORIZATION": f"Token {token.key}"}
    refused = client.put(url, {"gold_amount": "1.00"}, content_type="application/json", **headers)
    assert refused.status_code == 400
    assert "gold_min_accuracy" in refused.json()["errors"]
    put = client.put(
        url,
        {"gold_amount": "1.00", "gold_min_accuracy": 0.9},
        content_type="application/json",
        **headers,
    )
    assert put.status_code == 200
    assert put.json()["text"] == "1.00 for gold accuracy of 90.0% or more"
    assert prolific.bonuses_csv(study) == "PIDGOOD,1.00\n"


def test_it_keeps_the_lists_from_other_managers(study, annotator, login) -> None:
    """Someone who does not manage the campaign gets 404 on the page, the CSVs and the API."""
    client = login(annotator)
    token = Token.objects.create(user=annotator)
    for name in ("campaign_prolific", "campaign_prolific_approvals", "campaign_prolific_bonuses"):
        assert client.get(reverse(name, args=[study.pk])).status_code == 404
    for name in ("api_campaign_prolific_approvals", "api_campaign_prolific_bonuses"):
        response = client.get(
            reverse(name, args=[study.pk]), HTTP_AUTHORIZATION=f"Token {token.key}"
        )
        assert response.status_code == 404


def test_a_participant_removed_with_answers_left_out_is_still_rejected(
    dataset, manager, login
) -> None:
    """The study participants who worked, then were removed: with their answers left out (on
    the dashboard), after a manager's exclusion (kept), and with their answers kept; one
    removed with answers left out before submitting any; one who returned the study."""
    campaign = screening_campaign(
        dataset, bonus_rule={"per_item": "0.10", "items_beyond": 0}, prolific_study_id="study-7"
    )
    people = {
        name: study_participant(campaign, pid)
        for name, pid in [
            ("left", "PIDLEFT"),
            ("earlier", "PIDEARLIER"),
            ("kept", "PIDKEPT"),
            ("early", "PIDEARLY"),
            ("returned", "PIDRETURNED"),
            ("stays", "PIDSTAYS"),
        ]
    }
    for name, user in people.items():
        pass_first(campaign, user)
        if name != "early":
            # One item each: a network's accounts made through the link hold one slot here.
            work(campaign, user, items=1)
    exclude_annotator(campaign, people["earlier"], "copied answers", by=manager)
    before = rows_by_id(campaign)
    assert before["PIDLEFT"] == ["approve", ""]
    assert before["PIDEARLY"] == ["approve", ""]

    client = login(manager)
    removal = reverse("campaign_remove_member", args=[campaign.pk, people["left"].pk])
    said = client.post(removal, {"answers": LEAVE_OUT}, follow=True).content.decode()
    assert f"{people['left'].username} is no longer a member" in said
    assert "left out of the audit" in said
    remove_member(campaign, people["earlier"], KEEP, by=manager)
    remove_member(campaign, people["kept"], KEEP, by=manager)
    remove_member(campaign, people["early"], LEAVE_OUT, by=manager)
    return_study(campaign, people["returned"])
    assert not Membership.objects.filter(
        campaign=campaign, user__in=[u for n, u in people.items() if n != "stays"]
    ).exists()

    rows = rows_by_id(campaign)
    assert rows == {
        "PIDEARLIER": ["reject", "excluded by a manager: copied answers"],
        "PIDLEFT": ["reject", "excluded by a manager: removed from the campaign"],
        "PIDSTAYS": ["approve", ""],
    }
    assert list(rows) == sorted(rows)
    # Rejected, so no bonus; the members' bonuses are as before.
    assert prolific.bonuses_csv(campaign) == "PIDSTAYS,0.10\n"
    page = client.get(reverse("campaign_prolific", args=[campaign.pk])).content.decode()
    assert '<tr data-participant="PIDLEFT" data-decision="reject">' in page
    assert "excluded by a manager: removed from the campaign" in page


def test_a_participant_who_only_skipped_is_not_listed(dataset) -> None:
    """Skips are not answers: a participant who skipped every item offered and submitted none
    is neither approved nor rejected; one who skipped some and submitted one is approved. In a
    campaign with a qualification, its answers are something answered."""
    campaign = create_campaign(dataset, "no screening", k=2, seed=3)
    set_status(campaign, Campaign.Status.ACTIVE)
    people = {name: User.objects.create_user(name) for name in ("skipper", "mixed", "idle")}
    for name, user in people.items():
        add_member(campaign, user, participant_id=f"PID{name.upper()}")
    for _ in range(3):
        offered = next_assignment(campaign, people["skipper"])
        assert offered is not None
        skip(offered.pk, people["skipper"], reason="not my field")
    offered = next_assignment(campaign, people["mixed"])
    assert offered is not None
    skip(offered.pk, people["mixed"])
    work(campaign, people["mixed"], items=1)
    assert rows_by_id(campaign) == {"PIDMIXED": ["approve", ""]}

    screened = screening_campaign(dataset, name="screened and skipped")
    qualified = User.objects.create_user("qualified")
    add_member(screened, qualified, participant_id="PIDQUALIFIED")
    pass_first(screened, qualified)
    offered = next_assignment(screened, qualified)
    assert offered is not None
    skip(offered.pk, qualified)
    assert rows_by_id(screened) == {"PIDQUALIFIED": ["approve", ""]}
