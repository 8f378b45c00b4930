"""Adjudicating with the texts in view: the word-level difference of two answers (pure, then on
the pair page, escaped), a decision that must be chosen, the queue's lists, the gold items'
list, and reason codes read as words."""

import re

import pytest
from django.urls import reverse

from prb_annotate.models import Adjudication
from prb_annotate.web import textdiff
from tests.support.audit import add_item, annotate_all, annotators, make_campaign

REJECTED = {"fit": "rejected"}


def test_the_word_diff_marks_what_only_one_answer_has() -> None:
    segments = textdiff.word_diff("Run 5 km at an easy pace.", "Run 10 km at an easy pace!")
    assert segments is not None
    assert [(s.kind, s.text) for s in segments] == [
        ("equal", "Run "),
        ("delete", "5"),
        ("insert", "10"),
        ("equal", " km at an easy pace"),
        ("delete", "."),
        ("insert", "!"),
    ]
    # 23 characters in both texts, 5 in one only: 2 x 23 / (2 x 23 + 5).
    assert textdiff.shared_share(segments) == pytest.approx(46 / 51)
    assert textdiff.diff_html(segments) == (
        "Run <del>5</del><ins>10</ins> km at an easy pace<del>.</del><ins>!</ins>"
    )


def test_the_word_diff_escapes_markup_and_gives_up_on_huge_texts() -> None:
    segments = textdiff.word_diff("<b>bold</b>", "<i>bold</i>")
    assert segments is not None
    html = textdiff.diff_html(segments)
    assert "<b>" not in html
    assert "<i>" not in html
    assert "&lt;<del>b</del><ins>i</ins>&gt;bold" in html
    assert textdiff.word_diff("x " * textdiff.MAX_TOKENS, "y") is None
    assert textdiff.shared_share([]) == 1.0


@pytest.fixture
def campaign(dataset):
    """p0000 validated, p0001 excluded, p0002 undecided (a 2-2 split), p0003 adjudicated
    validated over an exclusion; p0004 and p0005 gold items."""
    campaign = make_campaign(dataset)
    pairs = list(dataset.pairs.order_by("external_id"))
    pairs[1].chosen = "Stretch <script>alert(1)</script> for five minutes before you run."
    pairs[1].rejected = "Stretch for ten minutes before you run."
    pairs[1].save()
    raters = annotators(4)
    annotate_all(add_item(campaign, pairs[0]), raters, [{}] * 3)
    annotate_all(add_item(campaign, pairs[1]), raters, [REJECTED] * 3)
    split = add_item(campaign, pairs[2], extra_annotations=1)
    annotate_all(split, raters, [{}, {}, REJECTED, REJECTED])
    decided = add_item(campaign, pairs[3])
    annotate_all(decided, raters, [REJECTED] * 3)
    Adjudication.objects.create(item=decided, decision="validated", reason="adjudicator_judgement")
    for pair in pairs[4:6]:
        gold = add_item(campaign, pair, kind="gold", gold_answers={"rubric_fit": "chosen"})
        annotate_all(gold, raters, [{}, {}, REJECTED, {}])
    return campaign


def pair_url(campaign, external_id: str) -> str:
    item = campaign.items.get(pair__external_id=external_id)
    return reverse("campaign_pair", args=[campaign.pk, item.pair_id])


def test_the_pair_page_puts_both_answers_and_their_difference_beside_the_form(
    campaign, manager, login
) -> None:
    page = login(manager).get(pair_url(campaign, "p0001")).content.decode()
    panel = page[page.index('id="adjudication"') :]
    # Both texts and the difference come before the form's own column ends.
    assert panel.index('id="chosen"') < panel.index('class="adjudicate-form"')
    assert panel.index('id="rejected"') < panel.index('class="adjudicate-form"')
    diff = re.search(r'<div class="diff" id="answer-diff-text">(.*?)</div>', panel, re.S)
    assert diff is not None
    assert diff.group(1) == (
        "Stretch<del> &lt;script&gt;alert(1)&lt;/script&gt;</del> for "
        "<del>five</del><ins>ten</ins> minutes before you run."
    )
    assert "<script>alert(1)" not in page


def test_no_decision_is_chosen_in_advance(campaign, manager, login) -> None:
    client = login(manager)
    page = client.get(pair_url(campaign, "p0001")).content.decode()
    select = re.search(r'<select name="decision"[^>]*>(.*?)</select>', page, re.S)
    assert select is not None
    assert "required" in page[select.start() : select.start() + 80]
    assert '<option value="" selected>choose a decision</option>' in select.group(1)
    assert "selected" not in select.group(1).replace('value="" selected', "")
    item = campaign.items.get(pair__external_id="p0001")
    url = reverse("campaign_pair_adjudicate", args=[campaign.pk, item.pair_id])
    refused = client.post(url, {"decision": "", "reason": "adjudicator_judgement"})
    assert refused.status_code == 400
    assert not Adjudication.objects.filter(item=item).exists()


def queue_ids(client, campaign, shown: str | None = None) -> list[str]:
    url = reverse("campaign_adjudication_queue", args=[campaign.pk])
    page = client.get(url, {"show": shown} if shown else {}).content.decode()
    return re.findall(r'<tr data-pair="([^"]+)">', page)


def test_the_queue_lists_undecided_validated_excluded_or_every_pair(
    campaign, manager, login
) -> None:
    client = login(manager)
    assert queue_ids(client, campaign) == ["p0002"]
    assert queue_ids(client, campaign, "validated") == ["p0000", "p0003"]
    assert queue_ids(client, campaign, "excluded") == ["p0001"]
    assert queue_ids(client, campaign, "all") == ["p0000", "p0001", "p0002", "p0003"]
    # An unknown list is the default one; the links name every list.
    assert queue_ids(client, campaign, "nonsense") == ["p0002"]
    page = client.get(reverse("campaign_adjudication_queue", args=[campaign.pk])).content
    for name in ("validated", "excluded", "all"):
        assert f'href="?show={name}"'.encode() in page
    excluded = client.get(
        reverse("campaign_adjudication_queue", args=[campaign.pk]), {"show": "excluded"}
    ).content.decode()
    assert "?verdict=excluded" in excluded


def test_gold_items_have_a_list_of_their_own(campaign, manager, login) -> None:
    client = login(manager)
    pairs = reverse("campaign_pairs", args=[campaign.pk])
    listing = client.get(pairs).content.decode()
    assert 'href="?items=gold" id="gold-items-link">gold items (2)</a>' in listing
    assert "p0004" not in listing
    gold = client.get(pairs, {"items": "gold"}).content.decode()
    assert re.findall(r'<tr data-pair="([^"]+)">', gold) == ["p0004", "p0005"]
    row = re.search(r'<tr data-pair="p0004">(.*?)</tr>', gold, re.S)
    assert row is not None
    # Four answers, three of them the expected "chosen".
    assert re.findall(r'<td class="num">(\d+)</td>', row.group(1)) == ["4", "3"]
    assert "6 of 8 answers matched" in gold
    page = client.get(pair_url(campaign, "p0004")).content.decode()
    assert "4 answers so far; a gold item needs no set number" in page
    assert "of 3 annotations required" not in page


def test_reason_codes_read_as_words_with_the_code_in_the_tooltip(campaign, manager, login) -> None:
    client = login(manager)
    pairs = client.get(reverse("campaign_pairs", args=[campaign.pk])).content.decode()
    assert (
        '<span class="reason" title="label_disagrees: majority does not prefer the dataset&#x27;s'
        ' chosen answer" data-reason="label_disagrees">chosen answer not preferred</span>' in pairs
    )
    assert ">label_disagrees<" not in pairs
    queue = client.get(reverse("campaign_adjudication_queue", args=[campaign.pk])).content
    assert b'data-reason="undecided_split_vote">split vote</span>' in queue
    audit = client.get(reverse("campaign_audit", args=[campaign.pk]), {"resamples": 0}).content
    assert b"<code>label_disagrees</code>" not in audit
    assert b'data-reason="label_disagrees">chosen answer not preferred</span>' in audit
    # The JSON keeps the codes.
    data = client.get(reverse("campaign_audit_json", args=[campaign.pk]), {"resamples": 0}).json()
    codes = {row["reason"] for row in data["validity"]["reasons"]}
    assert "label_disagrees" in codes


def test_the_api_queue_lists_the_same_pairs(campaign, manager, login) -> None:
    client = login(manager)
    url = f"/api/campaigns/{campaign.pk}/adjudication-queue/"

    def ids(**query: str) -> list[str]:
        response = client.get(url, query)
        assert response.status_code == 200
        return [row["external_id"] for row in response.json()["results"]]

    assert ids() == ["p0002"]
    assert ids(show="validated") == ["p0000", "p0003"]
    assert ids(show="all") == ["p0000", "p0001", "p0002", "p0003"]
    refused = client.get(url, {"show": "gold"})
    assert refused.status_code == 400
    assert "show" in refused.content.decode()
