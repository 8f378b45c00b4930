"""A campaign's texts written per language.

``Campaign.translations`` maps a language code to the texts written in it:
``{"ko": {"guidelines": "...", "consent_text": "...", "explanations": {"<pair id>":
{"rubric_fit": "..."}}}}``. A text missing in the reader's language falls back to the
campaign's own (``Campaign.guidelines``, ``consent_text``, an item's ``explanations``), which are
written in the campaign's language; nothing here ever shows an empty text where one exists.
"""

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import translation
from django.utils.translation import gettext

from prb_annotate.languages.codes import is_supported

# The campaign texts a translation may replace (each a field of Campaign).
TEXT_FIELDS = ("guidelines", "consent_text")
EXPLANATIONS = "explanations"


class TranslationsError(ValueError):
    """Translations that cannot be stored; ``field`` names the bad part."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def written_in(translations: Mapping[str, Any] | None, language: str | None) -> Mapping[str, Any]:
    """The texts written in ``language`` (or its base language: "ko" for "ko-kr")."""
    if not translations or not language:
        return {}
    texts = translations.get(language) or translations.get(language.split("-")[0]) or {}
    return texts if isinstance(texts, Mapping) else {}


def campaign_text(campaign: Any, name: str, language: str | None = None) -> str:
    """``campaign``'s text ``name`` in ``language`` (the active one by default), else its own."""
    texts = written_in(campaign.translations, language or translation.get_language())
    return str(texts.get(name) or getattr(campaign, name))


def explanation(campaign: Any, pair_id: str, question: str, fallback: str) -> str:
    """An item's explanation of ``question`` in the active language, else ``fallback``."""
    texts = written_in(campaign.translations, translation.get_language())
    per_item = texts.get(EXPLANATIONS, {}).get(pair_id, {})
    return str(per_item.get(question) or fallback) if isinstance(per_item, Mapping) else fallback


def checked(translations: Any) -> dict[str, Any]:
    """Translations as a form or a request gives them, checked; TranslationsError names what
    is wrong (an unknown language, an unknown text, a text that is not text)."""
    if translations in (None, ""):
        return {}
    if not isinstance(translations, Mapping):
        raise TranslationsError("translations", gettext("An object of language code: texts."))
    for language, texts in translations.items():
        if not is_supported(language):
            raise TranslationsError(language, gettext("Not one of the interface's languages."))
        if not isinstance(texts, Mapping):
            raise TranslationsError(language, gettext("An object of text name: text."))
        for name, text in texts.items():
            if name == EXPLANATIONS:
                _check_explanations(language, text)
            elif name not in TEXT_FIELDS:
                raise TranslationsError(
                    f"{language}.{name}", gettext("Not a text a campaign translates.")
                )
            elif not isinstance(text, str) or "\x00" in text:
                raise TranslationsError(
                    f"{language}.{name}", gettext("Text without the NUL character.")
                )
    return dict(translations)


def _check_explanations(language: str, explanations: Any) -> None:
    field = f"{language}.{EXPLANATIONS}"
    if not isinstance(explanations, Mapping):
        raise TranslationsError(field, gettext("An object of pair id: {question: text}."))
    for pair_id, per_question in explanations.items():
        if not isinstance(per_question, Mapping) or not all(
            isinstance(text, str) for text in per_question.values()
        ):
            raise TranslationsError(f"{field}.{pair_id}", gettext("An object of question: text."))


def valid_texts(value: Any) -> None:
    """``Campaign.translations``' validator: the model, the settings page and the API refuse
    alike what ``checked`` refuses, naming the part."""
    try:
        checked(value)
    except TranslationsError as error:
        raise ValidationError(str(error)) from error
