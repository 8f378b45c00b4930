"""The managers' pages in Korean: the audit's own words (reasons, coefficients, interval notes,
the quality rules), the admin's names of our models, and the campaign creation form's language
fields. The report behind the pages keeps its words and codes in English."""

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from django.utils.translation import override

from prb_annotate.audit import intervals, quality, rule
from prb_annotate.audit.phrases import shown
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Campaign, Dataset
from tests.support.audit import add_item, annotate_all, annotators, make_campaign
from tests.support.pages import campaign_form

KOREAN = {"Accept-Language": "ko-KR,ko;q=0.9"}
GOOD: dict[str, object] = {}


def korean(client: Client) -> Client:
    """The browser after choosing Korean in the header."""
    response = client.post(reverse("set_language"), {"language": "ko", "next": "/"})
    assert response.status_code == 302
    return client


@pytest.fixture
def campaign(dataset: Dataset) -> Campaign:
    """Pairs validated, excluded for several reasons and undecided, three annotators each."""
    campaign = make_campaign(dataset, seed=11)
    raters = annotators(3)
    pairs = list(dataset.pairs.order_by("external_id"))
    answers: list[list[Any]] = [
        [GOOD, GOOD, GOOD],
        [{"differentiator": "quality", "position": "B"}] * 3,
        [{"flagged": True}, {"flagged": True}, GOOD],
        [{"fit": "rejected"}] * 3,
        [GOOD],
    ]
    for pair, pair_answers in zip(pairs, answers, strict=False):
        annotate_all(add_item(campaign, pair), raters, pair_answers)
    return campaign


def test_the_audit_page_in_korean_shows_the_audits_words_in_korean(
    campaign: Campaign, manager: User, login
) -> None:
    html = korean(login(manager)).get(reverse("campaign_audit", args=[campaign.pk])).content
    page = html.decode()
    # A reason's words and its sentence, a coefficient's name, an interval's note.
    assert escape("주요 차이가 개인 취향이 아니라고 다수가 답함") in page
    assert "다수가 사용 불가로 표시함" in page
    assert escape("Krippendorff의 알파 (명목)") in page
    assert "신뢰할 수 없음" in page
    # The verdicts of the pairs not validated, and the unit lengths are counted in.
    assert "<td>제외됨</td>" in page
    assert "길이 단위: 글자." in page
    # None of them in English any more; the codes stay.
    assert "majority says the difference is not personal preference" not in page
    assert "Krippendorff&#x27;s alpha (nominal)" not in page
    assert 'data-reason="differentiator_not_preference"' in page


def test_the_report_keeps_its_english_words_whatever_the_page_speaks(
    campaign: Campaign, manager: User, login
) -> None:
    client = korean(login(manager))
    report = json.loads(client.get(f"/campaigns/{campaign.pk}/audit.json").content)
    labels = {row["reason"]: row["label"] for row in report["validity"]["reasons"]}
    assert labels[rule.FLAGGED] == "flagged as unusable by a majority"
    names = {c["key"]: c["label"] for c in report["agreement"][0]["coefficients"]}
    assert names["alpha_nominal"] == "Krippendorff's alpha (nominal)"


def test_the_quality_section_in_korean_shows_the_rules_in_korean(
    campaign: Campaign, manager: User, login
) -> None:
    page = korean(login(manager)).get(reverse("campaign_detail", args=[campaign.pk])).content
    text = page.decode()
    with override("ko"):
        rules = [
            phrase.shown(**figures) for phrase, figures in quality.OUTLIER_RULE_PHRASES.values()
        ]
    for words in rules:
        assert escape(words) in text
    assert "정답 문항 정확도가 70% 미만" in rules[0]
    assert "leans to one side" not in text
    assert "two-sided Fisher exact test" not in text


def test_the_quality_section_in_korean_says_why_an_annotator_is_left_out(
    campaign: Campaign, manager: User, login
) -> None:
    """rater1 gets the gold pair wrong, below the campaign's minimum gold accuracy."""
    campaign.min_gold_accuracy = 0.9
    campaign.save()
    raters = list(User.objects.filter(username__startswith="rater").order_by("username"))
    for rater in raters:
        add_member(campaign, rater)
    pair = campaign.dataset.pairs.order_by("external_id")[10]
    gold = add_item(
        campaign,
        pair,
        kind="gold",
        gold_answers={"rubric_fit": "chosen", "differentiator": "preference"},
    )
    annotate_all(gold, raters, [{"fit": "rejected"}, GOOD, GOOD])
    text = korean(login(manager)).get(reverse("campaign_detail", args=[campaign.pk])).content
    assert "제외됨: 정답 문항 정확도가 캠페인의 최솟값 미만" in text.decode()
    report = json.loads(login(manager).get(f"/campaigns/{campaign.pk}/audit.json").content)
    assert report["left_out"] == [
        {
            "annotator": "rater1",
            "reason": "low_gold_accuracy",
            "reason_label": "gold accuracy below the campaign's minimum",
        }
    ]


def test_every_sentence_of_the_audit_is_found_again_and_translated() -> None:
    """Each rule and interval reason written in English comes back as itself in English and
    in Korean without an English word of its own left."""
    evidence = intervals.Evidence(units=12, disagreeing=2, raters=3)
    reliable, reason = intervals.reliability("alpha", evidence)
    texts = [*quality.OUTLIER_RULES.values(), intervals.unreliable_text(reason), reason]
    assert not reliable
    for text in texts:
        with override("en"):
            assert shown(text) == text
        with override("ko"):
            korean_text = shown(text)
        assert korean_text != text
        for english in ("pairs rated twice", "annotators", "disagreement", "leans", "honest"):
            assert english not in korean_text, korean_text


def test_the_admin_names_our_models_and_their_fields_in_korean(db: None, login) -> None:
    admin = User.objects.create_superuser("root", password="x")
    client = korean(login(admin))
    index = client.get("/admin/").content.decode()
    assert "캠페인" in index
    assert "선호 쌍" in index
    assert "Campaigns" not in index
    changelist = client.get("/admin/prb_annotate/campaign/").content.decode()
    assert "<h1>변경할 캠페인 선택</h1>" in changelist
    form = client.get("/admin/prb_annotate/pair/add/").content.decode()
    # The user's question is 질문; an annotation question would be 문항 (the glossary).
    assert '<label class="required" for="id_question">질문:</label>' in form
    assert '<label class="required" for="id_chosen">선택된 답변:</label>' in form


def test_the_creation_form_sets_the_campaigns_language_and_texts(
    dataset: Dataset, manager: User, login
) -> None:
    client = login(manager)
    form = client.get(reverse("campaign_create")).content.decode()
    assert 'name="language"' in form
    assert 'name="translations"' in form
    texts = {"en": {"guidelines": "Read both answers.", "consent_text": "I agree."}}
    response = client.post(
        reverse("campaign_create"),
        campaign_form(dataset, language="ko", translations=json.dumps(texts)),
    )
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="spring pilot")
    assert campaign.language == "ko"
    assert campaign.translations == texts


def test_the_creation_form_refuses_a_language_it_does_not_speak(
    dataset: Dataset, manager: User, login
) -> None:
    client = login(manager)
    response = client.post(reverse("campaign_create"), campaign_form(dataset, language="xx"))
    assert response.status_code == 200
    assert not Campaign.objects.filter(name="spring pilot").exists()
    assert 'name="language"' in response.content.decode()
