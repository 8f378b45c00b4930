"""The campaign export page: managers pick a subset and format and download a zip."""

import io
import json
import zipfile

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Campaign, Membership
from tests.support.exports import annotated_campaign, import_dataset


@pytest.fixture
def campaign(db: None) -> Campaign:
    users = [User.objects.create(username=name) for name in ("alice", "bob", "carol")]
    return annotated_campaign(import_dataset(), users)


def client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_shows_the_form_to_managers(campaign: Campaign) -> None:
    manager = User.objects.create(username="boss", is_staff=True)
    response = client_for(manager).get(reverse("campaign_export", args=[campaign.pk]))
    assert response.status_code == 200
    assert response.context["form"].initial == {}
    assert b"Download zip" in response.content


def test_it_downloads_the_export_as_a_zip(campaign: Campaign) -> None:
    # A campaign manager who is not staff may export too.
    lead = User.objects.create(username="lead")
    add_member(campaign, lead, Membership.Role.MANAGER)
    url = reverse("campaign_export", args=[campaign.pk])
    response = client_for(lead).get(
        url, {"subset": "excluded", "format": "csv", "with_validation": "on"}
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert "attachment" in response["Content-Disposition"]
    archive = zipfile.ZipFile(io.BytesIO(response.getvalue()))
    names = archive.namelist()
    # One top-level folder named as the zip: unzipping it spills nothing around it, and the
    # folder holds what export_split --out writes.
    root = f"export-{campaign.pk}-excluded-csv"
    assert {name.split("/")[0] for name in names} == {root}
    assert f"{root}/manifest.json" in names
    assert f"{root}/Lifestyle_and_Personal_Development/test.csv" in names
    assert f"{root}.zip" in response["Content-Disposition"]
    manifest = json.loads(archive.read(f"{root}/manifest.json"))
    assert manifest["subset"] == "excluded"
    assert manifest["with_validation"] is True
    assert manifest["counts"]["exported_pairs"] == 4


def test_it_shows_errors_for_bad_choices(campaign: Campaign) -> None:
    manager = User.objects.create(username="boss", is_staff=True)
    url = reverse("campaign_export", args=[campaign.pk])
    response = client_for(manager).get(url, {"subset": "everything", "format": "xlsx"})
    assert response.status_code == 200
    assert set(response.context["form"].errors) == {"subset", "format"}


def test_it_hides_the_page_from_everyone_else(campaign: Campaign) -> None:
    url = reverse("campaign_export", args=[campaign.pk])
    response = Client().get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    annotator = User.objects.get(username="alice")
    assert client_for(annotator).get(url).status_code == 404
    assert client_for(annotator).get(url, {"subset": "all"}).status_code == 404
    outsider = User.objects.create(username="mallory")
    assert client_for(outsider).get(url).status_code == 404
