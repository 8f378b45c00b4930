"""The account's own page for its API token: see whether one exists and since when, revoke it,
or replace it with a new one (shown once). Reached from "API token" in every page's header.

Only accounts with a password have one (``/api/token/`` needs the password): an account the
study link made has none, and gets 404 here; one the sign-up invite made has a password, and
may have a token like any annotator.
"""

from datetime import timedelta
from typing import cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.utils.translation import gettext as _
from rest_framework.authtoken.models import Token

from prb_annotate.api.authentication import token_expired


@login_required
def account_token(request: HttpRequest) -> HttpResponse:
    user = cast(User, request.user)  # login_required
    if not user.has_usable_password():
        raise Http404("No such page.")
    new_key = None
    if request.method == "POST":
        action = request.POST.get("action")
        if action == "revoke":
            revoked, _deleted = Token.objects.filter(user=user).delete()
            messages.success(
                request,
                _("Your API token is revoked: it opens nothing any more.")
                if revoked
                else _("You had no API token."),
            )
            return redirect("account_token")
        if action != "new":
            return redirect("account_token")
        new_key = replace_token(user).key
    token = Token.objects.filter(user=user).first()
    context = {
        "token": token,
        "new_key": new_key,
        "expires_at": expiry(token),
        "expired": token is not None and token_expired(token),
    }
    return render(request, "prb_annotate/account_token.html", context)


def replace_token(user: User) -> Token:
    """A new token for ``user``; the old one, if any, stops working at once."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def expiry(token: Token | None) -> object:
    days = settings.API_TOKEN_MAX_AGE_DAYS
    if token is None or days <= 0:
        return None
    return token.created + timedelta(days=days)


urlpatterns = [
    path("account/token/", account_token, name="account_token"),
]
