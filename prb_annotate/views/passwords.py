"""The one-time "set your password" page of an account a manager made
(``campaigns/accounts.py``): Django's password-reset confirmation, which checks the link's
token, asks for the password twice with the password validators, and logs the annotator in.
A used or expired link shows a page that says so."""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import SetPasswordForm
from django.http import HttpResponse
from django.urls import path, reverse_lazy
from django.utils.translation import gettext as _


class SetPasswordView(auth_views.PasswordResetConfirmView):
    template_name = "registration/set_password.html"
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"
    success_url = reverse_lazy("home")

    def form_valid(self, form: SetPasswordForm) -> HttpResponse:
        response = super().form_valid(form)
        messages.success(self.request, _("Your password is set: you are logged in."))
        return response


urlpatterns = [
    path("set-password/<uidb64>/<token>/", SetPasswordView.as_view(), name="set_password"),
]
