"""The annotation page in a real Chromium: an annotator logs in and judges three pairs with the
keyboard only, a reload keeps the reserved pair and the submitted work, the answers typed are
the answers stored, hostile model text does not run, and the page holds up at desktop and
phone widths (screenshots in tests/artifacts/)."""

import pytest
from django.urls import reverse

from prb_annotate.models import Annotation, Assignment, Campaign, Pair
from tests.support.browser import ARTIFACTS, log_in, shown_assignment_id
from tests.support.pages import active_campaign, form_answers

HOSTILE = (
    "\n\n<script>window.__pwned = 1; document.title = 'pwned'</script>"
    "\n\n<img src=x onerror=\"window.__pwned = 2; document.title = 'pwned'\">"
    "\n\n[click me](javascript:window.__pwned=3)"
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def answer_with_keys(page, keys: str) -> None:
    for key in keys:
        page.keyboard.press(key)


def submit_with_keyboard(page) -> None:
    with page.expect_navigation():
        page.keyboard.press("Control+Enter")


def test_it_annotates_three_pairs_with_the_keyboard(
    live_server, browser, dataset, annotator
) -> None:
    Pair.objects.filter(dataset=dataset).update(chosen="Chosen text." + HOSTILE)
    Pair.objects.filter(dataset=dataset).update(rejected="Rejected text." + HOSTILE)
    campaign = active_campaign(dataset, annotator)
    criteria = campaign.quality_criteria
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log_in(page, live_server.url, annotator.username)
    page.goto(live_server.url + reverse("annotate", args=[campaign.pk]))
    title = page.title()

    # (ratings of A, ratings of B, better fit, differentiator, confidence) for each pair,
    # typed as keys: three criteria per side, then a letter for each choice.
    typed = [
        ("543", "222", "a", "p", "h"),
        ("444", "555", "b", "q", "m"),
        ("333", "333", "t", "n", "l"),
    ]
    seen: list[int] = []
    for index, (ratings_a, ratings_b, fit, differentiator, confidence) in enumerate(typed):
        assignment_id = shown_assignment_id(page)
        seen.append(assignment_id)
        if index == 1:
            # Half an answer, then a reload: the same pair comes back and the first is kept.
            answer_with_keys(page, ratings_a)
            page.reload()
            assert shown_assignment_id(page) == assignment_id
            assert Annotation.objects.filter(assignment__annotator=annotator).count() == 1
            assert page.locator("input[type=radio]:checked").count() == 0
        if index == 2:
            # Submitting too early names what is missing and moves to it.
            page.keyboard.press("Control+Enter")
            assert (
                page.text_content("#form-status") == f"{2 * len(criteria) + 3} answers are missing."
            )
            assert page.evaluate("document.activeElement.name") == f"quality_A_{criteria[0]}"
            page.screenshot(path=str(ARTIFACTS / "annotate_1280_missing.png"))
        answer_with_keys(page, ratings_a + ratings_b + fit + differentiator + confidence)
        if index == 0:
            page.keyboard.press("c")
            page.keyboard.type("clear fit")  # letters typed here are text, not shortcuts
            page.keyboard.press("Escape")
            page.keyboard.press("f")
            page.screenshot(path=str(ARTIFACTS / "annotate_1280_filled.png"), full_page=True)
        submit_with_keyboard(page)

    assert len(set(seen)) == 3
    current = Annotation.objects.filter(assignment__annotator=annotator, is_current=True)
    assert current.count() == 3
    for assignment_id, (ratings_a, ratings_b, fit, differentiator, confidence) in zip(
        seen, typed, strict=True
    ):
        annotation = current.get(assignment_id=assignment_id)
        position = Assignment.objects.get(pk=assignment_id).chosen_position
        by_side = {
            "A": dict(zip(criteria, map(int, ratings_a), strict=True)),
            "B": dict(zip(criteria, map(int, ratings_b), strict=True)),
        }
        other = "B" if position == "A" else "A"
        assert annotation.quality_chosen == by_side[position]
        assert annotation.quality_rejected == by_side[other]
        assert annotation.rubric_fit_as_position(position) == {"a": "A", "b": "B", "t": "tie"}[fit]
        assert (
            annotation.differentiator
            == {"p": "preference", "q": "quality", "n": "none"}[differentiator]
        )
        assert annotation.confidence == {"h": "high", "m": "medium", "l": "low"}[confidence]
        assert annotation.time_on_task_ms is not None
    first = current.get(assignment_id=seen[0])
    assert (first.comment, first.flagged) == ("clear fit", True)
    assert not current.exclude(assignment_id=seen[0]).filter(flagged=True).exists()

    # Model text was on every page: nothing of it ran.
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.title() == title
    assert page.locator(".response-text img, .response-text script").count() == 0
    assert page.locator('.response-text a[href^="javascript"]').count() == 0
    page.close()


def test_it_lays_out_at_desktop_and_phone_widths(live_server, browser, dataset, annotator) -> None:
    pair = dataset.pairs.order_by("external_id").first()
    Pair.objects.filter(dataset=dataset).update(
        rejected="A long answer.\n\n"
        + "Every morning, plan the day in three blocks and keep one evening free. " * 12
        + "\n\n```\nmonday: run 8 km\n```"
    )
    assert pair is not None
    campaign = active_campaign(dataset, annotator, quota_per_annotator=10)
    ARTIFACTS.mkdir(exist_ok=True)
    widths = {"desktop": (1280, 900), "phone": (390, 844)}
    boxes = {}
    for name, (width, height) in widths.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        log_in(page, live_server.url, annotator.username)
        page.goto(live_server.url + reverse("annotate", args=[campaign.pk]))
        page.screenshot(path=str(ARTIFACTS / f"annotate_{width}.png"), full_page=True)
        page.screenshot(path=str(ARTIFACTS / f"annotate_{width}_top.png"))
        boxes[name] = (
            page.locator("#response-A").bounding_box(),
            page.locator("#response-B").bounding_box(),
        )
        # Nothing wider than the screen: no sideways scrolling.
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.close()
    a, b = boxes["desktop"]
    assert a is not None
    assert b is not None
    assert a["y"] == b["y"]
    assert a["x"] < b["x"]
    a, b = boxes["phone"]
    assert a is not None
    assert b is not None
    assert b["y"] > a["y"] + a["height"]  # stacked


def test_it_shows_the_dashboard_and_pauses_the_campaign(
    live_server, browser, dataset, manager, annotator, other_annotator
) -> None:
    from prb_annotate.campaigns.annotating import parse_submission, submit
    from prb_annotate.campaigns.assignment import next_assignment

    campaign = active_campaign(
        dataset, annotator, other_annotator, quota_per_annotator=6, prolific_study_id="study-1"
    )
    for index in range(2):
        assignment = next_assignment(campaign, annotator)
        assert assignment is not None
        data = form_answers(campaign, client_token=f"t{index}")
        submission = parse_submission(data, assignment=assignment)
        submit(
            assignment.pk,
            annotator,
            submission.answers,
            client_token=f"t{index}",
            time_on_task_ms=20_000 + index * 10_000,
        )
    next_assignment(campaign, other_annotator)
    ARTIFACTS.mkdir(exist_ok=True)
    for width, height in [(1280, 900), (390, 844)]:
        page = browser.new_page(viewport={"width": width, "height": height})
        log_in(page, live_server.url, manager.username)
        page.goto(live_server.url + reverse("campaign_detail", args=[campaign.pk]))
        # bob is given one of the two pairs alice started: pairs are finished before new ones.
        assert page.text_content("#items-in-progress") == "2"
        assert campaign.invite_token in (page.text_content("#invite-url") or "")
        # The long link wraps inside its card, on a phone too.
        assert page.evaluate(
            "(() => { const url = document.querySelector('#invite-url');"
            " const card = url.closest('.card');"
            " return url.getBoundingClientRect().right"
            " <= card.getBoundingClientRect().right + 0.5; })()"
        )
        page.screenshot(path=str(ARTIFACTS / f"dashboard_{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        # On a phone the annotators' table scrolls sideways rather than squeezing their names
        # (an imported id such as c3:057d40a00d6860c4 once stood one letter a line).
        name_width = page.evaluate(
            "document.querySelector('#quality-table tbody td').getBoundingClientRect().width"
        )
        assert name_width >= 7 * 16 - 0.5
        if width == 1280:
            with page.expect_navigation():
                page.get_by_role("button", name="Pause").click()
            assert page.text_content("#campaign-status") == "paused"
            campaign.refresh_from_db()
            assert campaign.status == Campaign.Status.PAUSED
            page.goto(live_server.url + reverse("campaign_create"))
            page.select_option("#id_dataset", label=dataset.name)
            page.fill("#id_name", "second round")
            page.fill("#id_sample", "4")
            page.fill("#id_guidelines", "Judge **carefully**.")
            page.screenshot(path=str(ARTIFACTS / "campaign_create_1280.png"), full_page=True)
            with page.expect_navigation():
                page.get_by_role("button", name="Create campaign").click()
            created = Campaign.objects.get(name="second round")
            assert page.url.endswith(reverse("campaign_detail", args=[created.pk]))
            assert page.text_content("#campaign-status") == "draft"
        page.close()


def test_it_takes_a_prolific_participant_from_invite_to_completion(
    live_server, browser, dataset
) -> None:
    from prb_annotate.models import Membership

    completion = live_server.url + "/login/?completed=yes"
    campaign = active_campaign(dataset, quota_per_annotator=1, completion_url=completion)
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 390, "height": 844})
    invite = reverse("join", args=[campaign.invite_token])
    page.goto(f"{live_server.url}{invite}?PROLIFIC_PID=abc123&STUDY_ID=s1&SESSION_ID=x9")
    page.screenshot(path=str(ARTIFACTS / "join_390.png"))
    with page.expect_navigation():
        page.keyboard.press("Enter")  # the Start button has the focus
    answer_with_keys(page, "444" + "444" + "t" + "n" + "m")
    submit_with_keyboard(page)
    assert page.url.endswith(reverse("annotate_done", args=[campaign.pk]))
    page.screenshot(path=str(ARTIFACTS / "done_390.png"))
    page.wait_for_url(completion)  # the page's meta refresh
    membership = Membership.objects.get(campaign=campaign)
    assert (membership.participant_id, membership.study_id, membership.session_id) == (
        "abc123",
        "s1",
        "x9",
    )
    assert Annotation.objects.filter(assignment__annotator=membership.user).count() == 1
    page.close()
