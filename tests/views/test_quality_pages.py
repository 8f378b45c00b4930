"""Annotator quality control as a manager uses it: the dashboard, the API, and the audit kept
between reloads until what it rests on changes."""

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from prb_annotate.audit import quality, sampling
from prb_annotate.audit.cache import campaign_audit_cached, change_stamp
from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.audit.exclusions import exclude_annotator
from prb_annotate.audit.model_answers import ANNOTATOR_MODE
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.planned_sample import plan_for_dataset
from prb_annotate.campaigns.progress import dashboard_figures
from prb_annotate.models import (
    AnnotatorExclusion,
    Campaign,
    CampaignItem,
    Dataset,
    EvaluationRun,
    ModelAnswer,
)
from prb_annotate.security.addresses import IPV4_JOIN_NETWORK_BITS, IPV6_JOIN_NETWORK_BITS
from tests.support.campaigns import active_campaign, annotators, submit_form
from tests.support.pages import campaign_form

NOW = timezone.now()


@pytest.fixture
def campaign(dataset: Dataset) -> Campaign:
    """k = 2, every pair annotated by two annotators; a third is waiting."""
    campaign = active_campaign(dataset, k=2)
    for user in annotators(campaign, 3)[:2]:
        while (assignment := next_assignment(campaign, user, now=NOW)) is not None:
            submit_form(assignment, now=NOW, rubric_fit=assignment.chosen_position)
    return campaign


def dashboard(client: Client, campaign: Campaign) -> str:
    return client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()


def send(client: Client, method: str, url: str, body: Any = None) -> Any:
    return client.generic(method, url, data=json.dumps(body or {}), content_type="application/json")


def test_it_shows_each_annotators_quality_and_completion_on_the_dashboard(
    campaign: Campaign, manager: User, login: Any
) -> None:
    html = dashboard(login(manager), campaign)
    assert 'id="quality-table"' in html
    assert 'data-annotator="annotator00"' in html
    # Every annotation gave 12 s (form_data): above the 10 s floor; ratings 5 and 4: not flat.
    assert "12 s" in html
    # The agreement mark says what it tests and how often it falls on honest annotators.
    assert escape(quality.HONEST_SPREAD.note()) in html
    assert "may simply be the least careful honest one" in html
    assert "Items complete over time" in html
    assert "<polyline" in html
    completion = dashboard_figures(campaign)["completion"]
    assert [count for _, count in completion] == list(range(1, 13))
    assert "refresh.js" in html  # active: the page refreshes itself
    # The period the page states is the one its script is given.
    period = re.search(r'refresh\.js" data-seconds="(\d+)"', html)
    assert period is not None
    assert f"refreshes itself every {period[1]} seconds" in html
    # What one network is, as the join limits count it.
    assert f"an IPv4 /{IPV4_JOIN_NETWORK_BITS}, an IPv6 /{IPV6_JOIN_NETWORK_BITS}" in html
    assert "style=" not in html.split('id="completion"')[1].split("</section>")[0]


def test_it_excludes_an_annotator_from_the_dashboard_and_brings_them_back(
    campaign: Campaign, manager: User, login: Any
) -> None:
    client = login(manager)
    first = User.objects.get(username="annotator00")
    url = reverse("campaign_exclude", args=[campaign.pk])
    client.post(url, {"annotator": first.pk, "reason": ""})
    assert not AnnotatorExclusion.objects.exists()

    response = client.post(url, {"annotator": first.pk, "reason": "answers in 2 s"})
    assert response["Location"] == reverse("campaign_detail", args=[campaign.pk])
    assert CampaignItem.objects.filter(campaign=campaign, replacement_annotations=1).count() == 12
    html = dashboard(client, campaign)
    assert "Bring back" in html
    assert "answers in 2 s" in html  # the history
    audit = client.get(f"/campaigns/{campaign.pk}/audit/").content.decode()
    assert "annotator00 (excluded by a manager)" in audit

    client.post(reverse("campaign_lift_exclusion", args=[campaign.pk, first.pk]))
    exclusion = AnnotatorExclusion.objects.get()
    assert exclusion.lifted_at is not None
    assert "Bring back" not in dashboard(client, campaign)


def test_it_changes_the_quality_thresholds_from_the_dashboard(
    campaign: Campaign, manager: User, login: Any
) -> None:
    client = login(manager)
    url = reverse("campaign_quality_settings", args=[campaign.pk])
    client.post(url, {"position_bias_max_p": "2", "fast_answer_seconds": "15"})
    campaign.refresh_from_db()
    assert campaign.position_bias_max_p is None  # refused: above 1
    settings = {"min_gold_accuracy": "0.8", "position_bias_max_p": "0.01"}
    client.post(url, {**settings, "fast_answer_seconds": "15"})
    campaign.refresh_from_db()
    assert campaign.position_bias_max_p == 0.01
    assert campaign.fast_answer_seconds == 15.0
    assert campaign.min_gold_accuracy == 0.8
    # 12 s is now under the floor: every answer counts as fast, and both are marked.
    assert dashboard(client, campaign).count("answers too fast") == 2


def test_it_asks_for_confirmation_before_closing(
    campaign: Campaign, manager: User, login: Any
) -> None:
    client = login(manager)
    status_url = reverse("campaign_status", args=[campaign.pk])
    response = client.post(status_url, {"status": "closed"})
    assert response["Location"] == reverse("campaign_close", args=[campaign.pk])
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.ACTIVE
    page = client.get(response["Location"]).content.decode()
    assert "Closing is final" in page
    # The one way back, which reopen_for_replacements keeps.
    assert "its one way back is to reopen it for replacements" in page
    assert 'name="confirmed" value="yes"' in page
    client.post(status_url, {"status": "closed", "confirmed": "yes"})
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.CLOSED
    assert "refresh.js" not in dashboard(client, campaign)


def test_it_serves_quality_and_exclusions_in_the_api(
    campaign: Campaign, manager: User, login: Any
) -> None:
    client = login(manager)
    base = f"/api/campaigns/{campaign.pk}"
    rows = client.get(f"{base}/annotator-quality/").json()
    assert [row["annotator"] for row in rows] == ["annotator00", "annotator01"]
    assert rows[0]["annotations"] == 12
    assert rows[0]["left_out"] is None
    # The two annotators agree on all 12 pairs: nothing to test against, Fisher's p is 1.
    assert (rows[0]["agreement_count"], rows[0]["agreement_units"]) == (12, 12)
    assert (rows[0]["agreement_p_value"], rows[0]["agreement_p_holm"]) == (1.0, 1.0)
    assert rows[0]["position_p_holm"] >= rows[0]["position_p_value"]
    assert rows[0]["outliers"] == []
    html = dashboard(client, campaign)
    assert "12 of 12, Holm p 1.000" in html
    assert "corrected for testing every annotator (Holm)" in html

    refused = send(client, "POST", f"{base}/exclusions/", {"annotator": "annotator00"})
    assert refused.status_code == 400
    assert "reason" in refused.json()["errors"]
    stranger = send(client, "POST", f"{base}/exclusions/", {"annotator": "manager", "reason": "x"})
    assert stranger.status_code == 400
    assert "annotator" in stranger.json()["errors"]
    created = send(
        client, "POST", f"{base}/exclusions/", {"annotator": "annotator00", "reason": "bot"}
    )
    assert created.status_code == 201
    assert created.json()["excluded_by"] == "manager"
    assert client.get(f"{base}/annotator-quality/").json()[0]["left_out"] == "manager_excluded"
    annotator_id = created.json()["annotator_id"]
    lifted = send(client, "POST", f"{base}/exclusions/{annotator_id}/lift/")
    assert lifted.status_code == 200
    assert lifted.json()["lifted_by"] == "manager"
    again = send(client, "POST", f"{base}/exclusions/{annotator_id}/lift/")
    assert again.status_code == 400
    history = client.get(f"{base}/exclusions/").json()
    assert len(history) == 1


def test_it_edits_the_quality_thresholds_in_the_api(
    campaign: Campaign, manager: User, login: Any
) -> None:
    client = login(manager)
    url = f"/api/campaigns/{campaign.pk}/"
    bad = send(client, "PATCH", url, {"position_bias_max_p": 1.5, "fast_answer_seconds": -1})
    assert bad.status_code == 400
    assert set(bad.json()["errors"]) == {"position_bias_max_p", "fast_answer_seconds"}
    good = send(client, "PATCH", url, {"position_bias_max_p": 0.05, "fast_answer_seconds": 4})
    assert good.status_code == 200
    assert good.json()["position_bias_max_p"] == 0.05
    assert good.json()["fast_answer_seconds"] == 4.0


def test_it_keeps_the_audit_until_an_annotation_exclusion_or_threshold_changes(
    campaign: Campaign, manager: User, django_assert_max_num_queries: Any
) -> None:
    first = campaign_audit_cached(campaign, resamples=0)
    stamp = change_stamp(campaign)
    # A reload reads the change stamp only (six aggregate queries), not the annotations.
    with django_assert_max_num_queries(6):
        assert campaign_audit_cached(campaign, resamples=0) == first

    third = User.objects.get(username="annotator02")
    exclude = User.objects.get(username="annotator00")
    exclude_annotator(campaign, exclude, "bot", by=manager)
    assert change_stamp(campaign) != stamp
    excluded = campaign_audit_cached(campaign, resamples=0)
    assert excluded["counts"]["undecided"] == 12
    assert excluded["excluded_annotators"] == ["annotator00"]

    assignment = next_assignment(campaign, third, now=NOW)
    assert assignment is not None
    submit_form(assignment, now=NOW, rubric_fit=assignment.chosen_position)
    assert campaign_audit_cached(campaign, resamples=0)["counts"]["validated"] == 1

    campaign.majority_threshold = 0.9
    campaign.save(update_fields=["majority_threshold"])
    assert (
        campaign_audit_cached(campaign, resamples=0)["settings"]["thresholds"]["majority_threshold"]
        == 0.9
    )


def test_the_kept_audit_follows_model_annotators_and_the_planned_sample(
    campaign: Campaign,
) -> None:
    """The report shows model annotators and a planned sample's estimate: storing a model's
    answers or changing the plan moves the change stamp, so the kept report is never stale."""
    first = campaign_audit_cached(campaign, resamples=0)
    assert "model_annotators" not in first
    assert "sample_estimate" not in first
    stamp = change_stamp(campaign)

    run = EvaluationRun.objects.create(campaign=campaign, model_name="tiny", mode=ANNOTATOR_MODE)
    assert change_stamp(campaign) != stamp
    item = campaign.items.filter(kind=CampaignItem.Kind.REGULAR).first()
    assert item is not None
    stamp = change_stamp(campaign)
    ModelAnswer.objects.create(
        run=run,
        pair=item.pair,
        question="rubric_fit",
        chosen_position="A",
        reply="A",
        answer="chosen",
    )
    assert change_stamp(campaign) != stamp
    [shown] = campaign_audit_cached(campaign, resamples=0)["model_annotators"]
    assert shown["run"] == run.pk

    plan = plan_for_dataset(campaign.dataset, PlanTargets(half_width=0.3), k=2)
    campaign.sample_plan = plan.as_json()
    campaign.save(update_fields=["sample_plan"])
    estimate = campaign_audit_cached(campaign, resamples=0)["sample_estimate"]
    assert estimate == sampling.audit_estimate(
        plan.as_json(), campaign_audit(campaign, resamples=0)["validity"]["per_category"]
    )


def test_it_sets_the_quality_thresholds_when_creating_a_campaign(
    dataset: Dataset, manager: User, login: Any
) -> None:
    client = login(manager)
    data = campaign_form(
        dataset, min_gold_accuracy="0.75", position_bias_max_p="0.01", fast_answer_seconds="6"
    )
    assert client.post(reverse("campaign_create"), data).status_code == 302
    created = Campaign.objects.get()
    assert (created.min_gold_accuracy, created.position_bias_max_p) == (0.75, 0.01)
    assert created.fast_answer_seconds == 6.0
    refused = client.post(
        reverse("campaign_create"), campaign_form(dataset, name="other", position_bias_max_p="-1")
    )
    assert refused.status_code == 200
    assert Campaign.objects.count() == 1


def test_it_keeps_the_audit_while_only_another_campaign_gets_answers(
    campaign: Campaign, dataset: Dataset, django_assert_max_num_queries: Any
) -> None:
    first = campaign_audit_cached(campaign, resamples=0)
    other = active_campaign(dataset, name="elsewhere", k=1)
    (someone,) = annotators(other, 1, prefix="elsewhere")
    assignment = next_assignment(other, someone, now=NOW)
    assert assignment is not None
    submit_form(assignment, now=NOW)
    # Annotations moved somewhere: the campaign's own are counted (one query more), found
    # unchanged, and the kept audit is served.
    with django_assert_max_num_queries(7):
        assert campaign_audit_cached(campaign, resamples=0) is first
    with django_assert_max_num_queries(6):
        assert campaign_audit_cached(campaign, resamples=0) is first
