"""Campaign pages for managers: the list, a new campaign, and the dashboard with progress,
the invite link, members and the pause / resume / close buttons.

Per-campaign pages call ``managed_campaign_or_404`` first: an annotator, or a manager of
other campaigns, gets the same 404 as for a campaign that does not exist.
"""

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from prb_annotate.access import is_staff, managed_campaign_or_404, staff_required
from prb_annotate.audit import sample_report
from prb_annotate.campaigns.lifecycle import (
    CampaignSetupError,
    add_member,
    create_campaign,
    set_status,
)
from prb_annotate.campaigns.planned_sample import SamplePlanError, plan_for_dataset
from prb_annotate.campaigns.progress import campaign_progress
from prb_annotate.forms import PLAN_FIELDS, AddMemberForm, CampaignForm
from prb_annotate.models import Campaign, Membership

# The buttons each status offers: (target status, label).
STATUS_ACTIONS: dict[str, list[tuple[str, str]]] = {
    Campaign.Status.DRAFT: [(Campaign.Status.ACTIVE, "Start"), (Campaign.Status.CLOSED, "Close")],
    Campaign.Status.ACTIVE: [(Campaign.Status.PAUSED, "Pause"), (Campaign.Status.CLOSED, "Close")],
    Campaign.Status.PAUSED: [(Campaign.Status.ACTIVE, "Resume"), (Campaign.Status.CLOSED, "Close")],
    Campaign.Status.CLOSED: [],
}
PROLIFIC_SUFFIX = (
    "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)


@login_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    """Every campaign for staff; for other users the campaigns they manage (404 if none)."""
    campaigns = Campaign.objects.select_related("dataset").annotate(
        item_count=Count("items", distinct=True),
        annotator_count=Count(
            "memberships",
            filter=Q(memberships__role=Membership.Role.ANNOTATOR),
            distinct=True,
        ),
    )
    if not is_staff(request.user):
        campaigns = campaigns.filter(
            memberships__user=cast(User, request.user), memberships__role=Membership.Role.MANAGER
        )
        if not campaigns.exists():
            raise Http404("No campaign to manage.")
    context = {"campaigns": campaigns.order_by("-created_at"), "can_create": is_staff(request.user)}
    return render(request, "prb_annotate/campaign_list.html", context)


@staff_required
def campaign_create(request: HttpRequest) -> HttpResponse:
    form = CampaignForm(request.POST or None)
    if request.method == "POST" and form.is_valid() and "preview" in request.POST:
        return _render_plan_preview(request, form)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            campaign = create_campaign(
                data["dataset"],
                data["name"],
                k=data["annotations_per_pair"],
                sample=data["sample"],
                sample_targets=form.sample_targets(),
                gold_pair_ids=data["gold_pair_ids"],
                gold_rate=data["gold_rate"],
                seed=data["seed"],
                created_by=cast(User, request.user),
                guidelines=data["guidelines"],
                reservation_minutes=data["reservation_minutes"],
                quota_per_annotator=data["quota_per_annotator"],
                completion_url=data["completion_url"],
                majority_threshold=data["majority_threshold"],
                show_timer=data["show_timer"],
            )
        except SamplePlanError as error:
            form.add_error(_plan_field(error), str(error))
        except (ValidationError, ValueError) as error:
            form.add_error(None, _error_text(error))
        else:
            messages.success(request, f"Campaign “{campaign.name}” created. Start it when ready.")
            return redirect("campaign_detail", campaign.pk)
    return render(request, "prb_annotate/campaign_form.html", {"form": form})


def _render_plan_preview(request: HttpRequest, form: CampaignForm) -> HttpResponse:
    """The form again, with the plan its targets give: pairs per category, annotations, cost."""
    context: dict[str, Any] = {"form": form}
    targets = form.sample_targets()
    if targets is None:
        form.add_error("plan_half_width", "Give a target half-width to preview a plan.")
    else:
        data = form.cleaned_data
        try:
            plan = plan_for_dataset(
                data["dataset"],
                targets,
                data["annotations_per_pair"],
                leave_out=data["gold_pair_ids"],
            ).as_json()
        except SamplePlanError as error:
            form.add_error(_plan_field(error), str(error))
        else:
            context["plan_preview"] = {
                "summary": sample_report.plan_summary(plan),
                "rows": sample_report.plan_rows(plan),
            }
    return render(request, "prb_annotate/campaign_form.html", context)


def _plan_field(error: SamplePlanError) -> str | None:
    names = {target: field for field, target in PLAN_FIELDS.items()}
    return names.get(error.field)


def _error_text(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return " ".join(error.messages)
    return str(error)


@login_required
def campaign_detail(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    return _render_dashboard(request, campaign, AddMemberForm())


def _render_dashboard(
    request: HttpRequest, campaign: Campaign, member_form: AddMemberForm, *, status: int = 200
) -> HttpResponse:
    invite_url = request.build_absolute_uri(reverse("join", args=[campaign.invite_token]))
    members = campaign.memberships.select_related("user").order_by("role", "user__username")
    progress = campaign_progress(campaign)
    gold_scored = sum(row.gold_scored for row in progress.annotators)
    gold_correct = sum(row.gold_correct for row in progress.annotators)
    context: dict[str, Any] = {
        "campaign": campaign,
        "progress": progress,
        "gold_accuracy": gold_correct / gold_scored if gold_scored else None,
        "gold_scored": gold_scored,
        "invite_url": invite_url,
        "prolific_url": invite_url + PROLIFIC_SUFFIX,
        "members": members,
        "member_form": member_form,
        "actions": STATUS_ACTIONS.get(campaign.status, []),
    }
    return render(request, "prb_annotate/campaign_detail.html", context, status=status)


@login_required
@require_POST
def campaign_add_member(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = AddMemberForm(request.POST)
    if not form.is_valid():
        return _render_dashboard(request, campaign, form, status=400)
    user = form.cleaned_data["username"]
    try:
        add_member(campaign, user)
    except CampaignSetupError as error:  # an account an invite link made for another campaign
        form.add_error("username", str(error))
        return _render_dashboard(request, campaign, form, status=400)
    messages.success(request, f"{user.get_username()} can now annotate in this campaign.")
    return redirect("campaign_detail", campaign.pk)


@login_required
@require_POST
def campaign_status(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    wanted = request.POST.get("status", "")
    allowed = [target for target, _ in STATUS_ACTIONS.get(campaign.status, [])]
    if wanted not in allowed:
        messages.error(request, f"A {campaign.status} campaign cannot become “{wanted}”.")
        return redirect("campaign_detail", campaign.pk)
    try:
        set_status(campaign, wanted)
    except (ValidationError, ValueError) as error:
        messages.error(request, _error_text(error))
    else:
        messages.success(request, f"The campaign is now {wanted}.")
    return redirect("campaign_detail", campaign.pk)


urlpatterns = [
    path("", campaign_list, name="campaign_list"),
    path("new/", campaign_create, name="campaign_create"),
    path("<row_id:campaign_id>/", campaign_detail, name="campaign_detail"),
    path("<row_id:campaign_id>/members/", campaign_add_member, name="campaign_add_member"),
    path("<row_id:campaign_id>/status/", campaign_status, name="campaign_status"),
]
