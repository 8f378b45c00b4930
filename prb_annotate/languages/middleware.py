"""Activates the page's language after ``LocaleMiddleware`` (the cookie, else Accept-Language)
and the authentication: English on the API, the account's choice (kept in its session from the
login on), or a campaign's language on its participants' pages when the person chose none."""

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.deprecation import MiddlewareMixin

from prb_annotate.languages import choices

# The pages participants and annotators read of a campaign: under /c/<campaign id>/ (the
# managers' pages, under /campaigns/, keep the manager's language), or by an invite token.
PARTICIPANT_PREFIX = "/c/"
CAMPAIGN_ID_KWARG = "campaign_id"
TOKEN_VIEWS = {"join": "invite_token", "signup": "signup_token"}


def activate(request: HttpRequest, language: str) -> None:
    translation.activate(language)
    request.LANGUAGE_CODE = translation.get_language()


class LanguageMiddleware(MiddlewareMixin):
    def process_request(self, request: HttpRequest) -> None:
        if request.path_info.startswith("/api/"):
            # The API's messages are a stable contract, English whatever the browser asks.
            activate(request, settings.LANGUAGE_CODE)
            return
        chosen = choices.account_language(request)
        if chosen:
            activate(request, chosen)

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., HttpResponse],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> None:
        if request.path_info.startswith("/api/") or choices.explicit_choice(request):
            return
        language = campaign_language(request, view_kwargs)
        if language:
            activate(request, language)


def campaign_language(request: HttpRequest, view_kwargs: dict[str, Any]) -> str:
    """The language of the campaign a participant page shows ("" where none is set)."""
    from prb_annotate.models import Campaign

    match = request.resolver_match
    if request.path_info.startswith(PARTICIPANT_PREFIX) and CAMPAIGN_ID_KWARG in view_kwargs:
        lookup = {"pk": view_kwargs[CAMPAIGN_ID_KWARG]}
    elif match is not None and match.url_name in TOKEN_VIEWS and "token" in view_kwargs:
        lookup = {TOKEN_VIEWS[match.url_name]: view_kwargs["token"]}
    else:
        return ""
    language = Campaign.objects.filter(**lookup).values_list("language", flat=True).first()
    return language if language and choices.is_supported(language) else ""
