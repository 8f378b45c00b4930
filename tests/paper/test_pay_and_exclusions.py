"""The methods paragraph states what participants were paid (only when the campaign's pay is
set, in full) and how many verdicts leaving annotators out changed, read back and checked
against the audit computed with and without the excluded annotators' answers."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from prb_annotate.audit.campaign_audit import CampaignAudit, campaign_audit
from prb_annotate.audit.exclusions import exclude_annotator
from prb_annotate.audit.rule import (
    EXCLUDED,
    UNDECIDED,
    VALIDATED,
    PairVerdict,
    apply_adjudications,
    exclusion_effect,
    pair_verdicts,
)
from prb_annotate.campaigns.lifecycle import CampaignSetupError, create_campaign
from prb_annotate.datasets.importing import import_path
from prb_annotate.management.commands.demo_setup import DEMO_FIXTURE
from prb_annotate.models import Campaign
from prb_annotate.paper.inputs import paper_numbers
from tests.paper.test_methods_truth import text_of


def verdict(pair_id: int, value: str) -> PairVerdict:
    return PairVerdict(pair_id, f"p{pair_id}", "c", value, (), 3)


def test_the_effect_counts_each_pair_whose_verdict_moved() -> None:
    """Four pairs. Everyone's answers: validated, validated, excluded, undecided; without the
    excluded annotators: validated, undecided, validated, undecided. Two pairs moved, one
    each way; the unchanged ones are not counted."""
    everyone = {1: VALIDATED, 2: VALIDATED, 3: EXCLUDED, 4: UNDECIDED}
    audited = {1: VALIDATED, 2: UNDECIDED, 3: VALIDATED, 4: UNDECIDED}
    effect = exclusion_effect(
        {k: verdict(k, v) for k, v in audited.items()},
        {k: verdict(k, v) for k, v in everyone.items()},
    )
    assert effect == {
        "pairs": 4,
        "changed": 2,
        "changes": [
            {"from": VALIDATED, "to": UNDECIDED, "pairs": 1},
            {"from": EXCLUDED, "to": VALIDATED, "pairs": 1},
        ],
    }
    unchanged = exclusion_effect(
        {k: verdict(k, v) for k, v in everyone.items()},
        {k: verdict(k, v) for k, v in everyone.items()},
    )
    assert unchanged == {"pairs": 4, "changed": 0, "changes": []}


def moved_verdicts(campaign: Campaign) -> tuple[int, dict[tuple[str, str], int]]:
    """Worked out here from the rule itself: the verdicts with the audit's left-out annotators
    and with nobody left out, pair by pair."""
    audit = CampaignAudit(campaign)
    without = audit.verdicts
    everyone = apply_adjudications(
        pair_verdicts(audit.answers, audit.thresholds, items=audit.items), audit.adjudications
    )
    moves: dict[tuple[str, str], int] = {}
    for pair_id, kept in without.items():
        before = everyone[pair_id].verdict
        if before != kept.verdict:
            moves[before, kept.verdict] = moves.get((before, kept.verdict), 0) + 1
    return len(without), moves


def expected_sentence(pairs: int, moves: dict[tuple[str, str], int]) -> str:
    changed = sum(moves.values())
    if not changed:
        return "Leaving their answers out changed no pair's verdict."
    order = [VALIDATED, EXCLUDED, UNDECIDED]
    listed = "; ".join(
        f"{moves[key]} from {key[0]} to {key[1]}"
        for key in sorted(moves, key=lambda key: (order.index(key[0]), order.index(key[1])))
    )
    noun = "verdict" if changed == 1 else "verdicts"
    return (
        f"Leaving their answers out changed the {noun} of {changed} of the {pairs} pairs "
        f"({listed})."
    )


def test_the_paragraph_says_how_many_verdicts_the_exclusions_changed(
    finished: Campaign, manager: User
) -> None:
    """The demo leaves one annotator out for gold accuracy; a manager then excludes another.
    Each time the sentence gives the pairs whose verdict moved, as the rule gives them with
    and without the left-out annotators' answers, and the report's counts are the audit's."""
    report = campaign_audit(finished, resamples=0)
    assert report["left_out"]
    pairs, moves = moved_verdicts(finished)
    effect = report["exclusion_effect"]
    assert effect["changed"] == sum(moves.values())
    assert effect["pairs"] == pairs == report["counts"]["pairs"]
    assert expected_sentence(pairs, moves) in text_of(paper_numbers(finished, report))

    counted = {row["annotator"] for row in report["annotators"]} - set(
        report["excluded_annotators"]
    )
    busiest = max(
        counted,
        key=lambda name: next(
            r["annotations"] for r in report["annotators"] if r["annotator"] == name
        ),
    )
    exclude_annotator(finished, User.objects.get(username=busiest), "answers at random", by=manager)
    report = campaign_audit(finished, resamples=0)
    assert len(report["left_out"]) == 2
    pairs, moves = moved_verdicts(finished)
    assert sum(moves.values()) > 0  # the busiest annotator's answers decide some pairs
    assert report["exclusion_effect"]["changed"] == sum(moves.values())
    assert expected_sentence(pairs, moves) in text_of(paper_numbers(finished, report))


def test_nobody_left_out_says_nothing_of_exclusions(db: None, manager: User) -> None:
    dataset = import_path(DEMO_FIXTURE, "prb-demo").dataset
    campaign = create_campaign(dataset, "nobody out", k=3, created_by=manager)
    report = campaign_audit(campaign, resamples=0)
    assert "exclusion_effect" not in report
    assert "Leaving their answers out" not in text_of(paper_numbers(campaign, report))


def test_the_paragraph_states_the_pay_only_when_it_is_set(finished: Campaign) -> None:
    report = campaign_audit(finished, resamples=0)
    numbers = paper_numbers(finished, report)
    assert numbers["study"]["pay"] is None
    assert "paid" not in text_of(numbers)
    finished.pay_amount, finished.pay_currency, finished.pay_per = 9.5, "GBP", "hour"
    finished.save()
    finished.refresh_from_db()
    numbers = paper_numbers(finished, report)
    assert numbers["study"]["pay"] == {"amount": "9.50", "currency": "GBP", "per": "hour"}
    assert "Participants were paid 9.50 GBP per hour." in text_of(numbers)
    finished.pay_amount, finished.pay_per = 2, "study"
    finished.save()
    finished.refresh_from_db()
    assert "Participants were paid 2.00 GBP for the study." in text_of(
        paper_numbers(finished, report)
    )


def test_the_pay_is_set_in_full_or_not_at_all(
    db: None, dataset: Any, manager: User, login: Any
) -> None:
    """The settings page, the API and creation refuse an amount without its currency and what
    it is for, naming the missing fields; all three together are kept."""
    campaign = create_campaign(dataset, "paid study", k=3, created_by=manager)
    client = login(manager)
    url = f"/api/campaigns/{campaign.pk}/"
    refused = client.patch(url, {"pay_amount": "9.00"}, content_type="application/json")
    assert refused.status_code == 400
    assert set(refused.json()["errors"]) == {"pay_currency", "pay_per"}
    assert "pay" in refused.json()["errors"]["pay_per"][0]
    wrong = client.patch(
        url,
        {"pay_amount": "9.00", "pay_currency": "gbp", "pay_per": "day"},
        content_type="application/json",
    )
    assert set(wrong.json()["errors"]) == {"pay_currency", "pay_per"}
    kept = client.patch(
        url,
        {"pay_amount": "9.00", "pay_currency": "GBP", "pay_per": "hour"},
        content_type="application/json",
    )
    assert kept.status_code == 200, kept.json()
    assert (kept.json()["pay_amount"], kept.json()["pay_per"]) == ("9.00", "hour")

    page = reverse("campaign_settings", args=[campaign.pk])
    form = client.get(page).context["form"]
    data = {name: form[name].value() for name in form.fields}
    data = {name: "" if value is None else value for name, value in data.items()}
    data.update({"pay_amount": "", "pay_currency": "GBP", "pay_per": "hour"})
    answer = client.post(page, {k: v for k, v in data.items() if v is not False})
    assert answer.status_code == 400
    assert set(answer.context["form"].errors) == {"pay_amount"}
    campaign.refresh_from_db()
    assert campaign.pay_currency == "GBP"
    assert str(campaign.pay_amount) == "9.00"

    with pytest.raises(CampaignSetupError, match="pay_currency"):
        create_campaign(dataset, "half paid", k=3, pay_amount=3, pay_per="study")
