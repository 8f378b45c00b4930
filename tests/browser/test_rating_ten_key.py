"""The top of a 10-point rating scale has a key, in a real Chromium: 0 rates 10, as on a number
row, and both help texts say so; on a shorter scale 0 still rates nothing and says why."""

import pytest
from django.urls import reverse

from prb_annotate.models import Campaign
from tests.support.browser import log_in
from tests.support.pages import active_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DASH = "\N{EN DASH}"  # as the pages write a range of keys


def open_item(page, base_url: str, campaign: Campaign) -> None:
    page.goto(base_url + reverse("annotate", args=[campaign.pk]))


def first_rating(campaign: Campaign) -> str:
    return f"input[name=quality_A_{campaign.quality_criteria[0]}]"


def rating_keys_help(page) -> str:
    return page.text_content("#shortcuts dl.keys dt") or ""


def guidelines_keyboard(page, base_url: str, campaign: Campaign) -> str:
    page.goto(base_url + reverse("annotate_guidelines", args=[campaign.pk]))
    return page.locator("section.card", has_text="Every answer has a key").inner_text()


def test_zero_rates_ten_only_where_the_scale_has_ten(
    live_server, browser, dataset, annotator
) -> None:
    ten = active_campaign(dataset, annotator, name="ten points", rating_scale_max=10)
    five = active_campaign(dataset, annotator, name="five points")
    assert five.rating_scale_max == 5
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    log_in(page, live_server.url, annotator.username)

    open_item(page, live_server.url, ten)
    assert page.locator(first_rating(ten)).count() == 10
    page.keyboard.press("0")
    assert page.locator(f"{first_rating(ten)}:checked").get_attribute("value") == "10"
    assert page.text_content("#key-message") == ""
    assert rating_keys_help(page) == f"1{DASH}9 (0 for 10)"
    # Every rating with 0, then 0 on the first comparison question: it has no tenth answer.
    ratings = 2 * len(ten.quality_criteria)
    for _ in range(ratings - 1):
        page.keyboard.press("0")
    assert page.locator("input[value='10']:checked").count() == ratings
    page.keyboard.press("0")
    assert page.locator("input[name=rubric_fit]:checked").count() == 0
    assert page.text_content("#key-message") == (
        "“Which response better fits this user's rubric and profile?” has 3 answers: "
        "press 1 to 3, or its letter."
    )
    assert f"Every answer has a key: 1{DASH}9 (0 for 10) for ratings," in guidelines_keyboard(
        page, live_server.url, ten
    )

    open_item(page, live_server.url, five)
    page.keyboard.press("0")
    assert page.locator("input[type=radio]:checked").count() == 0
    assert page.text_content("#key-message") == "There is no rating 0: ratings go from 1 to 5."
    assert rating_keys_help(page) == f"1{DASH}5"
    assert f"Every answer has a key: 1{DASH}5 for ratings," in guidelines_keyboard(
        page, live_server.url, five
    )
    page.close()
