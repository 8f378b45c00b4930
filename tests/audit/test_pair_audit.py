"""A campaign's pairs as a manager audits them: the pair page, the Pairs list and its filters,
adjudication with history (page, API, service), the queue, and the audit's counts."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from prb_annotate.audit import decisions
from prb_annotate.audit.campaign_audit import campaign_audit, campaign_verdicts
from prb_annotate.audit.report import render_text
from prb_annotate.models import Adjudication, EvaluationRun, Membership, PairScore
from tests.support.audit import add_item, annotate, annotate_all, annotators, make_campaign

GOOD: dict[str, object] = {}
REJECTED = {"fit": "rejected"}


@pytest.fixture
def campaign(dataset):
    """p0000 validated, p0001 excluded (majority prefers rejected), p0002 a 2-2 split vote,
    p0003 unannotated; p0004 a gold item."""
    campaign = make_campaign(dataset)
    pairs = list(dataset.pairs.order_by("external_id"))
    raters = annotators(4)
    annotate_all(add_item(campaign, pairs[0]), raters, [GOOD] * 3)
    excluded = add_item(campaign, pairs[1])
    annotate_all(
        excluded,
        raters,
        [REJECTED, {**REJECTED, "comment": "B reads better", "flagged": True}, GOOD],
    )
    split = add_item(campaign, pairs[2], extra_annotations=1)
    annotate_all(split, raters, [GOOD, GOOD, REJECTED, REJECTED])
    add_item(campaign, pairs[3])
    gold = add_item(
        campaign,
        pairs[4],
        kind="gold",
        gold_answers={"rubric_fit": "chosen", "differentiator": "preference"},
    )
    annotate_all(gold, raters[:2], [GOOD, REJECTED])
    return campaign


def pair_id(campaign, external_id):
    return campaign.items.get(pair__external_id=external_id).pair_id


def test_it_shows_a_pair_with_every_annotation_and_its_verdict_explained(campaign, manager, login):
    item = campaign.items.get(pair__external_id="p0001")
    first = item.assignments.get(annotator__username="rater2").annotations.get()
    # A revision: the earlier answer is kept, collapsed.
    first.is_current = False
    first.save()
    annotate_revision = first
    annotate_revision.pk = None
    annotate_revision.revision = 2
    annotate_revision.is_current = True
    annotate_revision.comment = "Second look: B still reads better"
    annotate_revision.client_token = "revision-token"
    annotate_revision.save()

    page = login(manager).get(reverse("campaign_pair", args=[campaign.pk, item.pair_id]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Second look: B still reads better" in html
    assert "1 earlier revision" in html
    assert "label_disagrees" in html
    assert "majority does not prefer the dataset&#x27;s chosen answer" in html
    assert "How verdicts are decided" in html
    assert "flagged" in html
    checks = {check.name: check for check in page.context["checks"]}
    assert checks["rubric_fit"].decisive
    assert checks["rubric_fit"].voters == ("rater1", "rater2")
    rows = {row["annotator"]: row for row in page.context["annotations"]}
    assert rows["rater1"]["chosen_position"] == "A"
    assert rows["rater1"]["current"]["shown_as"] == "B"
    assert rows["rater1"]["current"]["rubric_fit"] == "rejected"
    assert rows["rater1"]["current"]["seconds"] == 60


def test_it_shows_gold_answers_and_model_scores(campaign, manager, login):
    gold_pair = pair_id(campaign, "p0004")
    run = EvaluationRun.objects.create(campaign=campaign, model_name="tiny-rm")
    PairScore.objects.create(
        run=run, pair_id=gold_pair, score_chosen=1.5, score_rejected=0.25, outcome="correct"
    )
    page = login(manager).get(reverse("campaign_pair", args=[campaign.pk, gold_pair]))
    html = page.content.decode()
    assert "Gold answers" in html
    rows = {row["annotator"]: row["gold_match"] for row in page.context["annotations"]}
    assert rows == {"rater1": True, "rater2": False}
    assert "tiny-rm" in html
    assert "1.250" in html  # the margin


def test_it_hides_pairs_from_everyone_but_the_campaign_managers(
    campaign, manager, annotator, outsider, login
):
    Membership.objects.create(campaign=campaign, user=annotator)
    target = pair_id(campaign, "p0001")
    urls = [
        reverse("campaign_pairs", args=[campaign.pk]),
        reverse("campaign_pair", args=[campaign.pk, target]),
        reverse("campaign_adjudication_queue", args=[campaign.pk]),
        f"/api/campaigns/{campaign.pk}/pairs/{target}/adjudications/",
        f"/api/campaigns/{campaign.pk}/adjudication-queue/",
        f"/api/campaigns/{campaign.pk}/verdicts/",
    ]
    for user in (annotator, outsider):
        client = login(user)
        for url in urls:
            assert client.get(url).status_code == 404, url
        posted = client.post(
            reverse("campaign_pair_adjudicate", args=[campaign.pk, target]),
            {"decision": "validated", "reason": "adjudicator_judgement"},
        )
        assert posted.status_code == 404
    assert not Adjudication.objects.exists()
    member = login(outsider)
    Membership.objects.create(campaign=campaign, user=outsider, role="manager")
    assert all(member.get(url).status_code == 200 for url in urls)


def test_it_filters_sorts_and_pages_the_pairs_list(campaign, dataset, manager, login):
    client = login(manager)
    url = reverse("campaign_pairs", args=[campaign.pk])

    def ids(**query):
        page = client.get(url, query)
        assert page.status_code == 200
        return [row.verdict.external_id for row in page.context["page"]]

    assert ids() == ["p0000", "p0001", "p0002", "p0003"]
    assert ids(verdict="excluded") == ["p0001"]
    # Every category stays offered while one is chosen.
    assert client.get(url, {"category": "Lifestyle"}).context["categories"] == ["Lifestyle"]
    assert ids(category="Nothing") == []
    assert ids(reason="undecided_split_vote") == ["p0002"]
    assert ids(split="yes") == ["p0002"]
    assert ids(flagged="yes") == ["p0001"]
    assert ids(flagged="no", verdict="undecided") == ["p0002", "p0003"]
    assert ids(sort="-id") == ["p0003", "p0002", "p0001", "p0000"]
    assert ids(sort="annotations")[0] == "p0003"
    bad = client.get(url, {"flagged": "maybe", "run": "999"})
    assert bad.status_code == 200
    assert "flagged" in bad.context["form"].errors


def test_it_sorts_ids_naturally_and_pages_them(dataset, manager, login):
    campaign = make_campaign(dataset)
    for index, pair in enumerate(dataset.pairs.order_by("external_id")):
        pair.external_id = f"x-{index + 1}"
        pair.save()
        add_item(campaign, pair)
    client = login(manager)
    page = client.get(reverse("campaign_pairs", args=[campaign.pk]))
    listed = [row.verdict.external_id for row in page.context["page"]]
    assert listed[:3] == ["x-1", "x-2", "x-3"]
    assert listed[-1] == "x-12"
    from prb_annotate.views import pairs

    pairs.PAIRS_PER_PAGE, saved = 5, pairs.PAIRS_PER_PAGE
    try:
        second = client.get(reverse("campaign_pairs", args=[campaign.pk]), {"page": 2})
    finally:
        pairs.PAIRS_PER_PAGE = saved
    assert [row.verdict.external_id for row in second.context["page"]] == [
        f"x-{n}" for n in range(6, 11)
    ]


def test_it_finds_where_the_reward_model_disagrees_with_the_humans(campaign, manager, login):
    run = EvaluationRun.objects.create(campaign=campaign, model_name="tiny-rm")
    for external_id, outcome in (("p0000", "wrong"), ("p0001", "wrong"), ("p0002", "correct")):
        PairScore.objects.create(
            run=run,
            pair_id=pair_id(campaign, external_id),
            score_chosen=0.0,
            score_rejected=1.0 if outcome == "wrong" else -1.0,
            outcome=outcome,
        )
    client = login(manager)
    page = client.get(
        reverse("campaign_pairs", args=[campaign.pk]), {"run": run.pk, "disagrees": "yes"}
    )
    # p0000: humans prefer chosen, the model the rejected one; p0001: both prefer rejected.
    assert [row.verdict.external_id for row in page.context["page"]] == ["p0000"]
    api = client.get(
        f"/api/campaigns/{campaign.pk}/verdicts/", {"run": run.pk, "disagrees": "yes"}
    ).json()
    assert [row["external_id"] for row in api["results"]] == ["p0000"]
    assert api["results"][0]["score"]["margin"] == -1.0
    missing_run = client.get(f"/api/campaigns/{campaign.pk}/verdicts/", {"disagrees": "yes"})
    assert missing_run.status_code == 400
    assert "disagrees" in missing_run.json()["errors"]


def test_it_filters_verdicts_in_the_api_like_the_page(campaign, manager, login):
    client = login(manager)
    url = f"/api/campaigns/{campaign.pk}/verdicts/"
    rows = client.get(url, {"split": "yes"}).json()["results"]
    assert [row["external_id"] for row in rows] == ["p0002"]
    assert rows[0]["split_vote"] is True
    flagged = client.get(url, {"flagged": "yes"}).json()["results"]
    assert [(row["external_id"], row["flagged_annotations"]) for row in flagged] == [("p0001", 1)]
    ordered = client.get(url, {"sort": "-id"}).json()["results"]
    assert [row["external_id"] for row in ordered] == ["p0003", "p0002", "p0001", "p0000"]
    bad = client.get(url, {"reason": "nonsense", "sort": "size"})
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) == {"reason", "sort"}


def test_it_adjudicates_with_history_and_the_audit_counts_it_apart(campaign, manager, login):
    client = login(manager)
    split = pair_id(campaign, "p0002")
    url = reverse("campaign_pair_adjudicate", args=[campaign.pk, split])
    response = client.post(
        url + "?verdict=undecided",
        {"decision": "validated", "reason": "adjudicator_judgement", "note": "B is off-topic"},
    )
    assert response.status_code == 302
    assert response["Location"].endswith("?verdict=undecided")
    verdict = campaign_verdicts(campaign)[split]
    assert (verdict.verdict, verdict.adjudicated, verdict.annotators_verdict) == (
        "validated",
        True,
        "undecided",
    )
    report = campaign_audit(campaign, resamples=0)
    assert report["counts"]["validated"] == 2
    assert report["counts"]["adjudicated"] == 1
    assert report["counts"]["by_annotators"] == {"validated": 1, "excluded": 1, "undecided": 2}
    assert "1 adjudicated by a manager; the annotators alone: 1 validated" in render_text(report)

    # Revised: the earlier decision stays as history, one row is current.
    client.post(url, {"decision": "excluded", "reason": "label_disagrees"})
    assert campaign_verdicts(campaign)[split].verdict == "excluded"
    rows = Adjudication.objects.filter(item__pair_id=split).order_by("id")
    assert [(row.decision, row.is_current) for row in rows] == [
        ("validated", False),
        ("excluded", True),
    ]
    assert rows[0].decided_by == manager
    page = client.get(reverse("campaign_pair", args=[campaign.pk, split])).content.decode()
    assert "History (2)" in page
    assert "B is off-topic" in page

    # Withdrawn: back to the annotators' verdict.
    client.post(url, {"decision": "withdrawn", "reason": "adjudicator_judgement"})
    assert campaign_verdicts(campaign)[split].verdict == "undecided"
    assert Adjudication.objects.filter(item__pair_id=split, is_current=True).count() == 1


def test_it_refuses_bad_decisions_naming_the_field(campaign, manager, login):
    client = login(manager)
    target = pair_id(campaign, "p0001")
    page = client.post(
        reverse("campaign_pair_adjudicate", args=[campaign.pk, target]),
        {"decision": "maybe", "reason": "adjudicator_judgement"},
    )
    assert page.status_code == 400
    assert "decision" in page.context["form"].errors
    withdraw = client.post(
        reverse("campaign_pair_adjudicate", args=[campaign.pk, target]),
        {"decision": "withdrawn", "reason": "adjudicator_judgement"},
    )
    assert withdraw.status_code == 400
    assert "no decision to withdraw" in withdraw.content.decode()
    gold = campaign.items.get(pair__external_id="p0004")
    with pytest.raises(ValidationError) as error:
        decisions.adjudicate(gold, "validated", "adjudicator_judgement")
    assert "item" in error.value.message_dict
    api = client.post(
        f"/api/campaigns/{campaign.pk}/pairs/{target}/adjudications/",
        {"decision": "validated", "reason": "no_such_code"},
        content_type="application/json",
    )
    assert api.status_code == 400
    assert "reason" in api.json()["errors"]
    assert not Adjudication.objects.exists()


def test_it_adjudicates_through_the_api(campaign, manager, login):
    client = login(manager)
    target = pair_id(campaign, "p0001")
    url = f"/api/campaigns/{campaign.pk}/pairs/{target}/adjudications/"
    created = client.post(
        url,
        {"decision": "validated", "reason": "adjudicator_judgement", "note": "fine"},
        content_type="application/json",
    )
    assert created.status_code == 201
    assert created.json()["decided_by"] == "manager"
    assert created.json()["is_current"] is True
    client.post(
        url, {"decision": "excluded", "reason": "label_disagrees"}, content_type="application/json"
    )
    history = client.get(url).json()["results"]
    assert [(row["decision"], row["is_current"]) for row in history] == [
        ("excluded", True),
        ("validated", False),
    ]
    adjudicated = client.get(
        f"/api/campaigns/{campaign.pk}/verdicts/", {"adjudicated": "yes"}
    ).json()["results"]
    assert [(row["external_id"], row["annotators_verdict"]) for row in adjudicated] == [
        ("p0001", "excluded")
    ]


def test_it_queues_split_votes_first_and_drops_decided_pairs(campaign, manager, login):
    client = login(manager)
    page = client.get(reverse("campaign_adjudication_queue", args=[campaign.pk]))
    assert [v.external_id for v in page.context["queue"]] == ["p0002", "p0003"]
    decisions.adjudicate(
        campaign.items.get(pair__external_id="p0002"), "excluded", "adjudicator_judgement"
    )
    api = client.get(f"/api/campaigns/{campaign.pk}/adjudication-queue/").json()
    assert [row["external_id"] for row in api["results"]] == ["p0003"]


def test_it_keeps_one_current_decision_however_many_are_made(campaign):
    item = campaign.items.get(pair__external_id="p0000")
    for decision in ("excluded", "validated", "excluded", "withdrawn", "validated"):
        decisions.adjudicate(item, decision, "adjudicator_judgement")
    current = Adjudication.objects.filter(item=item, is_current=True)
    assert [row.decision for row in current] == ["validated"]
    assert Adjudication.objects.filter(item=item).count() == 5


def test_it_does_not_ask_more_annotators_for_an_adjudicated_split_vote(campaign):
    from prb_annotate.audit.campaign_audit import request_extra_annotations

    decisions.adjudicate(
        campaign.items.get(pair__external_id="p0002"), "validated", "adjudicator_judgement"
    )
    assert request_extra_annotations(campaign) == 0


def test_it_links_pair_ids_to_the_pair_page(campaign, dataset, manager, login):
    client = login(manager)
    target = pair_id(campaign, "p0001")
    link = reverse("campaign_pair", args=[campaign.pk, target])
    audit = client.get(reverse("campaign_audit", args=[campaign.pk]), {"resamples": 0})
    assert link in audit.content.decode()
    dashboard = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert reverse("campaign_pairs", args=[campaign.pk]) in dashboard
    assert reverse("campaign_adjudication_queue", args=[campaign.pk]) in dashboard
    browser = client.get(reverse("pair_detail", args=[dataset.pk, target])).content.decode()
    assert link in browser
    listing = client.get(reverse("campaign_pairs", args=[campaign.pk])).content.decode()
    assert link in listing


def test_it_walks_the_filtered_list_from_the_pair_page(campaign, manager, login):
    client = login(manager)
    first = pair_id(campaign, "p0002")
    page = client.get(reverse("campaign_pair", args=[campaign.pk, first]), {"verdict": "undecided"})
    assert page.context["neighbours"]["next"] == pair_id(campaign, "p0003")
    assert page.context["neighbours"]["previous"] is None
    assert "verdict=undecided" in page.context["query"]


def test_it_marks_annotations_the_audit_leaves_out(dataset, manager, login):
    campaign = make_campaign(dataset, min_gold_accuracy=1.0)
    pairs = list(dataset.pairs.order_by("external_id"))
    raters = annotators(3)
    gold = add_item(campaign, pairs[5], kind="gold", gold_answers={"rubric_fit": "chosen"})
    annotate(gold, raters[0], fit="rejected")
    item = add_item(campaign, pairs[0])
    annotate_all(item, raters, [GOOD] * 3)
    page = login(manager).get(reverse("campaign_pair", args=[campaign.pk, item.pair_id]))
    rows = {row["annotator"]: row["counted"] for row in page.context["annotations"]}
    assert rows == {"rater1": False, "rater2": True, "rater3": True}
    assert page.context["verdict"].reasons == ("too_few_annotations",)
