"""A paid Prolific study from an empty database to the Prolific CSVs, in a real Chromium: the
manager uploads pairs and sets up a campaign with consent, a study id, a completion and a
no-places URL from the pages; the try-the-flow link opens on that campaign; one participant
starts an item on a desktop and finishes it on a phone (a second browser context, the same
Prolific ids), one returns the study mid-way (their item is back in the queue at once), one
takes what is left; one who arrives when every place is taken is told so before consent and
given the no-places code; the manager downloads the approvals and bonuses."""

import csv
import io
import os
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import override_settings

from prb_annotate.models import AnswerDraft, Assignment, Campaign, Participant
from tests.browser.test_browser_study_walk import (
    BOSS_PASSWORD,
    annotate_one,
    records,
    upload_as_boss,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORT = {"width": 1280, "height": 900}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
STUDY = "walkstudy01"
PAIRS = 5


def study_link(invite_url: str, participant: str) -> str:
    values = {"PROLIFIC_PID": participant, "STUDY_ID": STUDY, "SESSION_ID": f"s-{participant}"}
    return f"{invite_url}?{urlencode(values)}"


def join_with_consent(page, url: str) -> None:
    page.goto(url)
    page.check("#id_consent")
    with page.expect_navigation():
        page.click("#start-button")
    page.wait_for_selector("#annotation-form")


def set_up_campaign(manager, base: str, dataset_file) -> Campaign:
    """Upload, create, configure and start the campaign from the pages."""
    upload_as_boss(manager, base, dataset_file)
    manager.click("#create-campaign")
    manager.fill("#id_name", "Paid walk")
    manager.fill("#id_annotations_per_pair", "1")
    manager.click("#group-joining > summary")
    manager.fill("#id_consent_text", "You agree that your answers are used for research.")
    manager.click("#group-crowd > summary")
    manager.fill("#id_quota_per_annotator", "2")
    manager.fill("#id_completion_url", f"{base}/completed/?cc=DONE123")
    manager.fill("#id_no_places_url", f"{base}/completed/?cc=FULL456")
    manager.fill("#id_prolific_study_id", STUDY)
    with manager.expect_navigation():
        manager.click("button.primary:has-text('Create campaign')")
    with manager.expect_navigation():
        manager.click("#status-actions button:has-text('Start')")
    return Campaign.objects.get(name="Paid walk")


def held_by(campaign: Campaign, participant: str) -> int:
    return Assignment.objects.filter(
        campaign=campaign,
        annotator__participant__participant_id=participant,
        status=Assignment.Status.RESERVED,
    ).count()


# Every browser of the walk comes from the loopback network: one network may make every account
# and hold every slot here.
@override_settings(PRB_JOIN_SHARE_PER_ADDRESS=1.0, PRB_SLOT_SHARE_PER_NETWORK=1.0)
def test_a_paid_study_runs_from_an_empty_database_to_the_prolific_csvs(
    live_server, browser, tmp_path
) -> None:
    os.environ["DJANGO_SUPERUSER_PASSWORD"] = BOSS_PASSWORD
    call_command("createsuperuser", "--noinput", "--username", "boss", "--email", "b@example.org")
    assert User.objects.count() == 1
    base = live_server.url
    dataset_file = tmp_path / "paid.jsonl"
    dataset_file.write_text(records(PAIRS), encoding="utf-8")
    manager = browser.new_context(viewport=VIEWPORT).new_page()
    campaign = set_up_campaign(manager, base, dataset_file)
    assert campaign.prolific_study_id == STUDY
    invite_url = manager.text_content("#invite-url")
    assert invite_url

    # The try-the-flow link carries the campaign's own study id: the join page opens.
    try_url = manager.get_attribute("#try-participant", "href")
    assert try_url
    assert f"STUDY_ID={STUDY}" in try_url
    trial = browser.new_context(viewport=VIEWPORT).new_page()
    response = trial.goto(try_url)
    assert response is not None
    assert response.status == 200
    assert trial.locator("#consent").is_visible()
    trial.context.close()

    # One participant starts on a desktop, leaves an answer unsubmitted, and finishes the item
    # on a phone with the same Prolific ids: the draft is there.
    desk = browser.new_context(viewport=VIEWPORT).new_page()
    join_with_consent(desk, study_link(invite_url, "P-RESUMER"))
    desk.locator("input[name=rubric_fit][value=B]").evaluate("input => input.click()")
    with desk.expect_response(lambda r: "/draft/" in r.url and r.status == 204):
        desk.keyboard.press("c")
        desk.keyboard.type("B reads my posts.")
    phone = browser.new_context(**PHONE).new_page()
    join_with_consent(phone, study_link(invite_url, "P-RESUMER"))
    assert phone.input_value("textarea[name=comment]") == "B reads my posts."
    assert phone.locator("input[name=rubric_fit][value=B]").is_checked()
    assert Participant.objects.filter(campaign=campaign).count() == 1
    desk.context.close()
    phone.context.close()
    finisher = browser.new_context(viewport=VIEWPORT).new_page()
    join_with_consent(finisher, study_link(invite_url, "P-RESUMER"))
    annotate_one(finisher)
    annotate_one(finisher)
    finisher.wait_for_selector("#completion-link")
    assert "DONE123" in (finisher.get_attribute("#completion-link", "href") or "")
    assert not AnswerDraft.objects.exists()

    # One participant answers an item, then returns the study: the item they held is back in
    # the queue at once.
    returner = browser.new_context(viewport=VIEWPORT).new_page()
    join_with_consent(returner, study_link(invite_url, "P-RETURNER"))
    annotate_one(returner)
    assert held_by(campaign, "P-RETURNER") == 1
    returner.click("#return-study-link")
    with returner.expect_navigation():
        returner.click("#return-form button[type=submit]")
    assert "1 item you held was given back" in returner.text_content("#return-done")
    assert held_by(campaign, "P-RETURNER") == 0

    # The next participant takes the two pairs left, the one given back among them.
    last = browser.new_context(viewport=VIEWPORT).new_page()
    join_with_consent(last, study_link(invite_url, "P-LAST"))
    annotate_one(last)
    annotate_one(last)
    last.wait_for_selector("#completion-link")
    answered = Assignment.objects.filter(campaign=campaign, status=Assignment.Status.SUBMITTED)
    assert answered.count() == PAIRS

    # Every place is taken: a newcomer is told so before consent, with the no-places code.
    late = browser.new_context(viewport=VIEWPORT).new_page()
    response = late.goto(study_link(invite_url, "P-LATE"))
    assert response is not None
    assert response.status == 409
    assert late.locator("#no-places").is_visible()
    assert late.locator("#consent").count() == 0
    assert "FULL456" in late.text_content("#no-places-code")
    assert not Participant.objects.filter(participant_id="P-LATE").exists()

    # The manager's Prolific page: approvals and bonuses for those who submitted.
    manager.click("#prolific-link")
    with manager.expect_download() as approvals:
        manager.click("#approvals-csv")
    rows = list(csv.DictReader(io.StringIO(approvals.value.path().read_text())))
    decisions = {row["participant_id"]: row["decision"] for row in rows}
    assert {"P-RESUMER", "P-LAST"} <= set(decisions)
    assert decisions["P-RESUMER"] == decisions["P-LAST"] == "approve"
    with manager.expect_download() as bonuses:
        manager.click("#bonuses-csv")
    bonus_ids = {line.split(",")[0] for line in bonuses.value.path().read_text().splitlines()}
    assert "P-LATE" not in bonus_ids
    for page in (manager, finisher, returner, last, late):
        page.context.close()
