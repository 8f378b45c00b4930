"""Prolific's approval and bonus lists from the campaign dashboard: the page that shows both
with the bonus rule, and the two CSV downloads (``campaigns/prolific.py`` makes them); with
``PROLIFIC_API_TOKEN`` set, buttons that send the decisions and pay the bonuses through
Prolific's API and read back each submission's status (``campaigns/prolific_api.py``)."""

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from prb_annotate.campaigns import prolific, prolific_api
from prb_annotate.models import Campaign
from prb_annotate.security.access import managed_campaign_or_404
from prb_annotate.web.forms import field_messages
from prb_annotate.web.qualification_forms import BonusRuleForm


@login_required
def campaign_prolific(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    rule = prolific.BonusRule.from_json(campaign.bonus_rule)
    form = BonusRuleForm(initial=rule.as_json())
    context: dict[str, Any] = {
        "campaign": campaign,
        "approvals": prolific.approval_rows(campaign),
        "bonuses": prolific.bonus_rows(campaign),
        "payments": campaign.bonus_payments.select_related("paid_by").order_by("-paid_at", "-pk"),
        "unconfirmed": prolific_api.unconfirmed(campaign),
        "rule_text": rule.describe(campaign),
        "form": form,
        "api": prolific_api.configured(),
        "api_actions": [
            ("decisions", _("Approve and reject on Prolific")),
            ("bonuses", _("Pay the bonuses on Prolific")),
            ("statuses", _("Read statuses back")),
        ],
        "statuses": request.session.pop(f"prolific-statuses-{campaign.pk}", None),
    }
    return render(request, "prb_annotate/campaign_prolific.html", context)


@login_required
@require_POST
def campaign_prolific_bonus_rule(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form = BonusRuleForm(request.POST)
    if not form.is_valid():
        for text in field_messages(form):
            messages.error(request, text)
        return redirect("campaign_prolific", campaign.pk)
    try:
        rule = prolific.checked_bonus_rule(form.rule_data())
    except ValidationError as error:
        for field, problems in error.message_dict.items():
            messages.error(
                request,
                _("%(field_label)s: %(join_problems)s")
                % {"field_label": form.fields[field].label, "join_problems": " ".join(problems)},
            )
    else:
        prolific.set_bonus_rule(campaign, rule)
        messages.success(
            request,
            _("Bonus rule saved: %(describe_campaign)s.")
            % {"describe_campaign": rule.describe(campaign)},
        )
    return redirect("campaign_prolific", campaign.pk)


@login_required
@require_POST
def campaign_prolific_send(request: HttpRequest, campaign_id: int, action: str) -> HttpResponse:
    """``decisions``, ``bonuses`` or ``statuses`` through Prolific's API; the page says what
    Prolific did, or why it could not."""
    campaign = managed_campaign_or_404(request.user, campaign_id)
    if not prolific_api.configured():
        messages.error(request, _("Prolific's API is not configured: use the CSVs."))
        return redirect("campaign_prolific", campaign.pk)
    try:
        if action == "decisions":
            sent = prolific_api.send_decisions(campaign)
            if sent.failure:
                # What went before the failure was sent: said beside Prolific's answer.
                messages.warning(request, sent.statement)
                messages.error(request, sent.failure)
            else:
                messages.success(request, sent.statement)
        elif action == "bonuses":
            paid = prolific_api.pay_bonuses(campaign, by=request.user)
            messages.success(request, paid.statement)
        elif action == "statuses":
            statuses = prolific_api.read_back(campaign)
            # Shown once, on the page the redirect lands on.
            request.session[f"prolific-statuses-{campaign.pk}"] = sorted(statuses.items())
            messages.success(
                request,
                ngettext(
                    "Read %(count)d submission back from Prolific.",
                    "Read %(count)d submissions back from Prolific.",
                    len(statuses),
                )
                % {"count": len(statuses)},
            )
        else:
            messages.error(request, _("Unknown action %(action)s.") % {"action": repr(action)})
    except prolific_api.ProlificError as error:
        messages.error(request, str(error))
    return redirect("campaign_prolific", campaign.pk)


@login_required
@require_POST
def campaign_prolific_settle(request: HttpRequest, campaign_id: int) -> HttpResponse:
    """A manager's word on a bulk bonus whose payment Prolific never confirmed: ``outcome``
    ``paid`` records its shares as paid, ``unpaid`` withdraws them (owed again)."""
    campaign = managed_campaign_or_404(request.user, campaign_id)
    payment_id = request.POST.get("payment", "")
    outcome = request.POST.get("outcome", "")
    if outcome not in ("paid", "unpaid"):
        messages.error(request, _("Say whether Prolific paid the bulk bonus or not."))
        return redirect("campaign_prolific", campaign.pk)
    settled = prolific_api.settle(campaign, payment_id, paid=outcome == "paid")
    if not settled:
        messages.error(
            request,
            _(
                "No share of bulk bonus %(payment)s is waiting for your word: it was settled "
                "already, or its press may still be waiting for Prolific."
            )
            % {"payment": payment_id or _("(no id)")},
        )
    elif outcome == "paid":
        messages.success(
            request,
            ngettext(
                "%(count)d share of bulk bonus %(payment)s recorded as paid.",
                "%(count)d shares of bulk bonus %(payment)s recorded as paid.",
                settled,
            )
            % {"count": settled, "payment": payment_id or _("(no id)")},
        )
    else:
        messages.success(
            request,
            ngettext(
                "%(count)d share of bulk bonus %(payment)s withdrawn: it is owed again.",
                "%(count)d shares of bulk bonus %(payment)s withdrawn: they are owed again.",
                settled,
            )
            % {"count": settled, "payment": payment_id or _("(no id)")},
        )
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
    path(
        "<row_id:campaign_id>/prolific/send/<str:action>/",
        campaign_prolific_send,
        name="campaign_prolific_send",
    ),
    path("<row_id:campaign_id>/prolific/", campaign_prolific, name="campaign_prolific"),
    path(
        "<row_id:campaign_id>/prolific/settle/",
        campaign_prolific_settle,
        name="campaign_prolific_settle",
    ),
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
