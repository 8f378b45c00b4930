"""The managers' pages in a real Chromium at 1366 px: every audit chart readable in the dark and
in the light (text against its background at least 4.5 : 1), every table inside its card (or
scrolling inside it with its first column kept), and no record id broken over two lines
(screenshots in tests/artifacts/); and on a phone, a one-row top bar, charts drawn large enough
to read (their card scrolls) and wide tables that keep their first column in view."""

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.models import Campaign, Dataset, EvaluationRun, PairScore
from tests.support.audit import long_named_campaign
from tests.support.browser import ARTIFACTS, log_in
from tests.support.sampling import TARGETS, pilot, planned_dataset

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# [text, its fill, the background behind it, contrast] for every text of every chart.
CHART_CONTRAST = """() => {
  const rgb = value => (value.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => [r, g, b]
    .map(c => c / 255).map(c => c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)
    .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  const background = el => {
    for (let node = el; node; node = node.parentElement) {
      const colour = rgb(getComputedStyle(node).backgroundColor);
      if (colour.length === 3 || (colour.length === 4 && colour[3] > 0)) return colour;
    }
    return [255, 255, 255];
  };
  return Array.from(document.querySelectorAll('svg.chart text')).map(text => {
    const fill = rgb(getComputedStyle(text).fill);
    const behind = background(text.closest('svg'));
    const [light, dark] = [luminance(fill), luminance(behind)].sort((a, b) => b - a);
    return [text.textContent, fill, behind, (light + 0.05) / (dark + 0.05)];
  });
}"""

# Tables that stick out of their box: a table outside a scrolling wrapper wider than its
# parent, or a wrapper wider than its own parent; a wrapper that scrolls without keeping its
# first column in place; the page itself scrolling sideways.
TABLES_OUT = """() => {
  const out = [];
  const name = el => el.id || el.className || el.tagName;
  for (const table of document.querySelectorAll('main table')) {
    if (!table.getClientRects().length) continue;
    const wrapper = table.parentElement.closest('.table-scroll');
    const box = wrapper || table;
    if (box.getBoundingClientRect().width > box.parentElement.clientWidth + 1)
      out.push(['wider than its card', name(table), box.getBoundingClientRect().width,
                box.parentElement.clientWidth]);
    if (wrapper && wrapper.scrollWidth > wrapper.clientWidth + 1) {
      const first = table.querySelector('tr > :first-child');
      if (getComputedStyle(first).position !== 'sticky')
        out.push(['scrolls without its first column', name(table)]);
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth + 1)
    out.push(['page scrolls sideways', document.documentElement.scrollWidth]);
  return out;
}"""

# Id cells whose text runs over more than one line.
IDS_BROKEN = """() => Array.from(document.querySelectorAll('td.id')).filter(cell => {
  const range = document.createRange();
  range.selectNodeContents(cell);
  return new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top))).size > 1;
}).map(cell => cell.textContent)"""


@pytest.fixture
def audited(dataset: Dataset) -> Campaign:
    return long_named_campaign(dataset)


def long_ids(dataset: Dataset) -> None:
    """Record ids as long as real ones, with hyphens a browser would gladly break at."""
    for index, pair in enumerate(dataset.pairs.order_by("external_id")):
        pair.external_id = f"personalized-rewardbench-art-{index:02d}-{pair.external_id}"
        pair.category = "Art_and_Entertainment_and_Creative_Writing"
        pair.save()


def scored(campaign: Campaign) -> EvaluationRun:
    run = EvaluationRun.objects.create(
        campaign=campaign, model_name="an-organisation/a-reward-model-with-a-long-name-8b"
    )
    for index, item in enumerate(campaign.items.select_related("pair")):
        PairScore.objects.create(
            run=run,
            pair=item.pair,
            score_chosen=12.3456 + index,
            score_rejected=-3.21 * index,
            outcome="correct" if index % 3 else "wrong",
        )
    return run


def check_page(page: Any, url: str, shot: str) -> None:
    page.goto(url)
    page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
    assert page.evaluate(TABLES_OUT) == [], url
    assert page.evaluate(IDS_BROKEN) == [], url


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_every_chart_reads_against_its_background(
    live_server: Any, browser: Any, audited: Campaign, manager: User, scheme: str
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1366, "height": 900}, color_scheme=scheme)
    log_in(page, live_server.url, manager.username)
    for name, url in [
        ("audit", reverse("campaign_audit", args=[audited.pk])),
        ("dashboard", reverse("campaign_detail", args=[audited.pk])),
    ]:
        page.goto(live_server.url + url)
        page.screenshot(path=str(ARTIFACTS / f"charts-{name}-{scheme}.png"), full_page=True)
        texts = page.evaluate(CHART_CONTRAST)
        assert texts, f"no chart text on the {name} page"
        faint = [text for text in texts if text[3] < 4.5]
        assert faint == [], faint
    page.close()


def test_every_table_fits_its_card_at_1366_pixels(
    live_server: Any, browser: Any, audited: Campaign, manager: User
) -> None:
    long_ids(audited.dataset)
    manager.is_superuser = True  # for the admin's campaign page
    manager.save()
    run = scored(audited)
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    log_in(page, live_server.url, manager.username)
    base = live_server.url
    pairs = reverse("campaign_pairs", args=[audited.pk])
    check_page(page, base + reverse("campaign_audit", args=[audited.pk]), "tables-audit.png")
    check_page(page, base + pairs, "tables-pairs.png")
    check_page(page, f"{base}{pairs}?run={run.pk}", "tables-pairs-run.png")
    # With a run chosen, the Pairs list fits without scrolling: its last column in full.
    wrapper = page.locator(".table-scroll:has(#pair-table)")
    assert wrapper.evaluate("el => el.scrollWidth <= el.clientWidth")
    outcome = page.locator("#pair-table th", has_text="Model outcome").bounding_box()
    box = wrapper.bounding_box()
    assert outcome is not None
    assert box is not None
    assert outcome["x"] + outcome["width"] <= box["x"] + box["width"]
    check_page(page, base + reverse("campaign_detail", args=[audited.pk]), "tables-dashboard.png")
    check_page(
        page, base + reverse("dataset_detail", args=[audited.dataset_id]), "tables-dataset.png"
    )
    assert page.locator("td.id").count() == 12
    first = audited.dataset.pairs.order_by("pk").first()
    assert first is not None
    check_page(
        page, base + reverse("pair_detail", args=[audited.dataset_id, first.pk]), "tables-pair.png"
    )
    check_page(page, base + reverse("campaign_pair", args=[audited.pk, first.pk]), "pair.png")
    check_page(
        page, base + reverse("admin:prb_annotate_campaign_change", args=[audited.pk]), "admin.png"
    )
    page.close()


def test_the_planned_sample_table_fits_at_1366_pixels(
    live_server: Any, browser: Any, manager: User
) -> None:
    dataset = planned_dataset()
    campaign = create_campaign(dataset, "planned", k=1, sample_targets=TARGETS, seed=4)
    pilot(campaign, {"fitness": 12, "cooking": 6})
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    log_in(page, live_server.url, manager.username)
    url = live_server.url + reverse("campaign_audit", args=[campaign.pk])
    check_page(page, url, "tables-planned-sample.png")
    assert page.locator("th", has_text="With undecided").first.is_visible()
    page.close()


PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
# On a phone: the top bar's height, tables wider than the box that scrolls them whose first
# column does not stay in view, charts drawn so small that their 12-unit labels shrink below
# 9 px, and whether the page itself scrolls sideways.
PHONE_LAYOUT = """() => {
  const scroller = el => {
    for (let node = el.parentElement; node; node = node.parentElement) {
      if (['auto', 'scroll'].includes(getComputedStyle(node).overflowX)) return node;
    }
    return document.scrollingElement;
  };
  const loose = [];
  for (const table of document.querySelectorAll('main table')) {
    if (!table.getClientRects().length) continue;
    const box = scroller(table);
    const first = table.querySelector('tr > :first-child');
    if (table.getBoundingClientRect().width > box.clientWidth + 1 && first
        && getComputedStyle(first).position !== 'sticky') loose.push(table.id || table.className);
  }
  const tiny = [...document.querySelectorAll('svg.chart')].filter(svg => {
    const width = svg.getBoundingClientRect().width;
    return width && 12 * width / svg.viewBox.baseVal.width < 9;
  }).length;
  return {
    bar: Math.round(document.querySelector('.topbar').getBoundingClientRect().height),
    loose, tiny,
    sideways: document.documentElement.scrollWidth > window.innerWidth + 1,
  };
}"""


def test_the_manager_pages_work_on_a_phone(
    live_server: Any, browser: Any, audited: Campaign, manager: User
) -> None:
    run = scored(audited)
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(**PHONE)
    log_in(page, live_server.url, manager.username)
    for name, url in [
        ("dashboard", reverse("campaign_detail", args=[audited.pk])),
        ("audit", reverse("campaign_audit", args=[audited.pk])),
        ("pairs", reverse("campaign_pairs", args=[audited.pk]) + f"?run={run.pk}"),
        ("evaluations", reverse("campaign_evaluations", args=[audited.pk])),
        ("campaigns", reverse("campaign_list")),
    ]:
        page.goto(live_server.url + url)
        page.screenshot(path=str(ARTIFACTS / f"phone-{name}.png"))
        layout = page.evaluate(PHONE_LAYOUT)
        assert layout == {"bar": layout["bar"], "loose": [], "tiny": 0, "sideways": False}, name
        assert layout["bar"] <= 64, (name, layout["bar"])
    page.close()
