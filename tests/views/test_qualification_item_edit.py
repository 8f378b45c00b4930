"""Changing a practice or qualification item on the managers' page: choosing a pair again
without a phase keeps the one it has (adding an explanation never moves a qualification item
nor changes the pass rule), each row has its own form filled with what the item holds, and
expected answers read as words."""

from django.urls import reverse

from prb_annotate.models import QualificationItem
from tests.support.qualification import QUALIFICATION_IDS, screening_campaign


def test_choosing_a_pair_again_keeps_its_phase_and_the_rule(dataset, manager, login) -> None:
    campaign = screening_campaign(dataset)
    client = login(manager)
    page_url = reverse("campaign_qualification", args=[campaign.pk])
    assert "at least 2 of 3 items right" in client.get(page_url).content.decode()
    pair = QUALIFICATION_IDS[0]
    # The main form as its defaults send it: no phase chosen.
    saved = client.post(
        reverse("campaign_qualification_item", args=[campaign.pk]),
        {
            "pair": pair,
            "phase": "",
            "expected_rubric_fit": "chosen",
            "expected_differentiator": "preference",
            "explanation_rubric_fit": "Look at the profile first.",
        },
    )
    assert saved.status_code == 302
    item = QualificationItem.objects.get(campaign=campaign, pair__external_id=pair)
    assert item.phase == QualificationItem.Phase.QUALIFICATION
    assert item.explanations == {"rubric_fit": "Look at the profile first."}
    assert "at least 2 of 3 items right" in client.get(page_url).content.decode()

    new = client.post(
        reverse("campaign_qualification_item", args=[campaign.pk]),
        {"pair": "p0010", "phase": "", "expected_rubric_fit": "tie"},
    )
    assert new.status_code == 400
    assert "Choose practice or qualification for a pair not chosen yet." in new.content.decode()
    assert not QualificationItem.objects.filter(campaign=campaign, pair__external_id="p0010")


def test_each_row_edits_its_item_with_what_it_holds(dataset, manager, login) -> None:
    campaign = screening_campaign(dataset)
    client = login(manager)
    page = client.get(reverse("campaign_qualification", args=[campaign.pk])).content.decode()
    item = QualificationItem.objects.get(campaign=campaign, pair__external_id=QUALIFICATION_IDS[1])
    row = page.split(f'data-pair="{item.pair.external_id}"', 1)[1].split("</tr>", 1)[0]
    assert f'id="edit-{item.pk}-phase"' in row
    assert '<option value="qualification" selected>' in row
    assert "The chosen one follows the rubric.</textarea>" in row
    # Expected answers in words, not their stored codes.
    assert "Which response better fits this user: <strong>the dataset&#x27;s chosen answer" in row
    assert "rubric_fit: <strong>" not in page

    client.post(
        reverse("campaign_qualification_item", args=[campaign.pk]),
        {
            "pair": item.pair.external_id,
            "phase": "qualification",
            "expected_rubric_fit": "tie",
            "expected_differentiator": "preference",
            "explanation_rubric_fit": "Both follow it.",
            "explanation_differentiator": "Both good.",
        },
    )
    item.refresh_from_db()
    assert item.phase == "qualification"
    assert item.expected_answers == {"rubric_fit": "tie", "differentiator": "preference"}
    assert item.explanations["rubric_fit"] == "Both follow it."
