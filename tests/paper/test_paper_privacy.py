"""The paper zip is meant for sharing: its numbers.json and every other file name annotators
(and the managers who adjudicated) by the export's pseudonyms, never by username or Prolific
id, so that nothing in it links a pseudonym to a person."""

import io
import zipfile
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from prb_annotate.exports.export import export_split
from prb_annotate.exports.pseudonyms import pseudonym
from prb_annotate.models import Campaign, Membership
from prb_annotate.simulation.demo import SIMULATED_CAMPAIGN


@pytest.fixture
def simulated(db: None) -> Campaign:
    call_command("demo_setup", stdout=StringIO())
    campaign = Campaign.objects.get(name=SIMULATED_CAMPAIGN)
    # A study participant: the username holds the Prolific id.
    member = Membership.objects.filter(campaign=campaign, role="annotator").first()
    assert member is not None
    member.user.username = "prolific-5f0c8e1e2b3a4c5d6e7f8091"
    member.user.save()
    return campaign


def zip_texts(content: bytes) -> dict[str, str]:
    archive = zipfile.ZipFile(io.BytesIO(content))
    return {
        name: archive.read(name).decode("utf-8", "replace")
        for name in archive.namelist()
        if not name.endswith((".pdf",))
    }


def test_the_paper_zip_names_no_account(simulated: Campaign, login: Any, tmp_path: Path) -> None:
    manager = User.objects.get(username="manager")
    response = login(manager).get(reverse("campaign_audit_paper", args=[simulated.pk]))
    assert response.status_code == 200
    files = zip_texts(response.content)
    members = Membership.objects.filter(campaign=simulated).select_related("user")
    usernames = {m.user.username for m in members if m.role == "annotator"}
    assert "prolific-5f0c8e1e2b3a4c5d6e7f8091" in usernames
    for name, text in files.items():
        for username in usernames:
            assert f'"{username}"' not in text, (name, username)
        assert "5f0c8e1e2b3a4c5d6e7f8091" not in text, name
    numbers = next(text for name, text in files.items() if name.endswith("numbers.json"))
    # The annotator table names the export's pseudonyms: the same as annotations.jsonl.
    export_split(simulated, tmp_path / "export", subset="all", fmt="jsonl")
    exported = (tmp_path / "export" / "annotations.jsonl").read_text()
    shown = {pseudonym(simulated.pk, m.user_id) for m in members if m.role == "annotator"}
    in_paper = {p for p in shown if f'"{p}"' in numbers}
    assert in_paper
    assert in_paper <= {p for p in shown if p in exported}
