"""The invite link: who may join a campaign through it, and who is logged in by it.

The rules are in ``prb_annotate.campaigns.joining``: a study participant gets an account for
this campaign alone, and comes back only with the resume key this link gave their browser or
with the same three Prolific values; nobody else is ever logged in here.
"""

from typing import cast

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse

from prb_annotate.campaigns.briefing import record_consent, time_estimate
from prb_annotate.campaigns.join_limits import (
    JoinRefused,
    StudyUnchecked,
    check_listed,
    check_study,
)
from prb_annotate.campaigns.joining import (
    PROLIFIC_PARAMS,
    RESUME_COOKIE_MAX_AGE,
    RESUME_COOKIE_SALT,
    BadJoinParameters,
    ParticipantJoin,
    ResumeRefused,
    StudyIds,
    join_as_participant,
    participant_campaign_id,
    resume_cookie_name,
    study_ids,
)
from prb_annotate.campaigns.lifecycle import (
    InvalidInvite,
    InviteClosed,
    InviteNeedsLogin,
    join_by_invite,
    open_link_campaign,
)
from prb_annotate.campaigns.places import NoPlacesLeft, newcomer_reach, places
from prb_annotate.campaigns.prolific import completion_code
from prb_annotate.models import Campaign, Membership, Participant
from prb_annotate.security.addresses import client_network

# When a join Prolific could not check may be tried again (the page says "a few minutes").
RETRY_AFTER_S = 120


def join(request: HttpRequest, token: str) -> HttpResponse:
    """Invite link. GET shows the campaign and a start button; POST joins.

    Prolific appends ``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID``; a participant who
    arrives with them needs no account, one is made for them. Anyone else logs in first.
    Joining is a POST so that a link opened by a crawler or a link preview changes nothing.
    """
    # A link turned off answers as one that never existed.
    campaign = open_link_campaign("study", token)
    if campaign is None:
        raise Http404("No such invite.")
    source = request.POST if request.method == "POST" else request.GET
    user = _account_for(request, campaign)
    if user is not None and _is_annotator(campaign, user.pk):
        return redirect("annotate", campaign.pk)
    if campaign.status == Campaign.Status.CLOSED:
        return render(request, "prb_annotate/annotate_unavailable.html", {"campaign": campaign})
    if user is not None:
        return _join_with_account(request, campaign, token, user)
    if not source.get("PROLIFIC_PID", "").strip():
        return redirect_to_login(request.get_full_path())
    try:
        ids = study_ids(source)
    except BadJoinParameters as error:
        return _refused(request, campaign, str(error), status=400)
    if request.method != "POST":
        return _start_page(request, campaign, token, ids)
    if not _consent_given(request, campaign):
        return _start_page(request, campaign, token, ids, consent_missing=True)
    resume_key = request.get_signed_cookie(
        resume_cookie_name(campaign), default="", salt=RESUME_COOKIE_SALT
    )
    try:
        joined = join_as_participant(
            token, ids, resume_key=str(resume_key), address=client_network(request)
        )
    except NoPlacesLeft:
        return _no_places(request, campaign)
    except JoinRefused as error:
        return _refused(request, campaign, str(error), status=error.status)
    except (ResumeRefused, InvalidInvite) as error:
        return _refused(request, campaign, str(error), status=403)
    except InviteClosed:
        return render(request, "prb_annotate/annotate_unavailable.html", {"campaign": campaign})
    if campaign.consent_text.strip():
        record_consent(joined.membership)
    login(request, joined.membership.user, backend="django.contrib.auth.backends.ModelBackend")
    response = redirect("annotate", campaign.pk)
    _keep_resume_key(response, campaign, token, joined)
    return response


def _account_for(request: HttpRequest, campaign: Campaign) -> User | None:
    """The logged-in account that may join this campaign, or None to join as a participant.

    An account an invite link made for another campaign is not used here: this campaign's link
    makes (or resumes) an account of its own, and logging that one in ends the other session.
    """
    if not request.user.is_authenticated:
        return None
    user = cast(User, request.user)
    joined = participant_campaign_id(user)
    if joined is not None and joined != campaign.pk:
        return None
    return user


def _join_with_account(
    request: HttpRequest, campaign: Campaign, token: str, user: User
) -> HttpResponse:
    if request.method != "POST":
        return _start_page(request, campaign, token, None)
    if not _consent_given(request, campaign):
        return _start_page(request, campaign, token, None, consent_missing=True)
    try:
        membership = join_by_invite(token, user=user)
    except InviteNeedsLogin:
        return redirect_to_login(request.get_full_path())
    except InviteClosed:
        return render(request, "prb_annotate/annotate_unavailable.html", {"campaign": campaign})
    except InvalidInvite as error:
        raise Http404(str(error)) from error
    if membership.role == Membership.Role.MANAGER:
        return redirect("campaign_detail", campaign.pk)
    if campaign.consent_text.strip():
        record_consent(membership)
    return redirect("annotate", campaign.pk)


def _consent_given(request: HttpRequest, campaign: Campaign) -> bool:
    """True when the campaign asks for no consent, or the start button came with it ticked."""
    return not campaign.consent_text.strip() or request.POST.get("consent") == "yes"


def _start_page(
    request: HttpRequest,
    campaign: Campaign,
    token: str,
    ids: StudyIds | None,
    *,
    consent_missing: bool = False,
) -> HttpResponse:
    newcomer = ids is not None and not _has_account(campaign, ids)
    if newcomer:
        assert ids is not None
        try:
            # Said before consent and the start button, not after.
            check_study(campaign, ids.study_id)
            check_listed(campaign, ids.participant_id, client_network(request))
        except JoinRefused as error:
            return _refused(request, campaign, str(error), status=error.status)
    # Said before consent and the start button, never after practice or qualification; on a
    # paused or unstarted campaign too, whose join refuses a newcomer just the same.
    found = places(campaign) if newcomer else None
    if found is not None and found.left < 1:
        return _no_places(request, campaign)
    reach = None if found is None else newcomer_reach(campaign, found)
    values = (ids.participant_id, ids.study_id, ids.session_id) if ids else ("", "", "")
    prolific = dict(zip(PROLIFIC_PARAMS, values, strict=True))
    context = {
        "campaign": campaign,
        "prolific": prolific,
        "token": token,
        "estimate": time_estimate(campaign, reach=reach),
        "consent_missing": consent_missing,
        # Which account Start joins with: the one logged in (``_join_with_account``), or, with
        # the study's values, one of the participant's own, which logging in ends the other.
        "other_session": request.user.is_authenticated and ids is not None,
    }
    # Nothing was written: the page asks again, with the box to tick named.
    return render(
        request, "prb_annotate/join.html", context, status=400 if consent_missing else 200
    )


def _no_places(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Every place is taken: the participant is sent on with the campaign's no-places URL (a
    Prolific completion code for this case), or told to return the study."""
    context = {
        "campaign": campaign,
        "no_places_url": campaign.no_places_url,
        "no_places_code": completion_code(campaign.no_places_url),
    }
    return render(request, "prb_annotate/join_full.html", context, status=NoPlacesLeft.status)


def _refused(
    request: HttpRequest, campaign: Campaign, message: str, *, status: int
) -> HttpResponse:
    context = {"campaign": campaign, "message": message}
    response = render(request, "prb_annotate/join_refused.html", context, status=status)
    if status == StudyUnchecked.status:
        response["Retry-After"] = str(RETRY_AFTER_S)
    return response


def _keep_resume_key(
    response: HttpResponse, campaign: Campaign, token: str, joined: ParticipantJoin
) -> None:
    if joined.resume_key is None:
        return
    # Sent back only to this invite link, never readable by a script.
    response.set_signed_cookie(
        resume_cookie_name(campaign),
        joined.resume_key,
        salt=RESUME_COOKIE_SALT,
        max_age=RESUME_COOKIE_MAX_AGE,
        path=reverse("join", args=[token]),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def _has_account(campaign: Campaign, ids: StudyIds) -> bool:
    return Participant.objects.filter(campaign=campaign, participant_id=ids.participant_id).exists()


def _is_annotator(campaign: Campaign, user_id: int) -> bool:
    return Membership.objects.filter(
        campaign=campaign, user_id=user_id, role=Membership.Role.ANNOTATOR
    ).exists()


urlpatterns = [
    path("join/<str:token>/", join, name="join"),
]
