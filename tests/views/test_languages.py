"""The page's language: the browser's Accept-Language, the header's chooser (kept in the
browser's cookie and with the account), a campaign's language on its participants' pages, a
campaign's texts written per language, the annotation script's catalogue; the API in English
whatever the browser asks."""

import json

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.languages.models import LanguageChoice
from prb_annotate.languages.texts import TranslationsError, checked
from prb_annotate.models import Campaign, Dataset
from tests.conftest import PASSWORD
from tests.support.pages import active_campaign

STUDY = "?PROLIFIC_PID=p1&STUDY_ID=s1&SESSION_ID=x1"
KOREAN = {"Accept-Language": "ko-KR,ko;q=0.9,en;q=0.5"}
ENGLISH = {"Accept-Language": "en-US,en;q=0.9"}


def page(client: Client, url: str, headers: dict[str, str] | None = None) -> str:
    response = client.get(url, headers=headers)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def says(script: str, text: str) -> bool:
    """``text`` in a catalogue script, written as is or \\u-escaped."""
    return text in script or json.dumps(text)[1:-1] in script


def korean_annotator(dataset: Dataset, annotator: User, login) -> tuple[Campaign, Client]:
    """A campaign of ``annotator``'s, and their browser after choosing Korean."""
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    choose(client, "ko", back_to="/")
    return campaign, client


def choose(client: Client, language: str, back_to: str = "/login/") -> None:
    response = client.post(reverse("set_language"), {"language": language, "next": back_to})
    assert response.status_code == 302
    assert response["Location"] == back_to


@pytest.mark.django_db
def test_it_speaks_the_language_the_browser_asks_for() -> None:
    client = Client()
    korean = client.get(reverse("login"), headers=KOREAN)
    assert '<html lang="ko">' in korean.content.decode()
    assert "<h1>로그인</h1>" in korean.content.decode()
    assert korean["Content-Language"] == "ko"
    english = page(client, reverse("login"), ENGLISH)
    assert '<html lang="en">' in english
    assert "<h1>Log in</h1>" in english
    # A language the app does not have falls back to English.
    assert "<h1>Log in</h1>" in page(client, reverse("login"), {"Accept-Language": "fr"})


@pytest.mark.django_db
def test_it_keeps_the_choosers_language_in_the_browser_over_accept_language() -> None:
    client = Client()
    html = page(client, reverse("login"), ENGLISH)
    assert 'id="language-chooser"' in html
    assert '<option value="ko" lang="ko">한국어</option>' in html
    choose(client, "ko")
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "ko"
    assert "<h1>로그인</h1>" in page(client, reverse("login"), ENGLISH)
    choose(client, "en")
    assert "<h1>Log in</h1>" in page(client, reverse("login"), KOREAN)


@pytest.mark.django_db
def test_it_keeps_an_accounts_choice_for_its_next_login_in_another_browser(
    annotator: User,
) -> None:
    first = Client()
    assert first.login(username=annotator.username, password=PASSWORD)
    choose(first, "ko", back_to="/")
    assert LanguageChoice.objects.get(user=annotator).language == "ko"
    assert "환영합니다" in page(first, "/", ENGLISH)

    # Another browser: no cookie, an English Accept-Language; the login brings the choice.
    second = Client()
    assert second.login(username=annotator.username, password=PASSWORD)
    assert settings.LANGUAGE_COOKIE_NAME not in second.cookies
    html = page(second, "/", ENGLISH)
    assert "환영합니다" in html
    assert '<html lang="ko">' in html

    # A later choice replaces it, for this account alone.
    choose(second, "en", back_to="/")
    assert LanguageChoice.objects.get(user=annotator).language == "en"
    assert "Welcome, alice" in page(second, "/", KOREAN)


@pytest.mark.django_db
def test_it_refuses_a_language_it_does_not_have(annotator: User, login) -> None:
    client = login(annotator)
    client.post(reverse("set_language"), {"language": "xx", "next": "/"})
    assert not LanguageChoice.objects.filter(user=annotator).exists()
    assert "Welcome" in page(client, "/", ENGLISH)


@pytest.mark.django_db
def test_it_answers_the_api_in_english_whatever_the_browser_asks(annotator: User) -> None:
    """DRF ships Korean messages of its own: the API must not use them."""
    anonymous = Client()
    anonymous.cookies[settings.LANGUAGE_COOKIE_NAME] = "ko"
    response = anonymous.get("/api/datasets/", headers=KOREAN)
    assert response.status_code in (401, 403)
    assert response.json()["detail"] == "Authentication credentials were not provided."
    assert response["Content-Language"] == "en"

    member = Client()
    assert member.login(username=annotator.username, password=PASSWORD)
    choose(member, "ko", back_to="/")
    missing = member.get("/api/campaigns/999999/", headers=KOREAN)
    assert missing.status_code == 404
    assert missing.json()["detail"] == "No Campaign matches the given query."
    refused = member.post("/api/token/", {"username": "alice", "password": "wrong"}, headers=KOREAN)
    assert refused.status_code == 400
    assert "Unable to log in with provided credentials." in str(refused.json())


@pytest.mark.django_db
def test_it_shows_a_campaigns_participants_its_language_unless_they_chose_one(
    dataset: Dataset, manager: User, login
) -> None:
    campaign = active_campaign(dataset, language="ko", guidelines="Rate kindly.")
    join = reverse("join", args=[campaign.invite_token]) + STUDY
    html = page(Client(), join, ENGLISH)
    assert '<html lang="ko">' in html
    assert "시작" in html
    # The campaign has no Korean guidelines: its own text is shown.
    assert "Rate kindly." in html

    chose_english = Client()
    choose(chose_english, "en", back_to=join)
    assert '<html lang="en">' in page(chose_english, join, KOREAN)

    signup = page(Client(), reverse("signup", args=[campaign.signup_token]), ENGLISH)
    assert "가입하고 시작하기" in signup
    # The managers' pages keep the manager's language.
    dashboard = page(login(manager), reverse("campaign_detail", args=[campaign.pk]), ENGLISH)
    assert '<html lang="en">' in dashboard


@pytest.mark.django_db
def test_it_shows_a_campaigns_texts_written_in_the_readers_language(dataset: Dataset) -> None:
    campaign = active_campaign(
        dataset,
        guidelines="Read both answers.",
        consent_text="I agree to take part.",
        translations={"ko": {"guidelines": "두 답변을 모두 읽으세요.", "consent_text": ""}},
    )
    join = reverse("join", args=[campaign.invite_token]) + STUDY
    korean = page(Client(), join, KOREAN)
    assert "두 답변을 모두 읽으세요." in korean
    assert "Read both answers." not in korean
    # An empty translation falls back to the campaign's own text.
    assert "I agree to take part." in korean
    english = page(Client(), join, ENGLISH)
    assert "Read both answers." in english
    assert "두 답변을" not in english


@pytest.mark.django_db
def test_it_serves_the_annotation_scripts_catalogue_before_the_script(
    dataset: Dataset, annotator: User, login
) -> None:
    campaign, client = korean_annotator(dataset, annotator, login)
    html = page(client, reverse("annotate", args=[campaign.pk]))
    catalogue = reverse("javascript_catalog", args=["ko"])
    assert html.index(f'<script src="{catalogue}" defer></script>') < html.index(
        "prb_annotate/annotate.js"
    )
    assert "제출하고 다음으로" in html
    assert "응답 A" in html
    assert "정확성" in html
    # The page names its language in the script's address: a campaign's language reaches it.
    script = Client().get(catalogue, headers=ENGLISH)
    assert script["Content-Type"].startswith("text/javascript")
    assert says(script.content.decode(), "접기")
    english = Client().get(reverse("javascript_catalog", args=["en"]), headers=KOREAN)
    assert not says(english.content.decode(), "접기")
    assert Client().get("/jsi18n/xx/").status_code == 404


@pytest.mark.django_db
def test_it_shows_form_errors_in_the_readers_language(
    dataset: Dataset, annotator: User, login
) -> None:
    campaign, client = korean_annotator(dataset, annotator, login)
    assignment = client.get(reverse("annotate", args=[campaign.pk])).context["assignment"]
    url = reverse("annotate_submit", args=[campaign.pk, assignment.pk])
    response = client.post(url, {"client_token": "t-1"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "A, B, 동등 중 하나를 고르세요." in html
    assert "아무것도 저장되지 않았습니다." in html


def test_it_checks_translations_before_they_are_stored() -> None:
    assert checked(None) == {}
    texts = {"ko": {"guidelines": "지침", "explanations": {"p1": {"rubric_fit": "이유"}}}}
    assert checked(texts) == texts
    for bad, field in [
        ({"xx": {"guidelines": "?"}}, "xx"),
        ({"ko": {"title": "?"}}, "ko.title"),
        ({"ko": {"guidelines": 3}}, "ko.guidelines"),
        ({"ko": {"explanations": {"p1": "text"}}}, "ko.explanations.p1"),
        (["ko"], "translations"),
    ]:
        with pytest.raises(TranslationsError) as error:
            checked(bad)
        assert error.value.field == field


@pytest.mark.django_db
def test_it_stores_a_campaigns_language_and_translations(dataset: Dataset) -> None:
    campaign = active_campaign(dataset, language="ko", translations={"ko": {"guidelines": "x"}})
    stored = Campaign.objects.get(pk=campaign.pk)
    assert (stored.language, stored.translations) == ("ko", {"ko": {"guidelines": "x"}})


@pytest.mark.django_db
def test_it_sets_a_campaigns_language_and_texts_through_the_api(
    dataset: Dataset, manager: User, login
) -> None:
    campaign = active_campaign(dataset)
    client = login(manager)
    url = f"/api/campaigns/{campaign.pk}/"
    texts = {"ko": {"consent_text": "참여에 동의합니다."}}
    changed = client.patch(
        url, {"language": "ko", "translations": texts}, content_type="application/json"
    )
    assert changed.status_code == 200, changed.json()
    assert (changed.json()["language"], changed.json()["translations"]) == ("ko", texts)
    campaign.refresh_from_db()
    assert (campaign.language, campaign.translations) == ("ko", texts)
    bad_changes: list[dict[str, object]] = [{"language": "xx"}, {"translations": {"xx": {}}}]
    for bad in bad_changes:
        refused = client.patch(url, bad, content_type="application/json")
        assert refused.status_code == 400
        assert list(refused.json()["errors"]) == list(bad)
    campaign.refresh_from_db()
    assert campaign.translations == texts
    # The settings page offers both, in its "Joining" group.
    settings_page = page(client, reverse("campaign_settings", args=[campaign.pk]))
    assert 'name="language"' in settings_page
    assert 'name="translations"' in settings_page
