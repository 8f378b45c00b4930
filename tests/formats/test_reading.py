"""Reading estimates in any script, against worked examples: words where the script puts
spaces between words, characters (Hangul syllables, kana, Han, Thai) where a word is not what
readers are measured in; each script's share read at its own rate; and the annotation page
shows the count the rule gives."""

import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from prb_annotate.formats.reading import RATES, TextLength, text_length
from prb_annotate.models import Dataset, Pair
from tests.conftest import make_pairs
from tests.support.pages import active_campaign, reserve


@pytest.mark.parametrize(
    ("text", "words", "characters", "seconds"),
    [
        # English: 9 words ("—" and "." are no words); 9 / 238 a minute.
        ("The quick brown fox — jumps over 2 lazy dogs.", 9, {}, 9 / 238 * 60),
        # Korean: 한국어(3) 문장을(3) 읽는(2) 속도는(3) 음절로(3) 잰다(2): 16 syllables at 588.
        ("한국어 문장을 읽는 속도는 음절로 잰다.", 0, {"hangul": 16}, 16 / 588 * 60),
        # Japanese: 日本語 文章 読 (6 Han) の を む (3 kana), "。" none: 9 at 357 a minute.
        ("日本語の文章を読む。", 0, {"han": 6, "kana": 3}, 9 / 357 * 60),
        # Chinese: 9 Han and no kana: read at the Chinese rate, 255 a minute.
        ("中文句子的阅读速度。", 0, {"han": 9}, 9 / 255 * 60),
        # Mixed: "GPT-4" one word; 는 한국어를 잘 읽는다: 1 + 4 + 1 + 3 syllables.
        ("GPT-4는 한국어를 잘 읽는다", 1, {"hangul": 9}, 1 / 238 * 60 + 9 / 588 * 60),
        # Thai writes no spaces between words: 7 code points, read at IReST's mean, 863.
        ("ภาษาไทย", 0, {"thai": 7}, 7 / 863 * 60),
        ("", 0, {}, 0.0),
    ],
)
def test_worked_examples(text: str, words: int, characters: dict, seconds: float) -> None:
    length = text_length(text)
    assert length == TextLength(words, characters)
    assert length.reading_seconds() == pytest.approx(seconds)


def test_the_rates_are_the_cited_figures() -> None:
    """docs/annotating.md states these figures and their sources."""
    assert RATES["words"].per_minute == 238  # Brysbaert (2019)
    assert RATES["hangul"].per_minute == round(202.3 * 18.9 / 6.5)  # Song et al. (2016)
    assert RATES["japanese"].per_minute == 357  # IReST
    assert RATES["han"].per_minute == 255  # IReST


def test_a_text_is_read_as_words_characters_or_both() -> None:
    assert text_length("one").words_text() == "1 word"
    assert text_length("…").words_text() == "0 words"
    assert text_length("가").words_text() == "1 character"
    assert text_length("Claude는 좋아").words_text() == "1 word and 3 characters"
    english = " ".join(["word"] * 2380)  # ten minutes at 238 a minute
    assert text_length(english).reading_text() == "2,380 words · about 10 min to read"
    korean = "가" * 294  # half a minute at 588 a minute: from there the time is shown
    assert text_length(korean).reading_text() == "294 characters · about 1 min to read"
    assert text_length("가" * 293).reading_text() == "293 characters"


def test_the_annotation_page_counts_korean_by_the_character(dataset: Dataset, login) -> None:
    korean = "한국어 답변은 음절로 센다"
    Pair.objects.filter(dataset=dataset).update(chosen=korean, rejected="Three English words")
    annotator = User.objects.create_user("reader")
    campaign = active_campaign(dataset, annotator)
    client = login(annotator)
    reserve(client, campaign)
    page = client.get(reverse("annotate", args=[campaign.pk])).content.decode()
    labels = re.findall(r'data-length-of="response-[AB]" data-length="([^"]+)"', page)
    assert sorted(labels) == ["11 characters", "3 words"]


@pytest.fixture
def dataset(db: None) -> Dataset:
    dataset = Dataset.objects.create(name="scripts", source="tests")
    make_pairs(dataset, 3)
    return dataset
