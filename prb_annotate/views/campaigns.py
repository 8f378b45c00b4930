"""Campaign pages for managers: the list, a new campaign, and the dashboard with progress,
replacement slots, the study link and the sign-up invite, members and the pause / resume /
close buttons (settings: ``campaign_settings.py``; adding annotators: ``accounts.py``).

Per-campaign pages call ``managed_campaign_or_404`` first: an annotator, or a manager of
other campaigns, gets the same 404 as for a campaign that does not exist.
"""

import secrets
from datetime import datetime
from typing import Any, cast
from urllib.parse import urlencode

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
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from prb_annotate.audit import charts as svg
from prb_annotate.audit import plan_odds, ppi, sample_report
from prb_annotate.audit.exclusions import exclusion_history, pairs_short_of_answers
from prb_annotate.audit.phrases import shown
from prb_annotate.audit.quality import (
    AGREEMENT_MARK_P,
    HONEST_NOTE,
    HONEST_SPREAD,
    LEFT_OUT_REASONS,
    OUTLIER_RULE_PHRASES,
    POSITION_TEST,
)
from prb_annotate.audit.sampling import PlanError, PlanTargets
from prb_annotate.campaigns.join_limits import (
    accounts_per_address,
    checks_study_list,
    join_bursts,
    slot_count,
)
from prb_annotate.campaigns.lifecycle import (
    CampaignSetupError,
    add_member,
    create_campaign,
    set_status,
)
from prb_annotate.campaigns.members import ANSWER_CHOICES, offers_new_link
from prb_annotate.campaigns.network_share import slots_per_network
from prb_annotate.campaigns.planned_sample import SamplePlanError, plan_for_dataset
from prb_annotate.campaigns.progress import AnnotatorProgress, campaign_progress, dashboard_figures
from prb_annotate.campaigns.qualification.setup import (
    MemberQualification,
    member_qualifications,
    outcome_counts,
)
from prb_annotate.campaigns.setting_fields import StrOrPromise
from prb_annotate.models import Campaign, CampaignItem, Membership
from prb_annotate.security.access import (
    is_staff,
    managed_campaign_or_404,
    managed_campaigns,
    manager_action,
    staff_required,
)
from prb_annotate.security.addresses import IPV4_JOIN_NETWORK_BITS, IPV6_JOIN_NETWORK_BITS
from prb_annotate.web.forms import (
    PLAN_FIELDS,
    AddAnnotatorsForm,
    AddMemberForm,
    CampaignForm,
    QualitySettingsForm,
    StudyIdForm,
)
from prb_annotate.web.status_words import status_word

# The buttons each status offers: (target status, label).
STATUS_ACTIONS: dict[str, list[tuple[str, StrOrPromise]]] = {
    Campaign.Status.DRAFT: [
        (Campaign.Status.ACTIVE, gettext_lazy("Start")),
        (Campaign.Status.CLOSED, gettext_lazy("Close")),
    ],
    Campaign.Status.ACTIVE: [
        (Campaign.Status.PAUSED, gettext_lazy("Pause")),
        (Campaign.Status.CLOSED, gettext_lazy("Close")),
    ],
    Campaign.Status.PAUSED: [
        (Campaign.Status.ACTIVE, gettext_lazy("Resume")),
        (Campaign.Status.CLOSED, gettext_lazy("Close")),
    ],
    Campaign.Status.CLOSED: [],
}
# Steps drawn in the completion chart: enough to show its shape, small enough for the page.
CHART_POINTS = 300
# How often an active campaign's dashboard reloads itself (refresh.js reads it from the page).
REFRESH_SECONDS = 60
OUTLIER_LABELS = {
    "gold_accuracy": gettext_lazy("low gold accuracy"),
    "agreement": gettext_lazy("agrees less than the others"),
    "position_bias": gettext_lazy("position bias"),
    "fast": gettext_lazy("answers too fast"),
    "straight_lining": gettext_lazy("straight-lining"),
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
            # Regular items, as the dashboard counts them (gold items apart).
            item_count=Count(
                "items", filter=Q(items__kind=CampaignItem.Kind.REGULAR), distinct=True
            ),
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
                sample_design=form.sample_design(),
                gold_pair_ids=data["gold_pair_ids"],
                gold_rate=data["gold_rate"],
                practice_pairs=data["practice_pair_ids"],
                qualification_pairs=data["qualification_pair_ids"],
                qualification_rule=form.qualification_rule(),
                seed=data["seed"],
                created_by=cast(User, request.user),
                external=data["external"],
                **form.campaign_settings(),
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
    if campaign.qualification_items.exists():
        return _(
            "Campaign “%(name)s” created. Start it when ready. Give its practice and "
            "qualification pairs their explanations first."
        ) % {"name": campaign.name}
    return _("Campaign “%(name)s” created. Start it when ready.") % {"name": campaign.name}


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
                design=form.sample_design(),
            )
        except SamplePlanError as error:
            form.add_error(_plan_field(error), str(error))
        else:
            # The chance of reaching the targets is a uniform draw's; an active plan says what
            # each design expects instead.
            shown = plan.as_json() if plan.design else plan_odds.with_odds(plan)
            context["plan_preview"] = {
                "summary": sample_report.plan_summary(shown),
                "odds": sample_report.plan_odds(shown),
                "design": sample_report.design_summary(shown),
                "rows": sample_report.plan_rows(shown),
            }
            _add_model_plan(context["plan_preview"], form, shown, targets)
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
    slots = slot_count(campaign)
    # The participant row tells the table which accounts sign in through a link.
    members = campaign.memberships.select_related("user", "user__participant").order_by(
        "role", "user__username"
    )
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
        # Prolific then refuses the try link's made-up participant: the page says so instead.
        "study_list_checked": checks_study_list(campaign),
        "pairs_short": pairs_short_of_answers(campaign, left_out),
        "members": members,
        "offers_new_link": offers_new_link(request.user, members),
        "member_answer_choices": ANSWER_CHOICES,
        # Each mark's threshold from where the marks read it, so the page says why they differ.
        "member_form": member_form or AddMemberForm(),
        "study_form": study_form or StudyIdForm(instance=campaign),
        "slots": slots,
        "accounts_per_address": accounts_per_address(campaign, slots),
        # Read from the count just kept (network_share.slot_count keeps it for the queue).
        "slots_per_network": slots_per_network(campaign),
        "join_window_minutes": settings.PRB_JOIN_WINDOW_MINUTES,
        # What one network is, as join_limits counts it.
        "network_bits": {"ipv4": IPV4_JOIN_NETWORK_BITS, "ipv6": IPV6_JOIN_NETWORK_BITS},
        "join_bursts": join_bursts(campaign),
        "annotators_form": annotators_form or AddAnnotatorsForm(),
        "email_enabled": settings.PRB_SEND_EMAIL,
        "actions": STATUS_ACTIONS.get(campaign.status, []),
        "annotator_rows": annotator_rows(
            progress.annotators, figures["annotators"], qualifications
        ),
        "qualification_counts": outcome_counts(qualifications),
        "screening": campaign.qualification_items.exists(),
        # The audit keeps these words in English; the page shows them in the reader's language.
        "outlier_rules": {
            name: phrase.shown(**figures)
            for name, (phrase, figures) in OUTLIER_RULE_PHRASES.items()
        },
        "agreement_note": HONEST_NOTE.shown(**HONEST_SPREAD.figures()),
        # The levels the two marks are read at, from the module that marks (audit/quality.py),
        # and the position test's words from the object that runs it.
        "agreement_mark_p": AGREEMENT_MARK_P,
        "position_test": POSITION_TEST,
        "quality_form": QualitySettingsForm(instance=campaign),
        "exclusions": exclusion_history(campaign),
        "completion_chart": completion_chart(figures["completion"], progress.items_total),
        "refreshes": campaign.is_active,
        "refresh_seconds": REFRESH_SECONDS,
    }
    return render(request, "prb_annotate/campaign_detail.html", context, status=status)


def campaign_links(request: HttpRequest, campaign: Campaign) -> dict[str, str]:
    """The campaign's links as full URLs: the study link (plain, in Prolific's form, and with
    test values to try the participant flow) and the sign-up invite."""
    invite_url = request.build_absolute_uri(reverse("join", args=[campaign.invite_token]))
    test_id = f"try-{secrets.token_hex(6)}"
    # The campaign's own study id when it has one: the link refuses any other (join_limits.py).
    study = campaign.prolific_study_id or "try"
    try_query = urlencode({"PROLIFIC_PID": test_id, "STUDY_ID": study, "SESSION_ID": test_id})
    return {
        "invite_url": invite_url,
        "prolific_url": invite_url + PROLIFIC_SUFFIX,
        "try_url": f"{invite_url}?{try_query}",
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
                "left_out_label": shown(LEFT_OUT_REASONS.get(figures.get("left_out") or "", "")),
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
        title=_("Items complete over time"),
        top=float(total),
        top_label=f"{total}",
        time_labels=[f"{at:%Y-%m-%d %H:%M}" for at in (times[0], times[-1])] if times else [],
    )
    return mark_safe(chart)  # noqa: S308 - charts.py escapes every piece of text it draws


@manager_action
def campaign_add_member(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    form = AddMemberForm(request.POST)
    if not form.is_valid():
        return render_dashboard(request, campaign, member_form=form, status=400)
    user = form.cleaned_data["username"]
    try:
        add_member(campaign, user)
    except CampaignSetupError as error:  # an account an invite link made for another campaign
        form.add_error("username", str(error))
        return render_dashboard(request, campaign, member_form=form, status=400)
    messages.success(
        request,
        _("%(username)s can now annotate in this campaign.") % {"username": user.get_username()},
    )
    return redirect("campaign_detail", campaign.pk)


@manager_action
def campaign_study(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Set the Prolific study whose participants the invite link admits (empty: any)."""
    form = StudyIdForm(request.POST, instance=campaign)
    if not form.is_valid():
        return render_dashboard(request, campaign, study_form=form, status=400)
    form.save()
    study = campaign.prolific_study_id
    messages.success(
        request,
        _("The invite link now admits participants of study %(study)s only.") % {"study": study}
        if study
        else _("The invite link now admits participants of any study."),
    )
    return redirect(reverse("campaign_detail", args=[campaign.pk]) + "#invite")


@manager_action
def campaign_status(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    wanted = request.POST.get("status", "")
    allowed = [target for target, _ in STATUS_ACTIONS.get(campaign.status, [])]
    if wanted not in allowed:
        messages.error(
            request,
            _("A %(status)s campaign cannot become “%(wanted)s”.")
            % {"status": status_word(campaign.status), "wanted": status_word(wanted)},
        )
        return redirect("campaign_detail", campaign.pk)
    if wanted == Campaign.Status.CLOSED and request.POST.get("confirmed") != "yes":
        # Closing is final: the button leads to a page that says so and asks again.
        return redirect("campaign_close", campaign.pk)
    try:
        set_status(campaign, wanted)
    except (ValidationError, ValueError) as error:
        messages.error(request, _error_text(error))
    else:
        messages.success(
            request, _("The campaign is now %(wanted)s.") % {"wanted": status_word(wanted)}
        )
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
