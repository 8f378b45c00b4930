"""The settings page: what may change after creation, in groups with their rules (k only
upwards once started, a threshold change recomputes the audit, the status by its buttons);
the dashboard's completion URL and links; the campaign form in groups."""

import html
import re
from typing import Any

import pytest
from django.http import QueryDict
from django.test import Client, override_settings
from django.urls import reverse

from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.lifecycle import create_campaign, set_status
from prb_annotate.models import Assignment, Campaign, Dataset
from prb_annotate.web.forms import CampaignForm
from tests.campaigns.test_study_replacement_slots import settings_form
from tests.support.campaigns import annotators, submit_form
from tests.support.pages import active_campaign

COMPLETION = "https://app.prolific.com/submissions/complete?cc=NEW42"


def test_it_edits_settings_and_shows_them_on_the_dashboard(
    dataset: Dataset, manager, login
) -> None:
    """From the dashboard's Settings link: the page's groups and rules; a new completion URL,
    quota and name saved; the dashboard then shows the completion URL."""
    campaign = active_campaign(dataset)
    client = login(manager)
    dashboard = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    settings_url = reverse("campaign_settings", args=[campaign.pk])
    assert f'href="{settings_url}"' in dashboard
    assert "Completion URL: none" in dashboard
    page = client.get(settings_url)
    html = page.content.decode()
    for legend in (
        "Basics",
        "Annotators&#x27; work",
        "Crowd and Prolific",
        "Verdict thresholds",
        "Quality control",
    ):
        assert f"<legend>{legend}</legend>" in html, legend
    assert "once the campaign has started it only goes up" in html
    assert "the audit is computed again with the new value when it is next opened" in html

    data = {
        **settings_form(campaign),
        "completion_url": COMPLETION,
        "quota_per_annotator": "4",
        "name": "renamed",
    }
    response = client.post(settings_url, data)
    assert response["Location"] == reverse("campaign_detail", args=[campaign.pk])
    campaign.refresh_from_db()
    assert (campaign.completion_url, campaign.quota_per_annotator, campaign.name) == (
        COMPLETION,
        4,
        "renamed",
    )
    dashboard = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert f'Completion URL: <a href="{COMPLETION}"' in dashboard
    assert 'id="try-participant"' in dashboard


def test_it_raises_k_only_upwards_once_the_campaign_has_started(
    dataset: Dataset, manager, login
) -> None:
    draft = create_campaign(dataset, "draft", k=3)
    client = login(manager)
    url = reverse("campaign_settings", args=[draft.pk])
    assert (
        client.post(url, {**settings_form(draft), "annotations_per_pair": "2"}).status_code == 302
    )
    draft.refresh_from_db()
    assert draft.annotations_per_pair == 2

    set_status(draft, Campaign.Status.ACTIVE)
    refused = client.post(url, {**settings_form(draft), "annotations_per_pair": "1"})
    assert refused.status_code == 400
    assert "Once a campaign has started, k only goes up (it is 2)." in refused.content.decode()
    assert (
        client.post(url, {**settings_form(draft), "annotations_per_pair": "4"}).status_code == 302
    )
    draft.refresh_from_db()
    assert draft.annotations_per_pair == 4

    set_status(draft, Campaign.Status.CLOSED)
    refused = client.post(url, {**settings_form(draft), "annotations_per_pair": "5"})
    assert "A closed campaign keeps its k." in refused.content.decode()
    api = client.patch(
        f"/api/campaigns/{draft.pk}/", {"annotations_per_pair": 5}, content_type="application/json"
    )
    assert api.status_code == 400
    assert "annotations_per_pair" in api.json()["errors"]


def test_it_refuses_to_lower_k_through_the_api_once_started(
    dataset: Dataset, manager, login
) -> None:
    campaign = active_campaign(dataset)
    api = login(manager).patch(
        f"/api/campaigns/{campaign.pk}/",
        {"annotations_per_pair": 2},
        content_type="application/json",
    )
    assert api.status_code == 400
    assert api.json()["errors"]["annotations_per_pair"] == [
        "Once a campaign has started, k only goes up (it is 3)."
    ]


def chosen_five_rejected_four(assignment: Assignment) -> dict[str, Any]:
    """The form's answers (A/B as shown) that fit the chosen answer, rated 5, the other 4."""
    chosen = assignment.chosen_position
    other = "B" if chosen == "A" else "A"
    ratings = {}
    for criterion in assignment.campaign.quality_criteria:
        ratings[f"quality_{chosen}_{criterion}"] = "5"
        ratings[f"quality_{other}_{criterion}"] = "4"
    return {"rubric_fit": chosen, **ratings}


def test_it_recomputes_the_audit_when_a_verdict_threshold_changes(
    dataset: Dataset, manager, login
) -> None:
    """Answers rate the chosen answer 5 and the rejected one 4: validated at threshold 4,
    excluded for the rejected answer's quality once the page raises it to 5."""
    campaign = active_campaign(dataset, name="thresholds")
    for user in annotators(campaign, 3):
        while (assignment := next_assignment(campaign, user)) is not None:
            submit_form(assignment, **chosen_five_rejected_four(assignment))
    client = login(manager)
    assert {v.verdict for v in campaign_verdicts(campaign).values()} == {"validated"}
    audit_url = f"/api/campaigns/{campaign.pk}/audit/?resamples=0"
    assert client.get(audit_url).json()["counts"]["validated"] == 12
    response = client.post(
        reverse("campaign_settings", args=[campaign.pk]),
        {**settings_form(campaign), "quality_threshold": "5"},
        follow=True,
    )
    assert "The audit is computed again with the new thresholds" in response.content.decode()
    counts = client.get(audit_url).json()["counts"]
    assert (counts["validated"], counts["excluded"]) == (0, 12)


def test_it_keeps_settings_to_managers_of_the_campaign(dataset: Dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    assert client.get(reverse("campaign_settings", args=[campaign.pk])).status_code == 404
    assert (
        client.post(reverse("campaign_link", args=[campaign.pk, "study", "off"])).status_code == 404
    )
    campaign.refresh_from_db()
    assert campaign.study_link_enabled


@pytest.mark.parametrize(
    ("data", "open_groups"),
    [
        ({}, ["basics"]),
        ({"plan_half_width": "0.2", "preview": "1"}, ["basics", "plan"]),
        ({"completion_url": "not a url"}, ["basics", "crowd"]),
        ({"screen_out_url": "not a url"}, ["basics", "qualification"]),
    ],
)
def test_it_groups_the_campaign_form_and_folds_the_advanced_groups(
    dataset: Dataset, manager, login, data, open_groups
) -> None:
    """Basics open; the others folded unless they hold an error or a value, or the plan's
    preview was asked for (the preview is then inside its group, below its button)."""
    client = login(manager)
    if data:
        base = {
            "dataset": str(dataset.pk),
            "name": "grouped",
            "annotations_per_pair": "3",
            "reservation_minutes": "30",
            "seed": "0",
            "gold_rate": "0",
            "majority_threshold": "0.5",
            "fast_answer_seconds": "10",
            "plan_expected_share": "0.5",
            "plan_split_share": "0",
        }
        response = client.post(reverse("campaign_create"), {**base, **data})
    else:
        response = client.get(reverse("campaign_create"), {"dataset": dataset.pk})
    groups = response.context["groups"]
    keys = ["basics", "joining", "quality", "qualification", "crowd", "plan"]
    assert [group.key for group in groups] == keys
    assert [group.key for group in groups if group.open] == open_groups
    # Each field in the group named for it: none left to the first group's fallback.
    on_page = [field.name for group in groups for field in group.fields]
    declared = [name for _, _, names in CampaignForm.GROUPS for name in names]
    assert on_page == declared
    assert sorted(on_page) == sorted(response.context["form"].fields)
    html = response.content.decode()
    if "preview" in data:
        plan_group = html[html.index('id="group-plan"') :]
        assert 'id="plan-preview"' in plan_group
        assert 'formaction="/campaigns/new/#plan-preview"' in html
    if not data:
        assert f'<option value="{dataset.pk}" selected>' in html


def test_the_try_link_joins_a_campaign_that_has_a_prolific_study_id(
    dataset: Dataset, manager, login
) -> None:
    """The recommended set-up names the study: *Try the participant flow* carries that study
    id, so the join page opens (it answered 403 "another study" with a made-up one)."""
    campaign = create_campaign(dataset, "with a study", k=2, activate=True)
    campaign.prolific_study_id = "study-42"
    campaign.save(update_fields=["prolific_study_id"])
    dashboard = login(manager).get(reverse("campaign_detail", args=[campaign.pk]))
    try_url = re.search(r'href="([^"]+)" id="try-participant"', dashboard.content.decode())
    assert try_url is not None
    link = html.unescape(try_url[1])
    assert "STUDY_ID=study-42" in link
    participant = Client()
    start = participant.get(link)
    assert start.status_code == 200, start.content.decode()
    assert 'id="start-button"' in start.content.decode()
    joined = participant.post(link.split("?")[0], QueryDict(link.split("?")[1]))
    assert joined.status_code == 302
    assert joined["Location"] == reverse("annotate", args=[campaign.pk])


def test_with_prolifics_list_the_dashboard_offers_no_try_link_it_would_refuse(
    dataset: Dataset, manager, login
) -> None:
    """With Prolific's API token and a study id, only the participants Prolific lists join:
    the made-up participant of *Try the participant flow* was refused (403)."""
    campaign = create_campaign(dataset, "checked study", k=2, activate=True)
    campaign.prolific_study_id = "study-42"
    campaign.save(update_fields=["prolific_study_id"])
    client = login(manager)
    with override_settings(PROLIFIC_API_TOKEN="a-token"):
        checked = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="try-participant"' not in checked
    assert 'id="try-participant-refused"' in checked
    plain = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert 'id="try-participant"' in plain
    assert 'id="try-participant-refused"' not in plain
