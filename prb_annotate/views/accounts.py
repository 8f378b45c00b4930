"""Annotators added from the campaign dashboard, one or many (pasted, or a CSV file): the list
is shown first, saying which names make new accounts, so that a typo makes no account with a
live link; on confirmation the accounts that do not exist yet are made, and the page that
answers shows each new account's one-time "set your password" link, once
(``prb_annotate.campaigns.accounts``).

Access as for the dashboard: a manager adds annotators only to campaigns they manage, and the
form takes names; no page lists other accounts' usernames. A member is named by their account's
id, and an id that is none of the campaign's accounts answers 404, naming no one
(``members.campaign_account_or_404``). A new set-password link goes only to a manager who may
speak for the account (``members.may_speak_for``); anyone else gets 403.
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path

from prb_annotate.campaigns.accounts import (
    AnnotatorEntry,
    AnnotatorListError,
    add_annotators,
    as_list_text,
    preview_annotators,
)
from prb_annotate.campaigns.members import (
    MemberError,
    NotYoursToSpeakFor,
    campaign_account_or_404,
    reissue_set_password_link,
    remove_member,
)
from prb_annotate.models import Campaign
from prb_annotate.security.access import manager_action
from prb_annotate.views.campaigns import render_dashboard
from prb_annotate.web.forms import AddAnnotatorsForm


@manager_action
def campaign_add_annotators(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    form = AddAnnotatorsForm(request.POST, request.FILES)
    if form.is_valid():
        entries = form.cleaned_data["entries"]
        try:
            if request.POST.get("confirm") != "yes":
                return _preview(request, campaign, entries)
            added = add_annotators(campaign, entries, site=request.build_absolute_uri("/"))
        except AnnotatorListError as error:
            form.add_error(None, error.problems)
        else:
            context = {
                "campaign": campaign,
                "added": added,
                "new_accounts": [row for row in added if row.created],
                "link_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400),
            }
            # Shown on this answer only, never stored: the links are the accounts' keys.
            response = render(request, "prb_annotate/annotators_added.html", context)
            response["Cache-Control"] = "no-store"
            return response
    return render_dashboard(request, campaign, annotators_form=form, status=400)


def _preview(
    request: HttpRequest, campaign: Campaign, entries: list[AnnotatorEntry]
) -> HttpResponse:
    planned = preview_annotators(campaign, entries)
    context = {
        "campaign": campaign,
        "planned": planned,
        "new_count": sum(row.outcome == "new" for row in planned),
        "list_text": as_list_text(entries),
    }
    return render(request, "prb_annotate/annotators_preview.html", context)


@manager_action
def campaign_remove_member(request: HttpRequest, campaign: Campaign, user_id: int) -> HttpResponse:
    """Remove an annotator; the form says whether their answers stay in the audit."""
    member = campaign_account_or_404(campaign, user_id)
    by = request.user if isinstance(request.user, User) else None
    try:
        removed = remove_member(campaign, member, str(request.POST.get("answers", "")), by=by)
    except MemberError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, removed.statement)
    return redirect("campaign_detail", campaign.pk)


@manager_action
def campaign_reissue_link(request: HttpRequest, campaign: Campaign, user_id: int) -> HttpResponse:
    """A new set-password link for a member who lost theirs or let it expire, shown once; 403
    for a manager who may not speak for the account."""
    member = campaign_account_or_404(campaign, user_id)
    site = request.build_absolute_uri("/")
    try:
        row = reissue_set_password_link(campaign, member, site=site, by=request.user)
    except NotYoursToSpeakFor as error:
        context = {"status": 403, "message": str(error)}
        return render(request, "prb_annotate/refused.html", context, status=403)
    except MemberError as error:
        messages.error(request, str(error))
        return redirect("campaign_detail", campaign.pk)
    context = {
        "campaign": campaign,
        "added": [],
        "new_accounts": [row],
        "reissued": True,
        "link_days": max(1, settings.PASSWORD_RESET_TIMEOUT // 86400),
    }
    response = render(request, "prb_annotate/annotators_added.html", context)
    response["Cache-Control"] = "no-store"
    return response


urlpatterns = [
    path(
        "<row_id:campaign_id>/annotators/",
        campaign_add_annotators,
        name="campaign_add_annotators",
    ),
    path(
        "<row_id:campaign_id>/members/<row_id:user_id>/remove/",
        campaign_remove_member,
        name="campaign_remove_member",
    ),
    path(
        "<row_id:campaign_id>/members/<row_id:user_id>/set-password-link/",
        campaign_reissue_link,
        name="campaign_reissue_link",
    ),
]
