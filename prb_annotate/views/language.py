"""The header's language chooser and the annotation page's JavaScript catalogue.

The chooser is Django's ``set_language`` (the browser's cookie, then back to the page it was
on); for a signed-in account it also keeps the choice, so that it follows the account to
another browser (``languages/choices.py``)."""

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.urls import path
from django.utils import translation
from django.views.decorators.http import require_POST
from django.views.i18n import JavaScriptCatalog, set_language

from prb_annotate.languages import choices
from prb_annotate.languages.codes import is_supported

CATALOGUE = JavaScriptCatalog.as_view(packages=["prb_annotate"])


@require_POST
def choose_language(request: HttpRequest) -> HttpResponse:
    response = set_language(request)
    choices.remember(request, request.POST.get("language", ""))
    return response


def javascript_catalog(request: HttpRequest, language: str) -> HttpResponseBase:
    """The script's translations in the page's language, which the page names in the URL: the
    page may speak its campaign's language, which a request for a script alone cannot tell."""
    if not is_supported(language):
        raise Http404("No such language.")
    with translation.override(language):
        return CATALOGUE(request)


urlpatterns = [
    path("language/", choose_language, name="set_language"),
    # The translations annotate.js reads through gettext(): a script of its own, so the
    # Content-Security-Policy's script-src 'self' holds (no inline script).
    path("jsi18n/<str:language>/", javascript_catalog, name="javascript_catalog"),
]
