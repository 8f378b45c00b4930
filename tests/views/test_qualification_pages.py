"""The managers' pages: the new-campaign form's practice and qualification switches, the
practice and qualification page linked from the dashboard (pairs with expected answers and
explanations, the pass rule, the screen-out URL), with its errors shown on the page; 404 for
anyone who does not manage the campaign."""

from django.urls import reverse

from prb_annotate.models import Campaign, QualificationItem
from tests.support.qualification import screening_campaign


def test_it_creates_a_campaign_with_the_switches_of_the_form(dataset, manager, login) -> None:
    client = login(manager)
    form = client.get(reverse("campaign_create")).content.decode()
    for name in (
        "practice_pair_ids",
        "qualification_pair_ids",
        "qualification_min_correct",
        "screen_out_url",
    ):
        assert f'name="{name}"' in form
    response = client.post(
        reverse("campaign_create"),
        {
            "dataset": dataset.pk,
            "name": "screened pilot",
            "annotations_per_pair": 2,
            "reservation_minutes": 30,
            "seed": 1,
            "gold_rate": 0,
            "gold_pair_ids": "",
            "practice_pair_ids": "p0000, p0001",
            "qualification_pair_ids": "p0002 p0003 p0004",
            "qualification_min_correct": 2,
            "qualification_required_questions": ["rubric_fit"],
            "screen_out_url": "https://study.example/screened",
        },
    )
    campaign = Campaign.objects.get(name="screened pilot")
    assert response.url == reverse("campaign_detail", args=[campaign.pk])
    assert campaign.items.count() == 7
    assert campaign.qualification_rule == {"min_correct": 2, "required_questions": ["rubric_fit"]}
    assert campaign.screen_out_url == "https://study.example/screened"
    phases = list(
        campaign.qualification_items.order_by("phase", "position").values_list(
            "phase", "pair__external_id"
        )
    )
    assert phases == [
        ("practice", "p0000"),
        ("practice", "p0001"),
        ("qualification", "p0002"),
        ("qualification", "p0003"),
        ("qualification", "p0004"),
    ]
    shown = client.get(response.url)
    assert "explanations first" in shown.content.decode()


def test_it_refuses_a_pair_in_two_roles_on_the_form(dataset, manager, login) -> None:
    response = login(manager).post(
        reverse("campaign_create"),
        {
            "dataset": dataset.pk,
            "name": "two roles",
            "annotations_per_pair": 2,
            "reservation_minutes": 30,
            "seed": 1,
            "gold_rate": 0,
            "gold_pair_ids": "p0000",
            "practice_pair_ids": "p0000",
            "qualification_pair_ids": "p0003",
            "qualification_min_correct": 5,
        },
    )
    assert response.status_code == 200
    assert "Already gold or practice pairs: p0000." in response.content.decode()
    assert not Campaign.objects.filter(name="two roles").exists()


def test_it_manages_pairs_rule_and_url_on_its_page(dataset, manager, annotator, login) -> None:
    campaign = screening_campaign(dataset, annotator, gold_pair_ids=["p0011"])
    client = login(manager)
    dashboard = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    page_url = reverse("campaign_qualification", args=[campaign.pk])
    assert f'href="{page_url}"' in dashboard
    page = client.get(page_url).content.decode()
    assert 'data-pair="p0000"' in page
    assert "The chosen one follows the rubric." in page
    assert "at least 2 of 3 items right" in page

    add = reverse("campaign_qualification_item", args=[campaign.pk])
    refused = client.post(
        add, {"pair": "p0011", "phase": "practice", "expected_rubric_fit": "chosen"}
    )
    assert refused.status_code == 400
    assert "This pair is a gold item of the campaign." in refused.content.decode()
    missing = client.post(add, {"pair": "zzz", "phase": "practice", "expected_rubric_fit": "tie"})
    assert "No pair &#x27;zzz&#x27; in dataset demo." in missing.content.decode()
    nothing = client.post(add, {"pair": "p0010", "phase": "practice"})
    assert "Expect an answer to at least one question." in nothing.content.decode()
    saved = client.post(
        add,
        {
            "pair": "p0010",
            "phase": "practice",
            "expected_rubric_fit": "tie",
            "explanation_rubric_fit": "Both follow the rubric equally.",
        },
    )
    assert saved.status_code == 302
    item = QualificationItem.objects.get(campaign=campaign, pair__external_id="p0010")
    assert (item.expected_answers, item.position) == ({"rubric_fit": "tie"}, 2)
    assert not campaign.items.filter(pair=item.pair).exists()

    remove = reverse("campaign_qualification_remove", args=[campaign.pk, item.pair_id])
    assert client.post(remove).status_code == 302
    assert not QualificationItem.objects.filter(pk=item.pk).exists()

    rule = reverse("campaign_qualification_rule", args=[campaign.pk])
    client.post(
        rule,
        {
            "min_correct": "",
            "required_questions": ["differentiator"],
            "screen_out_url": "study.example/out",
        },
    )
    campaign.refresh_from_db()
    assert campaign.qualification_rule == {
        "min_correct": None,
        "required_questions": ["differentiator"],
    }
    assert campaign.screen_out_url == "https://study.example/out"
    too_many = client.post(rule, {"min_correct": "7", "screen_out_url": ""}, follow=True)
    assert "The qualification has 3 items: 7 cannot be right." in too_many.content.decode()


def test_it_hides_the_pages_from_who_does_not_manage(dataset, annotator, login) -> None:
    campaign = screening_campaign(dataset, annotator)
    client = login(annotator)
    for name in ("campaign_qualification", "campaign_prolific"):
        assert client.get(reverse(name, args=[campaign.pk])).status_code == 404
    posted = client.post(
        reverse("campaign_qualification_rule", args=[campaign.pk]), {"min_correct": 0}
    )
    assert posted.status_code == 404
    campaign.refresh_from_db()
    assert campaign.qualification_rule == {"min_correct": 2, "required_questions": []}
