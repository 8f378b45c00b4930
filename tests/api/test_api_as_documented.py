"""The API does what docs/api.md and its schema say: a campaign created with the fields the
schema offers (never a 500), the Pairs page's query string taken unchanged by ``/verdicts/``,
absolute ``submit_url``s for every kind of item, a large answer file for a campaign that is not
external refused before any job is made, and the 403 (never 401) that anonymous requests and
bad tokens get, as the schema documents it."""

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from prb_annotate.api.docs import openapi_schema
from prb_annotate.campaigns.lifecycle import CampaignSetupError, add_member, create_campaign
from prb_annotate.models import Campaign, Dataset, Job
from tests.external.test_files import external_campaign, good_row
from tests.support.audit import add_item, annotate, annotators, make_campaign
from tests.support.campaigns import active_campaign, form_data
from tests.support.campaigns import annotators as members
from tests.support.qualification import screening_campaign


def post_json(client: Client, url: str, body: dict[str, Any] | None = None) -> Any:
    return client.post(url, json.dumps(body or {}), content_type="application/json")


# POST /api/campaigns/: each field its schema offers


def create_request_fields() -> dict[str, Any]:
    """The writable properties of the creation body, as the schema documents them."""
    operation = openapi_schema()["paths"]["/api/campaigns/"]["post"]
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    properties = openapi_schema()["components"]["schemas"][ref.rsplit("/", 1)[-1]]["properties"]
    return {name: field for name, field in properties.items() if not field.get("readOnly")}


@pytest.mark.parametrize("switch", ["study_link_enabled", "signup_link_enabled"])
def test_a_campaign_can_start_with_an_invite_link_off(
    switch: str, dataset: Dataset, manager: User, login
) -> None:
    assert switch in create_request_fields()
    client = login(manager)
    created = post_json(
        client, "/api/campaigns/", {"dataset": dataset.pk, "name": "quiet", switch: False}
    )
    assert created.status_code == 201, created.content
    assert created.json()[switch] is False
    campaign = Campaign.objects.get(name="quiet")
    assert getattr(campaign, switch) is False
    other = "signup_link_enabled" if switch == "study_link_enabled" else "study_link_enabled"
    assert getattr(campaign, other) is True
    kept_on = post_json(
        client, "/api/campaigns/", {"dataset": dataset.pk, "name": "open", switch: True}
    )
    assert kept_on.status_code == 201, kept_on.content
    assert getattr(Campaign.objects.get(name="open"), switch) is True


def test_an_external_campaign_refuses_an_invite_link_on(
    dataset: Dataset, manager: User, login
) -> None:
    client = login(manager)
    body = {"dataset": dataset.pk, "name": "elsewhere", "external": True}
    refused = post_json(client, "/api/campaigns/", {**body, "study_link_enabled": True})
    assert refused.status_code == 400, refused.content
    assert list(refused.json()["errors"]) == ["study_link_enabled"]
    assert "external campaign has no links" in refused.json()["errors"]["study_link_enabled"][0]
    assert not Campaign.objects.filter(name="elsewhere").exists()
    created = post_json(client, "/api/campaigns/", {**body, "signup_link_enabled": False})
    assert created.status_code == 201, created.content
    campaign = Campaign.objects.get(name="elsewhere")
    assert (campaign.study_link_enabled, campaign.signup_link_enabled) == (False, False)


def test_create_campaign_takes_the_link_switches_as_settings(dataset: Dataset) -> None:
    quiet = create_campaign(dataset, "quiet", signup_link_enabled=False)
    assert (quiet.study_link_enabled, quiet.signup_link_enabled) == (True, False)
    with pytest.raises(CampaignSetupError, match=r"^study_link_enabled: an external campaign"):
        create_campaign(dataset, "elsewhere", external=True, study_link_enabled=True)
    external = create_campaign(dataset, "elsewhere", external=True)
    assert (external.study_link_enabled, external.signup_link_enabled) == (False, False)


def test_the_sample_plan_is_read_back_never_written(dataset: Dataset, manager: User, login) -> None:
    assert "sample_plan" not in create_request_fields()
    plan = {"targets": {"half_width": 0.1}, "per_category": {"Lifestyle": 3}}
    created = post_json(
        login(manager),
        "/api/campaigns/",
        {"dataset": dataset.pk, "name": "given a plan", "sample_plan": plan},
    )
    assert created.status_code == 201, created.content
    assert created.json()["sample_plan"] is None
    assert Campaign.objects.get(name="given a plan").sample_plan is None


# GET /api/campaigns/{id}/verdicts/: the Pairs page's query string


class FormReader(HTMLParser):
    """The fields one form sends when submitted as it is shown: each select's chosen option
    (or its first), each input's value."""

    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.fields: list[tuple[str, str]] = []
        self._in_form = False
        self._select: str | None = None
        self._options: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._in_form = values.get("id") == self.form_id
        elif not self._in_form:
            return
        elif tag == "select":
            self._select, self._options = values["name"], []
        elif tag == "option" and self._select is not None:
            self._options.append((values.get("value", ""), "selected" in values))
        elif tag == "input" and "name" in values:
            self.fields.append((values["name"], values.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        elif tag == "select" and self._select is not None:
            chosen = [value for value, selected in self._options if selected]
            self.fields.append((self._select, (chosen or [self._options[0][0]])[0]))
            self._select = None


def page_query(page_html: str, **chosen: str) -> str:
    """The query string the Pairs page's filter form sends, with ``chosen`` values picked."""
    reader = FormReader("pair-filters")
    reader.feed(page_html)
    assert reader.fields, "the Pairs page has no filter form"
    return urlencode([(name, chosen.get(name, value)) for name, value in reader.fields])


@pytest.fixture
def audited(dataset: Dataset) -> Campaign:
    """Six pairs, three answers each: p0000-p0003 validated, p0004-p0005 excluded."""
    campaign = make_campaign(dataset, seed=3, status=Campaign.Status.ACTIVE)
    raters = annotators(3)
    for index, pair in enumerate(dataset.pairs.order_by("external_id")[:6]):
        item = add_item(campaign, pair)
        for rater in raters:
            if index < 4:
                annotate(item, rater)
            else:
                annotate(item, rater, differentiator="quality", rejected=2)
    return campaign


def listed_on_page(client: Client, campaign: Campaign, query: str) -> list[str]:
    page = client.get(f"/campaigns/{campaign.pk}/pairs/?{query}")
    assert page.status_code == 200
    assert 'role="alert"' not in page.content.decode()  # the form took every value
    return [row.verdict.external_id for row in page.context["page"]]


def listed_by_api(client: Client, campaign: Campaign, query: str) -> list[str]:
    answer = client.get(f"/api/campaigns/{campaign.pk}/verdicts/?{query}")
    assert answer.status_code == 200, answer.content
    return [row["external_id"] for row in answer.json()["results"]]


def test_the_pairs_page_query_string_works_on_the_api_unchanged(
    audited: Campaign, manager: User, login
) -> None:
    client = login(manager)
    shown = client.get(f"/campaigns/{audited.pk}/pairs/").content.decode()
    every_filter = page_query(shown)
    # The form sends each filter, the ones left at "any" empty.
    assert "verdict=&" in every_filter
    assert "disagrees=&" in every_filter
    all_pairs = listed_on_page(client, audited, every_filter)
    assert len(all_pairs) == 6
    assert listed_by_api(client, audited, every_filter) == all_pairs
    excluded = page_query(shown, verdict="excluded", sort="-id")
    assert listed_on_page(client, audited, excluded) == ["p0005", "p0004"]
    assert listed_by_api(client, audited, excluded) == ["p0005", "p0004"]


def test_the_verdicts_still_refuse_a_wrong_value_beside_empty_ones(
    audited: Campaign, manager: User, login
) -> None:
    client = login(manager)
    shown = client.get(f"/campaigns/{audited.pk}/pairs/").content.decode()
    url = f"/api/campaigns/{audited.pk}/verdicts/"
    for name, value in [("verdict", "maybe"), ("run", "first"), ("flagged", "often")]:
        refused = client.get(f"{url}?{page_query(shown, **{name: value})}")
        assert refused.status_code == 400, (name, refused.content)
        assert list(refused.json()["errors"]) == [name]
    no_run = client.get(f"{url}?{page_query(shown, disagrees='yes')}")
    assert no_run.status_code == 400
    assert "disagrees" in no_run.json()["errors"]


# submit_url: absolute for every kind of item


def test_a_regular_item_gives_an_absolute_submit_url_that_takes_the_answer(
    dataset: Dataset,
) -> None:
    campaign = active_campaign(dataset, k=2)
    (alice,) = members(campaign, 1)
    client = Client()
    client.force_login(alice)
    item = post_json(client, reverse("api_next", args=[campaign.pk])).json()
    assert item["kind"] == "regular"
    expected = f"http://testserver/api/assignments/{item['assignment']}/submit/"
    assert item["submit_url"] == expected
    submitted = post_json(client, item["submit_url"], form_data(campaign, token="absolute-1"))
    assert submitted.status_code == 201, submitted.content


def test_every_kind_of_item_gives_its_submit_url_in_the_same_form(dataset: Dataset) -> None:
    screened = screening_campaign(dataset, name="screened")
    plain = active_campaign(dataset, name="plain", k=2)
    alice = User.objects.create_user("alice")
    for campaign in (screened, plain):
        add_member(campaign, alice)
    client = Client()
    client.force_login(alice)
    practice = post_json(client, reverse("api_next", args=[screened.pk])).json()
    regular = post_json(client, reverse("api_next", args=[plain.pk])).json()
    assert (practice["kind"], regular["kind"]) == ("practice", "regular")
    assert practice["submit_url"] == "http://testserver" + reverse(
        "api_qualification_submit", args=[practice["item"]]
    )
    assert regular["submit_url"] == "http://testserver" + reverse(
        "api_submit", args=[regular["assignment"]]
    )


# POST /api/campaigns/{id}/answers/import/: a large file for a campaign that is not external


def answers_file(rows: list[dict[str, Any]], name: str = "answers.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, pd.DataFrame(rows).to_csv(index=False).encode())


@pytest.fixture
def background(settings, tmp_path: Path) -> Path:
    """Answer files above 1000 bytes go to a worker; its uploads folder is this test's."""
    settings.PRB_BACKGROUND_IMPORT_BYTES = 1000
    settings.PRB_JOB_DIR = tmp_path / "jobs"
    return tmp_path / "jobs"


def large_rows(campaign: Campaign) -> list[dict[str, Any]]:
    pairs = sorted(campaign.items.values_list("pair__external_id", flat=True))
    return [good_row(pair, rater) for pair in pairs for rater in ("r1", "r2")]


def test_a_large_answer_file_for_a_queue_campaign_is_refused_before_any_job(
    background: Path, dataset: Dataset, manager: User, login
) -> None:
    queue = create_campaign(dataset, "queue", k=2, created_by=manager)
    upload = answers_file(large_rows(queue))
    assert (upload.size or 0) > 1000
    refused = login(manager).post(f"/api/campaigns/{queue.pk}/answers/import/", {"file": upload})
    assert refused.status_code == 400, refused.content
    errors = refused.json()["errors"]
    assert list(errors) == ["file"]
    assert f"campaign {queue.pk} ('queue') is not external" in errors["file"][0]
    assert not Job.objects.exists()
    assert not background.exists() or not any(background.rglob("*.csv"))


def test_a_large_file_of_a_type_not_read_is_refused_before_any_job(
    background: Path, dataset: Dataset, manager: User, login
) -> None:
    external = external_campaign(dataset, manager)
    url = f"/api/campaigns/{external.pk}/answers/import/"
    client = login(manager)
    refused = client.post(url, {"file": answers_file(large_rows(external), "answers.txt")})
    assert refused.status_code == 400, refused.content
    assert "unsupported file type .txt" in refused.json()["errors"]["file"][0]
    assert not Job.objects.exists()
    accepted = client.post(url, {"file": answers_file(large_rows(external))})
    assert accepted.status_code == 202, accepted.content
    assert Job.objects.get().kind == "answers"


# 403, never 401: what the API answers without valid credentials, as the schema says


def sample_path(path: str) -> str:
    """A schema path with each parameter given a row id."""
    while "{" in path:
        start = path.index("{")
        path = path[:start] + "1" + path[path.index("}", start) + 1 :]
    return path


def test_the_schema_documents_the_403_that_bad_credentials_get(db: None) -> None:
    schema = openapi_schema()
    clients = {
        "anonymous": Client(),
        "unknown token": Client(HTTP_AUTHORIZATION="Token not-a-real-token"),
    }
    checked = 0
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            documented = operation["responses"]
            assert "401" not in documented, (method, path)
            for who, client in clients.items():
                answer = client.generic(
                    method.upper(), sample_path(path), "{}", content_type="application/json"
                )
                assert str(answer.status_code) in documented, (who, method, path)
                if answer.status_code == 403:
                    body = answer.json()
                    assert set(body) >= {"detail", "errors"}, body
                    checked += 1
    assert checked > 50  # nearly every operation needs credentials
    described = schema["paths"]["/api/campaigns/"]["get"]["responses"]["403"]["description"]
    assert "Not authenticated" in described
    assert "token" in described


def test_anonymous_and_bad_token_requests_get_403_with_the_documented_words(db: None) -> None:
    anonymous = Client().get("/api/campaigns/")
    assert anonymous.status_code == 403
    assert anonymous.json()["detail"] == "Authentication credentials were not provided."
    bad = Client(HTTP_AUTHORIZATION="Token not-a-real-token").get("/api/campaigns/")
    assert bad.status_code == 403
    assert bad.json()["detail"] == "Invalid token."
