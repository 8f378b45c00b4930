"""A person's explicit choice of language: the account's (a ``LanguageChoice`` row, copied into
the session at login so that a page reads no extra row) or the browser's cookie, both set by the
header's chooser."""

from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpRequest

from prb_annotate.languages.codes import is_supported
from prb_annotate.languages.models import LanguageChoice

SESSION_KEY = "prb_language"


def account_language(request: HttpRequest) -> str:
    """The signed-in account's chosen language, "" where it chose none."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return ""
    language = request.session.get(SESSION_KEY, "")
    return language if is_supported(language) else ""


def explicit_choice(request: HttpRequest) -> bool:
    cookie = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME, "")
    return bool(account_language(request)) or is_supported(cookie)


def remember(request: HttpRequest, language: str) -> None:
    """Keeps the chooser's language for the signed-in account (and its session)."""
    if not request.user.is_authenticated or not is_supported(language):
        return
    LanguageChoice.objects.update_or_create(user=request.user, defaults={"language": language})
    request.session[SESSION_KEY] = language


@receiver(user_logged_in)
def apply_at_login(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """A login brings the account's chosen language into the new session."""
    if request is None or not hasattr(request, "session"):
        return
    language = LanguageChoice.objects.filter(user=user).values_list("language", flat=True).first()
    if language and is_supported(language):
        request.session[SESSION_KEY] = language
