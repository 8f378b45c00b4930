"""The interface's language codes (``settings.LANGUAGES``) and the check of one."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext


def language_codes() -> list[str]:
    return [code for code, _name in settings.LANGUAGES]


def is_supported(language: str) -> bool:
    return language in language_codes()


def valid_code(value: str) -> None:
    """A campaign's language: empty (the reader's own) or one of the interface's."""
    if value and not is_supported(value):
        raise ValidationError(
            gettext("%(value)s is not one of the interface's languages (%(codes)s).")
            % {"value": repr(value), "codes": ", ".join(language_codes())}
        )
