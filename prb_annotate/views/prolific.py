"""Prolific's approval and bonus lists from the campaign dashboard: the page that shows both
with the bonus rule, and the two CSV downloads (``campaigns/prolific.py`` makes them)."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_POST

from prb_annotate.access import managed_campaign_or_404
from prb_annotate.campaigns import prolific
from prb_annotate.models import Campaign
from prb_annotate.qualification_forms import BonusRuleForm


@login_required
def campaign_prolific(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    rule = prolific.BonusRule.from_json(campaign.bonus_rule)
    form = BonusRuleForm(initial=rule.as_json())
    context: dict[str, Any] = {
        "campaign": campaign,
        "approvals": prolific.approval_rows(campaign),
        "bonuses": prolific.bonus_rows(campaign),
        "rule_text": rule.describe(campaign),
        "form": form,
    }
    return render(request, "prb_annotate/campaign_prolific.html", context)


@login_required
@require_POST
def campaign_prolific_bonus_rule(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = BonusRuleForm(request.POST)
    if not form.is_valid():
        for field, errors in form.errors.get_json_data().items():
            texts = " ".join(error["message"] for error in errors)
            messages.error(request, f"{form.fields[field].label}: {texts}")
        return redirect("campaign_prolific", campaign.pk)
    try:
        rule = prolific.checked_bonus_rule(form.rule_data())
    except ValidationError as error:
        for field, problems in error.message_dict.items():
            messages.error(request, f"{form.fields[field].label}: {' '.join(problems)}")
    else:
        prolific.set_bonus_rule(campaign, rule)
        messages.success(request, f"Bonus rule saved: {rule.describe(campaign)}.")
    return redirect("campaign_prolific", campaign.pk)


def _csv(campaign: Campaign, kind: str, text: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    filename = prolific.csv_filename(campaign, kind)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def campaign_prolific_approvals(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    return _csv(campaign, "approvals", prolific.approvals_csv(campaign))


@login_required
def campaign_prolific_bonuses(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    return _csv(campaign, "bonuses", prolific.bonuses_csv(campaign))


urlpatterns = [
    path("<row_id:campaign_id>/prolific/", campaign_prolific, name="campaign_prolific"),
    path(
        "<row_id:campaign_id>/prolific/bonus-rule/",
        campaign_prolific_bonus_rule,
        name="campaign_prolific_bonus_rule",
    ),
    path(
        "<row_id:campaign_id>/prolific/approvals.csv",
        campaign_prolific_approvals,
        name="campaign_prolific_approvals",
    ),
    path(
        "<row_id:campaign_id>/prolific/bonuses.csv",
        campaign_prolific_bonuses,
        name="campaign_prolific_bonuses",
    ),
]
