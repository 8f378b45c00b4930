"""Parts of the annotator page that need no browser: keys that mean one thing each, the timer
setting (campaign form, API, page), and Markdown images shown as text, never loaded."""

import json
from html.parser import HTMLParser

from django.urls import reverse

from prb_annotate.models import Campaign, Pair
from prb_annotate.web.question_layout import PAGE_KEYS, answer_keys, choice_questions
from prb_annotate.web.rendering import render_markdown
from tests.support.pages import active_campaign


def test_it_gives_every_answer_and_action_its_own_letter() -> None:
    keys = answer_keys()
    assert len(keys) == len(set(keys)), keys
    assert all(len(key) == 1 and not key.isdigit() for key in keys)
    letters = [c.key for q in choice_questions({}, {}) for c in q.choices]
    assert set(letters).isdisjoint(PAGE_KEYS)


def test_it_lists_each_letter_once_on_the_page(dataset, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    html = login(annotator).get(reverse("annotate", args=[campaign.pk])).content.decode()
    for key in answer_keys():
        assert html.count(f'data-key="{key}"') <= 1, key
    assert html.count('data-key="o"') == 1  # "Both" is O, no longer B as for "Response B"


def test_the_guidelines_name_the_keys_the_form_answers_to(dataset, annotator, login) -> None:
    """The guidelines printed B for "Both" after the form had moved it to O."""
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    guidelines = client.get(reverse("annotate_guidelines", args=[campaign.pk])).content.decode()
    for question in choice_questions({}, {}):
        keys = "/".join(f"<kbd>{choice.key.upper()}</kbd>" for choice in question.choices)
        assert keys in guidelines, question.name
    assert "<kbd>P</kbd>/<kbd>Q</kbd>/<kbd>O</kbd>/<kbd>N</kbd> for the main difference" in (
        guidelines
    )


def test_it_sets_the_timer_from_the_form_and_the_api(dataset, manager, annotator, login) -> None:
    client = login(manager)
    form = {
        "dataset": dataset.pk,
        "name": "timed",
        "annotations_per_pair": 3,
        "reservation_minutes": 30,
        "seed": 0,
        "gold_rate": 0,
        "show_timer": "on",
    }
    response = client.post(reverse("campaign_create"), form)
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="timed")
    assert campaign.show_timer is True
    assert "timer shown to annotators" in client.get(response["Location"]).content.decode()

    url = f"/api/campaigns/{campaign.pk}/"
    assert client.get(url).json()["show_timer"] is True
    patched = client.patch(url, json.dumps({"show_timer": False}), "application/json")
    assert patched.status_code == 200
    campaign.refresh_from_db()
    assert campaign.show_timer is False
    refused = client.patch(url, json.dumps({"show_timer": "sometimes"}), "application/json")
    assert refused.status_code == 400
    assert "show_timer" in refused.json()["errors"]


def test_it_shows_the_timer_only_when_the_campaign_asks(dataset, annotator, login) -> None:
    plain = active_campaign(dataset, annotator)
    timed = active_campaign(dataset, annotator, name="timed", show_timer=True)
    client = login(annotator)
    assert 'id="timer"' not in client.get(reverse("annotate", args=[plain.pk])).content.decode()
    assert 'id="timer"' in client.get(reverse("annotate", args=[timed.pk])).content.decode()


def test_it_shows_markdown_images_as_text() -> None:
    html = render_markdown('See ![a *bar* chart](https://example.org/c.png?a=1&b=2 "t") here.')
    assert "<img" not in html
    assert (
        '<em class="md-image">[image: a bar chart — https://example.org/c.png?a=1&amp;b=2]</em>'
        in html
    )
    assert render_markdown("![](https://example.org/x.png)").count("[image: https://example") == 1


def test_it_keeps_image_text_inert() -> None:
    hostile = '![<script>alert(1)</script>" onerror="x](https://e.org/"onload="y.png)'
    html = render_markdown(hostile)
    # Whatever the alt text and the address hold, they are text: the only element is ours.
    assert _elements(html) == [("p", []), ("em", [("class", "md-image")])]
    assert "alert(1)" in html
    forged = render_markdown('<em class="md-image">x</em> <em class="other">y</em>')
    assert "<em" not in forged  # raw HTML in model text stays text


def test_it_shows_an_image_answer_as_text_on_the_page(dataset, annotator, login) -> None:
    Pair.objects.filter(dataset=dataset).update(chosen="![a map](https://e.org/m.png)")
    Pair.objects.filter(dataset=dataset).update(rejected="![a map](https://e.org/m.png)")
    campaign = active_campaign(dataset, annotator)
    html = login(annotator).get(reverse("annotate", args=[campaign.pk])).content.decode()
    assert html.count("[image: a map — https://e.org/m.png]") == 2
    assert "<img" not in html


def _elements(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    found: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Collector(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, attrs))

    Collector().feed(html)
    return found
