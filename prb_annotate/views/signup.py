"""The sign-up invite (``/signup/<token>/``): a form that makes an annotator account for one
campaign, then logs the new annotator in on its first item. The rules are in
``prb_annotate.campaigns.signup``; the study link for Prolific participants is ``join.py``.
"""

from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path

from prb_annotate.addresses import client_address
from prb_annotate.campaigns.join_limits import TooManyJoins
from prb_annotate.campaigns.lifecycle import InvalidInvite, InviteClosed
from prb_annotate.campaigns.signup import campaign_for_signup, sign_up
from prb_annotate.forms import SignUpForm
from prb_annotate.models import Campaign


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
    form = SignUpForm(request.POST or None)
    status = 400 if request.method == "POST" else 200
    if request.method == "POST" and form.is_valid():
        try:
            membership = sign_up(
                token,
                form.cleaned_data["username"],
                form.cleaned_data["password1"],
                address=client_address(request),
            )
        except TooManyJoins as error:
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
    context = {"campaign": campaign, "form": form, "token": token}
    return render(request, "prb_annotate/signup.html", context, status=status)


urlpatterns = [
    path("signup/<str:token>/", signup, name="signup"),
]
