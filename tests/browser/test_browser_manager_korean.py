"""A manager whose browser asks for Korean reads the campaign dashboard and the audit in Korean:
headings, table heads, buttons and the audit's chart titles; numbers keep their format
(screenshots in tests/artifacts/)."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from prb_annotate.models import Campaign, Dataset
from tests.support.audit import long_named_campaign
from tests.support.browser import ARTIFACTS, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def audited(dataset: Dataset) -> Campaign:
    return long_named_campaign(dataset)


def headings(page: Any, selector: str) -> list[str]:
    return [text.strip() for text in page.locator(selector).all_inner_texts()]


def test_a_korean_browser_gets_the_dashboard_and_the_audit_in_korean(
    live_server: Any, browser: Any, audited: Campaign, manager: User
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    context = browser.new_context(locale="ko-KR", viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, live_server.url, manager.username)

    page.goto(live_server.url + reverse("campaign_detail", args=[audited.pk]))
    dashboard = headings(page, "main h2")
    assert {"주석자", "품질 관리", "구성원"} <= set(dashboard), dashboard
    assert "Annotators" not in dashboard
    assert page.locator("#quality-table th").first.inner_text().strip() == "주석자"
    page.screenshot(path=str(ARTIFACTS / "dashboard-ko.png"), full_page=True)

    page.goto(live_server.url + reverse("campaign_audit", args=[audited.pk]))
    assert page.locator("h1").inner_text().startswith("감사: ")
    audit = headings(page, "main h2")
    assert {"문항별 일치도", "검증 비율", "위치 편향과 길이 편향", "주석자"} <= set(audit), audit
    assert page.locator("#validity svg").inner_html().count("Wilson 신뢰 구간") >= 1
    # The share keeps its figures: digits and a percent sign, as in English.
    assert page.locator("#overall-share").inner_text().strip()[0].isdigit()
    page.screenshot(path=str(ARTIFACTS / "audit-ko.png"), full_page=True)

    # The same pages without a Korean preference stay English.
    english = browser.new_context(locale="en-US").new_page()
    log_in(english, live_server.url, manager.username)
    english.goto(live_server.url + reverse("campaign_audit", args=[audited.pk]))
    assert "Agreement per question" in headings(english, "main h2")
    # The kept report is the same; the words around it follow each request.
    assert "with Wilson intervals" in english.locator("#validity svg").inner_html()
    context.close()
