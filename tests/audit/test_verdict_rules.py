"""The verdict rule as a table: annotations in, verdict and reasons out, one row per reason code
at least, read through the database (SQLite or PostgreSQL) like every audit. Also: the rule's
settings refused where a vote could be won by the losing side, and one pair explained."""

import pytest
from django.urls import reverse

from prb_annotate.audit import explain, rule
from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.audit.frames import annotations_frame, items_frame, thresholds_for
from prb_annotate.campaigns.lifecycle import CampaignSetupError, create_campaign
from prb_annotate.models import Annotation, Campaign, CampaignItem
from tests.support.audit import add_item, annotate_all, annotators, make_campaign

GOOD: dict[str, object] = {}
CHOSEN_LOW = {"chosen": {"correctness": 2}}
REJECTED_LOW = {"rejected": {"helpfulness": 1}}
QUALITY = {"differentiator": "quality"}
BOTH = {"differentiator": "both"}
REJECTED = {"fit": "rejected"}
TIE = {"fit": "tie"}
FLAG = {"flagged": True}

# (case, answers of each annotator, required annotations, verdict, reasons)
TABLE = [
    ("all good", [GOOD] * 3, 3, "validated", ()),
    ("majority flags it", [FLAG, FLAG, GOOD], 3, "excluded", ("flagged",)),
    ("chosen answer rated low", [CHOSEN_LOW] * 2 + [GOOD], 3, "excluded", ("low_quality_chosen",)),
    (
        "rejected answer rated low",
        [REJECTED_LOW] * 2 + [GOOD],
        3,
        "excluded",
        ("low_quality_rejected",),
    ),
    (
        "difference is quality",
        [QUALITY, QUALITY, GOOD],
        3,
        "excluded",
        ("differentiator_not_preference",),
    ),
    ("majority prefers rejected", [REJECTED, REJECTED, GOOD], 3, "excluded", ("label_disagrees",)),
    ("majority calls it a tie", [TIE, TIE, GOOD], 3, "excluded", ("label_tie",)),
    (
        "a majority names both quality and preference",
        [BOTH, BOTH, GOOD],
        3,
        "excluded",
        ("differentiator_both",),
    ),
    (
        "one each for chosen, rejected and tie (1-1-1)",
        [REJECTED, TIE, GOOD],
        3,
        "undecided",
        ("undecided_split_vote",),
    ),
    (
        "rejected and tie each ahead of chosen, together a majority",
        [REJECTED, REJECTED, TIE, TIE, GOOD],
        5,
        "excluded",
        ("label_disagrees",),
    ),
    (
        "one tie and one rejection of three required, the third to come",
        [REJECTED, TIE],
        3,
        "undecided",
        ("too_few_annotations",),
    ),
    (
        "two of four prefer chosen",
        [GOOD, GOOD, REJECTED, REJECTED],
        4,
        "undecided",
        ("undecided_split_vote",),
    ),
    ("one annotation of three", [GOOD], 3, "undecided", ("too_few_annotations",)),
    (
        "two ties of three required decide at once",
        [TIE, TIE],
        3,
        "excluded",
        ("label_tie",),
    ),
    ("no one rated helpfulness", ["no-helpfulness"] * 3, 3, "undecided", ("missing_rating",)),
    (
        "a median of two ratings where three are required",
        [GOOD, GOOD, "no-helpfulness"],
        3,
        "undecided",
        ("missing_rating",),
    ),
    (
        "every failure at once",
        [{**FLAG, **QUALITY, **TIE, "chosen": 1, "rejected": 1}] * 3,
        3,
        "excluded",
        (
            "flagged",
            "low_quality_chosen",
            "low_quality_rejected",
            "differentiator_not_preference",
            "label_tie",
        ),
    ),
]


def test_the_table_covers_every_reason_code():
    covered = {reason for *_, reasons in TABLE for reason in reasons}
    assert covered == set(rule.REASONS)
    assert set(rule.REASON_LABELS) == set(rule.REASONS)


def table_row(dataset, answers: list, required: int) -> tuple[Campaign, CampaignItem]:
    """One pair of a k = 3 campaign (plus extra annotations up to ``required``) answered as
    the row says; "no-helpfulness" is a good answer given before "helpfulness" joined the
    question set, so it has no rating for it."""
    campaign = make_campaign(dataset, annotations_per_pair=3)
    item = add_item(campaign, dataset.pairs.order_by("external_id")[0])
    item.extra_annotations = required - 3
    item.save()
    raters = annotators(len(answers))
    annotate_all(item, raters, [GOOD if a == "no-helpfulness" else a for a in answers])
    unrated = [r for r, a in zip(raters, answers, strict=True) if a == "no-helpfulness"]
    for annotation in Annotation.objects.filter(
        assignment__item=item, assignment__annotator__in=unrated
    ):
        for ratings in (annotation.quality_chosen, annotation.quality_rejected):
            ratings.pop("helpfulness")
        annotation.save()
    return campaign, item


@pytest.mark.parametrize(
    ("answers", "required", "verdict", "reasons"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_it_decides_as_the_table_says(dataset, answers, required, verdict, reasons):
    campaign, item = table_row(dataset, answers, required)
    found = campaign_verdicts(campaign)[item.pair_id]
    assert (found.verdict, found.reasons) == (verdict, reasons)


def test_it_explains_the_decisive_votes_of_a_pair(dataset):
    campaign = make_campaign(dataset)
    item = add_item(campaign, dataset.pairs.order_by("external_id")[0])
    raters = annotators(3)
    annotate_all(item, raters, [TIE, TIE, GOOD])
    verdict = campaign_verdicts(campaign)[item.pair_id]
    items = items_frame(campaign)
    checks = {
        check.name: check
        for check in explain.explain_pair(
            annotations_frame(campaign, items), 3, thresholds_for(campaign), verdict
        )
    }
    label = checks["rubric_fit"]
    assert (label.outcome, label.reasons, label.decisive) == ("fails", ("label_tie",), True)
    assert label.voters == ("rater1", "rater2")
    assert label.detail.startswith("1 of 3 prefer it")
    assert checks["flag"].outcome == "passes"
    assert not checks["flag"].decisive
    assert checks["quality_chosen_correctness"].detail == "median of 3 ratings: 5 (needs 4)"


def test_it_refuses_a_majority_threshold_below_one_half_everywhere(dataset, manager, login):
    message = "at least 0.5"
    with pytest.raises(CampaignSetupError, match="majority_threshold"):
        create_campaign(dataset, "low", majority_threshold=0.3)
    assert not Campaign.objects.filter(name="low").exists()

    client = login(manager)
    form = {
        "dataset": dataset.pk,
        "name": "low",
        "annotations_per_pair": 3,
        "reservation_minutes": 30,
        "seed": 0,
        "gold_rate": 0,
        "majority_threshold": 0.3,
    }
    page = client.post(reverse("campaign_create"), form)
    assert page.status_code == 200
    assert message in page.content.decode()
    assert not Campaign.objects.filter(name="low").exists()
    assert (
        client.post(reverse("campaign_create"), {**form, "majority_threshold": 0.6}).status_code
        == 302
    )
    assert Campaign.objects.get(name="low").majority_threshold == 0.6

    created = client.post(
        "/api/campaigns/",
        {"dataset": dataset.pk, "name": "api-low", "majority_threshold": 0.3},
        content_type="application/json",
    )
    assert created.status_code == 400
    assert message in created.json()["errors"]["majority_threshold"][0]
    campaign = Campaign.objects.get(name="low")
    changed = client.patch(
        f"/api/campaigns/{campaign.pk}/",
        {"majority_threshold": 0.49},
        content_type="application/json",
    )
    assert changed.status_code == 400
    assert "majority_threshold" in changed.json()["errors"]
    campaign.refresh_from_db()
    assert campaign.majority_threshold == 0.6


@pytest.mark.parametrize(
    ("answers", "required", "verdict", "reasons"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_the_pair_explanation_agrees_with_the_verdict(dataset, answers, required, verdict, reasons):
    """Every row of the table explained check by check: the failing checks give exactly the
    excluding reasons, and an undecided pair's waiting, split or unrated checks its reasons."""
    campaign, item = table_row(dataset, answers, required)
    found = campaign_verdicts(campaign)[item.pair_id]
    items = items_frame(campaign)
    checks = explain.explain_pair(
        annotations_frame(campaign, items), required, thresholds_for(campaign), found
    )
    failing = {code for check in checks if check.outcome == "fails" for code in check.reasons}
    open_ = {code for check in checks if check.outcome != "fails" for code in check.reasons}
    assert failing == {r for r in reasons if r in rule.EXCLUDING_REASONS}
    if verdict == "undecided":
        assert set(reasons) <= open_
