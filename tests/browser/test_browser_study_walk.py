"""A whole study run from the pages, in a real Chromium, from an empty database that holds
only the account ``createsuperuser`` made: the manager uploads a dataset, previews a planned
sample (which appears where they are looking), creates a campaign, adds two annotators (one
from a CSV) and edits the completion URL; an annotator sets a password through the one-time
link and annotates; a visitor signs up through the invite and annotates; a study participant
finishes their quota and reaches the completion URL."""

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connections
from django.test import override_settings

from prb_annotate.models import Annotation, Campaign, Dataset, Membership

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test
# body are still plain synchronous calls on the test's own connection.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BOSS_PASSWORD = "boss-password-for-the-walk"
ANNOTATOR_PASSWORD = "annotator-password-42"
VIEWPORT = {"width": 1280, "height": 900}
# One item answered with the keyboard: ratings of A then B (three criteria), the better fit,
# the main difference and the confidence.
KEYS = "543222aph"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browser() -> Iterator:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium to run the browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
        # ORM calls made while Playwright runs get a connection of their own; close it, or
        # PostgreSQL refuses to drop the test database at the end.
        connections.close_all()


def records(count: int) -> str:
    rows = [
        {
            "id": f"walk-{index}",
            "question": f"Which running plan suits me, question {index}?",
            "profile": [{"id": f"walk-{index}-p", "category": "Sports", "text": "I run."}],
            "rubric_aspects": [{"aspect": "brevity", "evidence": "short posts", "reason": "busy"}],
            "narrative": "I want a short plan.",
            "category": "Sports" if index % 2 else "Lifestyle",
            "chosen": f"Three short runs a week, plan {index}.",
            "rejected": f"A long, detailed plan {index} with many sections.",
        }
        for index in range(count)
    ]
    return "".join(json.dumps(row) + "\n" for row in rows)


def annotate_one(page) -> None:
    """Answer the item on the page with the keyboard and submit it."""
    # Once annotate.js has run (it marks the page "js" as it binds the keys): a key pressed
    # before that is lost, on a loaded machine, and Ctrl+Enter then submits nothing.
    page.wait_for_selector("html.js #annotation-form")
    for key in KEYS:
        page.keyboard.press(key)
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")


def upload_as_boss(page, base: str, dataset_file: Path) -> None:
    """Log in as the superuser from the home page and upload ``dataset_file`` from the pages."""
    page.goto(base + "/")
    page.fill("input[name=username]", "boss")
    page.fill("input[name=password]", BOSS_PASSWORD)
    with page.expect_navigation():
        page.press("input[name=password]", "Enter")
    page.click("text=Upload a dataset")
    page.set_input_files("#id_file", str(dataset_file))
    page.click("#upload-button")
    page.wait_for_url("**/datasets/*/")


def in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return 0 <= box["y"] < VIEWPORT["height"]


# Every browser of the walk comes from the loopback network, which a small campaign's share of
# new accounts per network (one of its twelve slots) would stop at the second, and its share of
# the slots (one) at the second item.
@override_settings(PRB_JOIN_SHARE_PER_ADDRESS=0.5, PRB_SLOT_SHARE_PER_NETWORK=1.0)
def test_it_runs_a_whole_study_from_the_pages(live_server, browser, tmp_path) -> None:
    os.environ["DJANGO_SUPERUSER_PASSWORD"] = BOSS_PASSWORD
    call_command(
        "createsuperuser", "--noinput", "--username", "boss", "--email", "boss@example.org"
    )
    assert User.objects.count() == 1
    assert not Dataset.objects.exists()
    base = live_server.url
    completion = f"{base}/completed/"
    dataset_file = tmp_path / "walk.jsonl"
    dataset_file.write_text(records(6), encoding="utf-8")
    team_csv = tmp_path / "team.csv"
    team_csv.write_text("username,email\nwalker-two,two@example.org\n", encoding="utf-8")

    manager = browser.new_context(viewport=VIEWPORT).new_page()
    # Upload a dataset from the pages, then on to a campaign on it.
    upload_as_boss(manager, base, dataset_file)
    assert "6 created" in manager.text_content(".messages")
    manager.click("#create-campaign")

    # The campaign form: the preview shows where the manager looks.
    manager.fill("#id_name", "Walk study")
    manager.fill("#id_annotations_per_pair", "2")
    manager.click("#group-plan > summary")
    manager.fill("#id_plan_half_width", "0.3")
    with manager.expect_navigation():
        manager.click("#preview-button")
    assert manager.locator("#plan-summary").is_visible()
    assert in_view(manager, "#plan-preview")
    manager.fill("#id_plan_half_width", "")
    manager.click("#group-crowd > summary")
    manager.fill("#id_quota_per_annotator", "2")
    with manager.expect_navigation():
        manager.click("button.primary:has-text('Create campaign')")
    campaign = Campaign.objects.get(name="Walk study")
    assert campaign.items.count() == 6
    with manager.expect_navigation():
        manager.click("#status-actions button:has-text('Start')")

    # Two annotators, one pasted and one from a CSV: their one-time links, shown once.
    manager.fill("#id_usernames", "walker-one")
    manager.set_input_files("#id_csv_file", str(team_csv))
    with manager.expect_navigation():
        manager.click("#add-annotators button[type=submit]")
    # The list first, each name with what adding it does; nothing is made before the click.
    outcomes = {
        row.get_attribute("data-username"): row.get_attribute("data-outcome")
        for row in manager.locator("#annotators-preview-table tbody tr").all()
    }
    assert outcomes == {"walker-one": "new", "walker-two": "new"}
    with manager.expect_navigation():
        manager.click("#confirm-annotators")
    links = {
        row.get_attribute("data-username"): row.locator(".set-password-link").text_content()
        for row in manager.locator("#set-password-links tbody tr").all()
    }
    assert set(links) == {"walker-one", "walker-two"}
    manager.click("text=Back to the dashboard")

    # The completion URL, edited on the settings page.
    manager.click("#settings-link")
    manager.fill("#id_completion_url", completion)
    with manager.expect_navigation():
        manager.click("#settings-form button[type=submit]")
    assert completion in manager.text_content("#completion-url")
    signup_url = manager.text_content("#signup-url")
    try_url = manager.get_attribute("#try-participant", "href")
    assert signup_url
    assert try_url

    # An annotator sets a password through the one-time link, then annotates.
    annotator = browser.new_context(viewport=VIEWPORT).new_page()
    annotator.goto(links["walker-one"])
    annotator.fill("#id_new_password1", ANNOTATOR_PASSWORD)
    annotator.fill("#id_new_password2", ANNOTATOR_PASSWORD)
    with annotator.expect_navigation():
        annotator.click("#set-password-form button[type=submit]")
    assert "Your password is set" in annotator.text_content(".messages")
    annotator.click("text=Walk study")
    annotate_one(annotator)

    # A visitor signs up through the invite and annotates.
    visitor = browser.new_context(viewport=VIEWPORT).new_page()
    visitor.goto(signup_url)
    visitor.fill("#id_username", "walk-visitor")
    visitor.fill("#id_password1", ANNOTATOR_PASSWORD)
    visitor.fill("#id_password2", ANNOTATOR_PASSWORD)
    with visitor.expect_navigation():
        visitor.click("#signup-form button[type=submit]")
    annotate_one(visitor)

    # A study participant does their quota and reaches the completion URL.
    participant = browser.new_context(viewport=VIEWPORT).new_page()
    participant.goto(try_url)
    with participant.expect_navigation():
        participant.click("#join button[type=submit]")
    annotate_one(participant)
    annotate_one(participant)
    participant.wait_for_selector("#completion-link")
    with participant.expect_navigation():
        participant.click("#completion-link")
    assert participant.url == completion
    assert "Submission complete" in participant.text_content("h1")

    answered = Annotation.objects.filter(assignment__campaign=campaign)
    by_user = sorted(answered.values_list("assignment__annotator__username", flat=True))
    participant_name = Membership.objects.get(campaign=campaign, participant_id__startswith="try-")
    assert by_user == sorted(
        [
            "walker-one",
            "walk-visitor",
            participant_name.user.username,
            participant_name.user.username,
        ]
    )
    assert User.objects.get(username="walker-one").check_password(ANNOTATOR_PASSWORD)
    for context_page in (manager, annotator, visitor, participant):
        context_page.context.close()
