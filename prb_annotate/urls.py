"""URL map. Each area's views module owns its ``urlpatterns``; this file only mounts them."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path, register_converter
from django.views.generic import RedirectView

from prb_annotate.security.logins import LoginForm
from prb_annotate.views import home
from prb_annotate.web.converters import RowId

# Before the includes below: every area's patterns use it for row ids.
register_converter(RowId, "row_id")

# A database error raised outside a view (in a middleware, a session's save) is a 503 too when
# it passes.
handler400 = "prb_annotate.db.outage.bad_request"
handler500 = "prb_annotate.db.outage.server_error"

urlpatterns = [
    # First: the annotators' next and submit are by far the most frequent requests.
    path("api/", include("prb_annotate.api.work_urls")),
    path("", home.home, name="home"),
    # Browsers ask for /favicon.ico on pages that name no icon (the admin, the browsable API).
    path("favicon.ico", RedirectView.as_view(url=static("prb_annotate/favicon.svg"))),
    path("login/", auth_views.LoginView.as_view(form_class=LoginForm), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("", include("prb_annotate.views.passwords")),
    path("completed/", home.completed, name="completed"),
    path("datasets/", include("prb_annotate.views.uploads")),
    path("datasets/", include("prb_annotate.views.browser")),
    path("datasets/", include("prb_annotate.views.dataset_jobs")),
    path("campaigns/", include("prb_annotate.views.campaigns")),
    path("campaigns/", include("prb_annotate.views.campaign_settings")),
    path("campaigns/", include("prb_annotate.views.accounts")),
    path("campaigns/", include("prb_annotate.views.quality")),
    path("campaigns/", include("prb_annotate.views.qualification")),
    path("campaigns/", include("prb_annotate.views.prolific")),
    path("campaigns/", include("prb_annotate.views.external")),
    path("campaigns/", include("prb_annotate.views.audit")),
    path("campaigns/", include("prb_annotate.views.pairs")),
    path("campaigns/", include("prb_annotate.views.exports")),
    path("campaigns/", include("prb_annotate.views.evaluations")),
    path("campaigns/", include("prb_annotate.views.jobs")),
    path("", include("prb_annotate.views.annotate")),
    path("", include("prb_annotate.views.consent")),
    path("", include("prb_annotate.views.qualifying")),
    path("", include("prb_annotate.views.join")),
    path("", include("prb_annotate.views.returning")),
    path("", include("prb_annotate.views.account")),
    path("", include("prb_annotate.views.signup")),
    path("", include("prb_annotate.views.guides")),
    path("", include("prb_annotate.views.language")),
    path("api/", include("prb_annotate.api.urls")),
]
