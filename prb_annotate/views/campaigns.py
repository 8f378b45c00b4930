"""Campaign pages for managers: the list, a new campaign, and the dashboard with progress,
replacement slots, the study link and the sign-up invite, members and the pause / resume /
close buttons (settings: ``campaign_settings.py``; adding annotators: ``accounts.py``).

Per-campaign pages call ``managed_campaign_or_404`` first: an annotator, or a manager of
other campaigns, gets the same 404 as for a campaign that does not exist.
"""

import secrets
from datetime import datetime
from typing import Any, cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_POST

from prb_annotate.access import (
    is_staff,
    managed_campaign_or_404,
    managed_campaigns,
    staff_required,
)
from prb_annotate.audit import charts as svg
from prb_annotate.audit import ppi, sample_report
from prb_annotate.audit.exclusions import exclusion_history, pairs_short_of_answers
from prb_annotate.audit.quality import LEFT_OUT_REASONS, OUTLIER_RULES
from prb_annotate.audit.sampling import PlanError, PlanTargets
from prb_annotate.campaigns.join_limits import accounts_per_address, slot_count
from prb_annotate.campaigns.lifecycle import (
    CampaignSetupError,
    add_member,
    create_campaign,
    set_status,
)
from prb_annotate.campaigns.planned_sample import SamplePlanError, plan_for_dataset
from prb_annotate.campaigns.progress import AnnotatorProgress, campaign_progress, dashboard_figures
from prb_annotate.campaigns.qualification.setup import (
    MemberQualification,
    member_qualifications,
    outcome_counts,
)
from prb_annotate.forms import (
    PLAN_FIELDS,
    AddAnnotatorsForm,
    AddMemberForm,
    CampaignForm,
    QualitySettingsForm,
    StudyIdForm,
)
from prb_annotate.models import Campaign, Membership

# The buttons each status offers: (target status, label).
STATUS_ACTIONS: dict[str, list[tuple[str, str]]] = {
    Campaign.Status.DRAFT: [(Campaign.Status.ACTIVE, "Start"), (Campaign.Status.CLOSED, "Close")],
    Campaign.Status.ACTIVE: [(Campaign.Status.PAUSED, "Pause"), (Campaign.Status.CLOSED, "Close")],
    Campaign.Status.PAUSED: [(Campaign.Status.ACTIVE, "Resume"), (Campaign.Status.CLOSED, "Close")],
    Campaign.Status.CLOSED: [],
}
# Steps drawn in the completion chart: enough to show its shape, small enough for the page.
CHART_POINTS = 300
OUTLIER_LABELS = {
    "gold_accuracy": "low gold accuracy",
    "agreement": "disagrees with the others",
    "position_bias": "position bias",
    "fast": "answers too fast",
    "straight_lining": "straight-lining",
}
PROLIFIC_SUFFIX = (
    "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)


@login_required
def campaign_list(request: HttpRequest) -> HttpResponse:
    """Every campaign for staff; for other users the campaigns they manage (404 if none)."""
    campaigns = (
        managed_campaigns(request.user)
        .select_related("dataset")
        .annotate(
            item_count=Count("items", distinct=True),
            annotator_count=Count(
                "memberships",
                filter=Q(memberships__role=Membership.Role.ANNOTATOR),
                distinct=True,
            ),
        )
    )
    if not is_staff(request.user) and not campaigns.exists():
        raise Http404("No campaign to manage.")
    context = {"campaigns": campaigns.order_by("-created_at"), "can_create": is_staff(request.user)}
    return render(request, "prb_annotate/campaign_list.html", context)


@staff_required
def campaign_create(request: HttpRequest) -> HttpResponse:
    # ?dataset=ID comes from a dataset's page ("Create a campaign on this dataset").
    form = CampaignForm(request.POST or None, initial={"dataset": request.GET.get("dataset")})
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
                practice_pairs=data["practice_pair_ids"],
                qualification_pairs=data["qualification_pair_ids"],
                qualification_rule=form.qualification_rule(),
                screen_out_url=data["screen_out_url"],
                seed=data["seed"],
                created_by=cast(User, request.user),
                external=data["external"],
                guidelines=data["guidelines"],
                reservation_minutes=data["reservation_minutes"],
                quota_per_annotator=data["quota_per_annotator"],
                completion_url=data["completion_url"],
                prolific_study_id=data["prolific_study_id"],
                majority_threshold=data["majority_threshold"],
                show_timer=data["show_timer"],
                min_gold_accuracy=data["min_gold_accuracy"],
                position_bias_max_p=data["position_bias_max_p"],
                fast_answer_seconds=(
                    10.0 if data["fast_answer_seconds"] is None else data["fast_answer_seconds"]
                ),
            )
        except SamplePlanError as error:
            form.add_error(_plan_field(error), str(error))
        except (ValidationError, ValueError) as error:
            form.add_error(None, _error_text(error))
        else:
            messages.success(request, _created_message(campaign))
            return redirect("campaign_detail", campaign.pk)
    previewing = request.method == "POST" and "preview" in request.POST
    context = {"form": form, "groups": form.groups(previewing=previewing), "previewing": previewing}
    return render(request, "prb_annotate/campaign_form.html", context)


def _created_message(campaign: Campaign) -> str:
    text = f"Campaign “{campaign.name}” created. Start it when ready."
    if campaign.qualification_items.exists():
        text += " Give its practice and qualification pairs their explanations first."
    return text


def _render_plan_preview(request: HttpRequest, form: CampaignForm) -> HttpResponse:
    """The form again, with the plan its targets give: pairs per category, annotations, cost."""
    context: dict[str, Any] = {"form": form, "previewing": True}
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
                leave_out=[
                    *data["gold_pair_ids"],
                    *data["practice_pair_ids"],
                    *data["qualification_pair_ids"],
                ],
            ).as_json()
        except SamplePlanError as error:
            form.add_error(_plan_field(error), str(error))
        else:
            context["plan_preview"] = {
                "summary": sample_report.plan_summary(plan),
                "rows": sample_report.plan_rows(plan),
            }
            _add_model_plan(context["plan_preview"], form, plan, targets)
    context["groups"] = form.groups(previewing=True)
    return render(request, "prb_annotate/campaign_form.html", context)


def _add_model_plan(
    preview: dict[str, Any], form: CampaignForm, plan: dict[str, Any], targets: PlanTargets
) -> None:
    """The human pairs the targets need with a model annotator of the agreement entered."""
    agreement = form.cleaned_data.get("plan_model_agreement")
    if agreement is None:
        return
    populations = {row["category"]: row["population"] for row in plan["categories"]}
    try:
        found = ppi.plan_for_targets(populations, targets, plan["k"], agreement)
    except PlanError as error:
        form.add_error("plan_model_agreement", error.message)
        return
    for row, planned in zip(preview["rows"], found["per_category"], strict=True):
        row["with_model"] = planned["with_model"]
    preview["model_agreement"] = sample_report.percent(agreement)
    preview["with_model"] = found["with_model"]


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
    return render_dashboard(request, campaign)


def render_dashboard(
    request: HttpRequest,
    campaign: Campaign,
    *,
    member_form: AddMemberForm | None = None,
    annotators_form: AddAnnotatorsForm | None = None,
    study_form: StudyIdForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """The dashboard; a form given here is shown with its errors (``status`` 400)."""
    members = campaign.memberships.select_related("user").order_by("role", "user__username")
    # Figures first: computing them syncs replacement slots, which the progress counts.
    figures = dashboard_figures(campaign)
    progress = campaign_progress(campaign, median_times=False)
    left_out = {row["annotator"] for row in figures["annotators"] if row.get("left_out")}
    qualifications = member_qualifications(campaign)
    gold_scored = sum(row.gold_scored for row in progress.annotators)
    gold_correct = sum(row.gold_correct for row in progress.annotators)
    context: dict[str, Any] = {
        "campaign": campaign,
        "progress": progress,
        "gold_accuracy": gold_correct / gold_scored if gold_scored else None,
        "gold_scored": gold_scored,
        **campaign_links(request, campaign),
        "pairs_short": pairs_short_of_answers(campaign, left_out),
        "members": members,
        "member_form": member_form or AddMemberForm(),
        "study_form": study_form or StudyIdForm(instance=campaign),
        "slots": slot_count(campaign),
        "accounts_per_address": accounts_per_address(campaign),
        "annotators_form": annotators_form or AddAnnotatorsForm(),
        "email_enabled": settings.PRB_SEND_EMAIL,
        "actions": STATUS_ACTIONS.get(campaign.status, []),
        "annotator_rows": annotator_rows(
            progress.annotators, figures["annotators"], qualifications
        ),
        "qualification_counts": outcome_counts(qualifications),
        "screening": campaign.qualification_items.exists(),
        "outlier_rules": OUTLIER_RULES,
        "quality_form": QualitySettingsForm(instance=campaign),
        "exclusions": exclusion_history(campaign),
        "completion_chart": completion_chart(figures["completion"], progress.items_total),
        "refreshes": campaign.is_active,
    }
    return render(request, "prb_annotate/campaign_detail.html", context, status=status)


def campaign_links(request: HttpRequest, campaign: Campaign) -> dict[str, str]:
    """The campaign's links as full URLs: the study link (plain, in Prolific's form, and with
    test values to try the participant flow) and the sign-up invite."""
    invite_url = request.build_absolute_uri(reverse("join", args=[campaign.invite_token]))
    test_id = f"try-{secrets.token_hex(6)}"
    return {
        "invite_url": invite_url,
        "prolific_url": invite_url + PROLIFIC_SUFFIX,
        "try_url": f"{invite_url}?PROLIFIC_PID={test_id}&STUDY_ID=try&SESSION_ID={test_id}",
        "signup_url": request.build_absolute_uri(reverse("signup", args=[campaign.signup_token])),
    }


def annotator_rows(
    progress: list[AnnotatorProgress],
    quality: list[dict[str, Any]],
    qualifications: dict[int, MemberQualification] | None = None,
) -> list[dict[str, Any]]:
    """Each annotator's progress with their quality-control figures (empty before any answer)
    and their practice and qualification."""
    by_name = {row["annotator"]: row for row in quality}
    rows = []
    for row in progress:
        figures = by_name.get(row.username) or {}
        rows.append(
            {
                "progress": row,
                "quality": figures,
                "outliers": [OUTLIER_LABELS[name] for name in figures.get("outliers", [])],
                "left_out_label": LEFT_OUT_REASONS.get(figures.get("left_out") or ""),
                "qualification": (qualifications or {}).get(row.user_id),
            }
        )
    return rows


def completion_chart(points: list[tuple[str, int]], total: int) -> SafeString:
    """Items complete over time, thinned to at most ``CHART_POINTS`` steps."""
    if len(points) > CHART_POINTS:
        step = len(points) / CHART_POINTS
        points = [points[int(index * step)] for index in range(CHART_POINTS)] + [points[-1]]
    times = [datetime.fromisoformat(at) for at, _ in points]
    chart = svg.line_chart(
        [svg.Point(at.timestamp(), count) for at, (_, count) in zip(times, points, strict=True)],
        title="Items complete over time",
        top=float(total),
        top_label=f"{total}",
        time_labels=[f"{at:%Y-%m-%d %H:%M}" for at in (times[0], times[-1])] if times else [],
    )
    return mark_safe(chart)  # noqa: S308 - charts.py escapes every piece of text it draws


@login_required
@require_POST
def campaign_add_member(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = AddMemberForm(request.POST)
    if not form.is_valid():
        return render_dashboard(request, campaign, member_form=form, status=400)
    user = form.cleaned_data["username"]
    try:
        add_member(campaign, user)
    except CampaignSetupError as error:  # an account an invite link made for another campaign
        form.add_error("username", str(error))
        return render_dashboard(request, campaign, member_form=form, status=400)
    messages.success(request, f"{user.get_username()} can now annotate in this campaign.")
    return redirect("campaign_detail", campaign.pk)


@login_required
@require_POST
def campaign_study(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """Set the Prolific study whose participants the invite link admits (empty: any)."""
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = StudyIdForm(request.POST, instance=campaign)
    if not form.is_valid():
        return render_dashboard(request, campaign, study_form=form, status=400)
    form.save()
    study = campaign.prolific_study_id
    messages.success(
        request,
        f"The invite link now admits participants of study {study} only."
        if study
        else "The invite link now admits participants of any study.",
    )
    return redirect(reverse("campaign_detail", args=[campaign.pk]) + "#invite")


@login_required
@require_POST
def campaign_status(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    wanted = request.POST.get("status", "")
    allowed = [target for target, _ in STATUS_ACTIONS.get(campaign.status, [])]
    if wanted not in allowed:
        messages.error(request, f"A {campaign.status} campaign cannot become “{wanted}”.")
        return redirect("campaign_detail", campaign.pk)
    if wanted == Campaign.Status.CLOSED and request.POST.get("confirmed") != "yes":
        # Closing is final: the button leads to a page that says so and asks again.
        return redirect("campaign_close", campaign.pk)
    try:
        set_status(campaign, wanted)
    except (ValidationError, ValueError) as error:
        messages.error(request, _error_text(error))
    else:
        messages.success(request, f"The campaign is now {wanted}.")
    return redirect("campaign_detail", campaign.pk)


@login_required
def campaign_close(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """The confirmation step before closing: what closing does, and the final button."""
    campaign = managed_campaign_or_404(request.user, campaign_id)
    if Campaign.Status.CLOSED not in [target for target, _ in STATUS_ACTIONS[campaign.status]]:
        return redirect("campaign_detail", campaign.pk)
    progress = campaign_progress(campaign, median_times=False)
    context = {"campaign": campaign, "progress": progress}
    return render(request, "prb_annotate/campaign_close.html", context)


urlpatterns = [
    path("", campaign_list, name="campaign_list"),
    path("new/", campaign_create, name="campaign_create"),
    path("<row_id:campaign_id>/", campaign_detail, name="campaign_detail"),
    path("<row_id:campaign_id>/members/", campaign_add_member, name="campaign_add_member"),
    path("<row_id:campaign_id>/status/", campaign_status, name="campaign_status"),
    path("<row_id:campaign_id>/study/", campaign_study, name="campaign_study"),
    path("<row_id:campaign_id>/close/", campaign_close, name="campaign_close"),
]
