"""Small repairs of the managers' pages: the campaign list counts regular items as the
dashboard does (gold items apart), and no page cites a repository file the app does not serve."""

import html
import re

from django.urls import reverse

from prb_annotate.audit.quality import AGREEMENT_MARK_P, POSITION_TEST
from prb_annotate.campaigns.setting_fields import CAMPAIGN
from tests.support.pages import active_campaign


def test_the_list_counts_items_as_the_dashboard_does(dataset, manager, login) -> None:
    campaign = active_campaign(dataset, gold_pair_ids=["p0010", "p0011"])
    client = login(manager)
    dashboard = client.get(reverse("campaign_detail", args=[campaign.pk]))
    regular = dashboard.context["progress"].items_total
    assert regular == campaign.items.count() - 2
    listed = client.get(reverse("campaign_list")).content.decode()
    row = listed.split(f'href="{reverse("campaign_detail", args=[campaign.pk])}"', 1)[1]
    counts = re.findall(r'<td class="num">(\d+)</td>', row.split("</tr>", 1)[0])
    assert int(counts[0]) == regular


def test_the_dashboard_cites_no_repository_file(dataset, manager, login) -> None:
    campaign = active_campaign(dataset, prolific_study_id="study-1")
    page = login(manager).get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert "coming back is never limited." in page
    assert not re.search(r"docs/[a-z_]+\.md", page)


def test_the_dashboard_states_each_marks_threshold(dataset, manager, login) -> None:
    campaign = active_campaign(dataset)
    client = login(manager)
    url = reverse("campaign_detail", args=[campaign.pk])
    text = client.get(url).content.decode()
    # Each mark's level is read from the module that marks, never typed on the page.
    assert f'<span id="agreement-mark-p">{AGREEMENT_MARK_P}</span>' in text
    assert f'<span id="position-mark-p">{POSITION_TEST.level}</span>' in text
    # What the position test is and how it is corrected, from the object that runs it.
    assert f"{POSITION_TEST.test}, corrected across the annotators by" in text
    assert html.escape(POSITION_TEST.correction) in text
    assert html.escape(POSITION_TEST.words()) in text
    assert "this campaign leaves out below" not in text
    # The threshold for leaving annotators out reads the Holm-adjusted A-share p-value
    # (quality.biased_annotators), and its help says so.
    threshold_help = str(CAMPAIGN["position_bias_max_p"].help)
    assert "Holm-corrected across the campaign's annotators" in threshold_help
    assert html.escape(threshold_help) in text
    # The tool counterbalanced these sides itself: no word of imported ones.
    assert 'id="imported-sides"' not in text
    campaign.position_bias_max_p = 0.02
    campaign.save(update_fields=["position_bias_max_p"])
    text = client.get(url).content.decode()
    assert "this campaign leaves out below p = 0.02" in text


def test_the_dashboard_says_a_newcomers_reservations_are_shorter(dataset, manager, login) -> None:
    """Reservations last ``reservation_minutes``, except a newcomer's by a link
    (``first_reservation_minutes``, ``assignment._History.reservation_minutes``); 0 turns that
    off."""
    campaign = active_campaign(dataset, reservation_minutes=30, first_reservation_minutes=10)
    client = login(manager)
    url = reverse("campaign_detail", args=[campaign.pk])
    text = client.get(url).content.decode()
    assert "reservations last 30 min" in text
    assert '<span id="first-reservation">(10 min for a newcomer by a link' in text
    campaign.first_reservation_minutes = 0
    campaign.save(update_fields=["first_reservation_minutes"])
    assert 'id="first-reservation"' not in client.get(url).content.decode()
