"""The sign-up invite (``/signup/<token>/``): a form that makes an annotator account for one
campaign, then logs the new annotator in on its first item. The rules are in
``prb_annotate.campaigns.signup``; the study link for Prolific participants is ``join.py``.

A person choosing a name must be told it is taken, so the form cannot hide which names exist;
it can make asking expensive. Each refusal of a taken name counts as a failed login of that
name from the client's address (``security/logins.py``): past the address's limit
(``LOGIN_FAILURES_PER_ADDRESS`` in ``LOGIN_LOCKOUT_MINUTES``), or the name's from that address
(``LOGIN_FAILURES_PER_USERNAME``), the form answers 429 and names nothing, so a script learns at
most that many names per address and window. The refusal speaks of names tried, not of logins:
the visitor did not try to log in.
"""

from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.utils.translation import gettext_lazy, ngettext

from prb_annotate.campaigns.briefing import time_estimate
from prb_annotate.campaigns.join_limits import TooManyJoins
from prb_annotate.campaigns.lifecycle import InvalidInvite, InviteClosed
from prb_annotate.campaigns.places import NoPlacesLeft, newcomer_reach, places
from prb_annotate.campaigns.signup import campaign_for_signup, sign_up
from prb_annotate.models import Campaign
from prb_annotate.security.addresses import client_address, client_network
from prb_annotate.security.logins import LoginLocked, begin_attempt, minutes_until
from prb_annotate.web.forms import SignUpForm

TAKEN = gettext_lazy("This username is taken.")


def signup(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows the campaign and the form; POST makes the account and logs it in. A visitor
    who is logged in already is asked to log out first: the invite makes new accounts."""
    try:
        campaign = campaign_for_signup(token)
    except InvalidInvite as error:
        raise Http404(str(error)) from error
    except InviteClosed:
        closed = Campaign.objects.get(signup_token=token)
        return render(request, "prb_annotate/annotate_unavailable.html", {"campaign": closed})
    if request.user.is_authenticated:
        return render(request, "prb_annotate/signup.html", {"campaign": campaign, "form": None})
    found = places(campaign)
    if found.left < 1 and request.method != "POST":
        # Said before the form is filled in, not after (sign_up refuses then all the same).
        full = {"campaign": campaign, "form": None, "full": True}
        return render(request, "prb_annotate/signup.html", full, status=NoPlacesLeft.status)
    form = SignUpForm(request.POST or None)
    status = 400 if request.method == "POST" else 200
    if request.method == "POST" and form.is_valid():
        try:
            membership = sign_up(
                token,
                form.cleaned_data["username"],
                form.cleaned_data["password1"],
                address=client_network(request),
            )
        except (TooManyJoins, NoPlacesLeft) as error:
            form.add_error(None, str(error))
            status = error.status
        except ValidationError as error:
            form.add_error("username", error.message_dict.get("username", error.messages))
        except (InvalidInvite, InviteClosed) as error:
            # Turned off or closed between the page and the click.
            raise Http404(str(error)) from error
        else:
            login(request, membership.user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("annotate", campaign.pk)
    if request.method == "POST":
        status = _count_taken_name(request, form) or status
    context = {
        "campaign": campaign,
        "form": form,
        "token": token,
        "estimate": time_estimate(campaign, reach=newcomer_reach(campaign, found)),
    }
    return render(request, "prb_annotate/signup.html", context, status=status)


def _count_taken_name(request: HttpRequest, form: SignUpForm) -> int | None:
    """Count a refused taken name as a failed login from this address; 429 (the name's error
    replaced by the lock's) once the address has too many."""
    if str(TAKEN) not in form.errors.get("username", []):
        return None
    try:
        begin_attempt(str(form.data.get("username", "")), client_address(request))
    except LoginLocked as locked:
        del form.errors["username"]
        form.add_error(None, too_many_taken_names(locked.retry_after_seconds))
        return 429
    return None


def too_many_taken_names(retry_after_seconds: int) -> str:
    minutes = minutes_until(retry_after_seconds)
    return ngettext(
        "Too many names that are taken were tried from this address. "
        "Try again in %(minutes)d minute.",
        "Too many names that are taken were tried from this address. "
        "Try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


urlpatterns = [
    path("signup/<str:token>/", signup, name="signup"),
]
