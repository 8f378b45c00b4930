"""A campaign's question set (quality criteria, rating scale) is fixed once answers exist:
answers given on a 1-5 scale cannot be re-read on a 1-4 one. Before any answer it may change."""

import json

import pytest
from django.core.exceptions import ValidationError

from tests.support.audit import add_item, annotate, annotators, make_campaign


def patch(client, campaign, body):
    return client.patch(
        f"/api/campaigns/{campaign.pk}/", json.dumps(body), content_type="application/json"
    )


def test_it_lets_managers_change_the_scale_before_any_answer(dataset, manager, login):
    campaign = make_campaign(dataset)
    response = patch(login(manager), campaign, {"rating_scale_max": 7})
    assert response.status_code == 200
    campaign.refresh_from_db()
    assert campaign.rating_scale_max == 7


def test_it_refuses_a_new_question_set_once_answered(dataset, manager, login):
    campaign = make_campaign(dataset)
    annotate(add_item(campaign, dataset.pairs.first()), annotators(1)[0], chosen=5)
    client = login(manager)
    scale = patch(client, campaign, {"rating_scale_max": 4, "quality_threshold": 3})
    assert scale.status_code == 400
    assert "rating_scale_max" in scale.json()["errors"]
    criteria = patch(client, campaign, {"quality_criteria": ["correctness"]})
    assert criteria.status_code == 400
    assert "quality_criteria" in criteria.json()["errors"]
    campaign.refresh_from_db()
    assert campaign.rating_scale_max == 5
    assert campaign.quality_criteria == ["correctness", "relevance", "helpfulness"]
    # The audit still reads the stored answers on their own scale.
    assert client.get(f"/api/campaigns/{campaign.pk}/agreement/?resamples=0").status_code == 200


def test_it_keeps_the_rule_for_model_forms_too(dataset):
    campaign = make_campaign(dataset)
    annotate(add_item(campaign, dataset.pairs.first()), annotators(1)[0])
    campaign.rating_scale_max = 4
    with pytest.raises(ValidationError) as error:
        campaign.full_clean()
    assert "rating_scale_max" in error.value.message_dict
    campaign.rating_scale_max = 5
    campaign.full_clean()
