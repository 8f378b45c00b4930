"""The managers' practice and qualification page, linked from the campaign dashboard: the
practice and qualification pairs with their expected answers and explanations, the pass rule,
the screen-out URL, each annotator's outcome, and letting one who failed in.

The rules are in ``campaigns/qualification/setup.py``; every view calls
``managed_campaign_or_404`` first.
"""

from dataclasses import dataclass
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.utils.translation import gettext as _

from prb_annotate.campaigns.members import campaign_account_or_404
from prb_annotate.campaigns.qualification import rules, setup
from prb_annotate.models import Campaign, Pair, QualificationItem
from prb_annotate.security.access import managed_campaign_or_404, manager_action
from prb_annotate.web.forms import field_messages
from prb_annotate.web.qualification_forms import (
    DIFFERENTIATOR_CHOICES,
    FIT_CHOICES,
    AdmitForm,
    PassRuleForm,
    QualificationItemForm,
)

PHASES = QualificationItem.Phase


def _user(request: HttpRequest) -> User:
    return cast(User, request.user)  # login_required


def _field_messages(request: HttpRequest, error: ValidationError) -> None:
    for field, texts in error.message_dict.items():
        prefix = "" if field == "__all__" else f"{field.replace('_', ' ')}: "
        messages.error(request, prefix + " ".join(texts))


@login_required
def campaign_qualification(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    return _render(request, campaign, QualificationItemForm(), status=200)


def _render(
    request: HttpRequest, campaign: Campaign, item_form: QualificationItemForm, *, status: int
) -> HttpResponse:
    rule = rules.PassRule.from_json(campaign.qualification_rule)
    phases = {
        phase: list(setup.items_of(campaign, phase).annotate(answer_count=Count("answers")))
        for phase in PHASES.values
    }
    members = setup.member_qualifications(campaign)
    rule_form = PassRuleForm(
        initial={
            "min_correct": rule.min_correct,
            "required_questions": list(rule.required_questions),
            "screen_out_url": campaign.screen_out_url,
        }
    )
    context: dict[str, Any] = {
        "campaign": campaign,
        "practice": [_row(item) for item in phases[PHASES.PRACTICE]],
        "qualification": [_row(item) for item in phases[PHASES.QUALIFICATION]],
        "rule_text": rule.describe(len(phases[PHASES.QUALIFICATION])),
        "rule_fixed": setup.qualification_answered(campaign),
        "rule_form": rule_form,
        "item_form": item_form,
        "members": list(members.values()),
        "counts": setup.outcome_counts(members),
        "labels": rules.QUESTION_LABELS,
    }
    return render(request, "prb_annotate/campaign_qualification.html", context, status=status)


@dataclass(frozen=True)
class _ItemRow:
    item: QualificationItem
    expected: list[tuple[str, str]]  # (question's label, expected answer) in words
    edit_form: QualificationItemForm


def _row(item: QualificationItem) -> _ItemRow:
    words = {"rubric_fit": dict(FIT_CHOICES), "differentiator": dict(DIFFERENTIATOR_CHOICES)}
    expected = [
        (rules.QUESTION_LABELS[question], str(words[question].get(answer, answer)))
        for question, answer in item.expected_answers.items()
    ]
    return _ItemRow(item, expected, _edit_form(item))


def _edit_form(item: QualificationItem) -> QualificationItemForm:
    """The row's own form, filled with what the item is now: editing one field changes
    nothing else."""
    initial: dict[str, Any] = {"pair": item.pair.external_id, "phase": item.phase}
    for question in rules.EXPECTABLE:
        initial[f"expected_{question}"] = item.expected_answers.get(question, "")
        initial[f"explanation_{question}"] = item.explanations.get(question, "")
    return QualificationItemForm(initial=initial, auto_id=f"edit-{item.pk}-%s")


@manager_action
def campaign_qualification_item(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Choose a pair (or change one already chosen)."""
    form = QualificationItemForm(request.POST)
    if not form.is_valid():
        return _render(request, campaign, form, status=400)
    external_id = form.cleaned_data["pair"].strip()
    pair = Pair.objects.filter(dataset_id=campaign.dataset_id, external_id=external_id).first()
    if pair is None:
        form.add_error("pair", f"No pair {external_id!r} in dataset {campaign.dataset.name}.")
        return _render(request, campaign, form, status=400)
    try:
        item = setup.choose_item(
            campaign, pair, form.cleaned_data["phase"], form.expected(), form.explanations()
        )
    except ValidationError as error:
        for field, texts in error.message_dict.items():
            target = field if field in form.fields else None
            form.add_error(target, " ".join(texts))
        return _render(request, campaign, form, status=400)
    messages.success(
        request,
        _("Pair %(external_id)s is a %(item_phase)s item.")
        % {"external_id": external_id, "item_phase": item.phase},
    )
    return redirect("campaign_qualification", campaign.pk)


@manager_action
def campaign_qualification_remove(
    request: HttpRequest, campaign: Campaign, pair_id: int
) -> HttpResponse:
    pair = get_object_or_404(Pair, pk=pair_id, dataset_id=campaign.dataset_id)
    try:
        setup.remove_item(campaign, pair)
    except ValidationError as error:
        _field_messages(request, error)
    else:
        messages.success(
            request,
            _("Pair %(external_id)s is no longer used before the queue.")
            % {"external_id": pair.external_id},
        )
    return redirect("campaign_qualification", campaign.pk)


@manager_action
def campaign_qualification_rule(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """The pass rule and the screen-out URL."""
    form = PassRuleForm(request.POST)
    if not form.is_valid():
        for text in field_messages(form):
            messages.error(request, text)
        return redirect("campaign_qualification", campaign.pk)
    data = form.cleaned_data
    try:
        setup.set_screen_out_url(campaign, data["screen_out_url"])
        setup.set_rule(
            campaign,
            min_correct=data["min_correct"],
            required_questions=data["required_questions"],
        )
    except ValidationError as error:
        _field_messages(request, error)
    else:
        messages.success(request, _("Pass rule and screen-out URL saved."))
    return redirect("campaign_qualification", campaign.pk)


@manager_action
def campaign_qualification_admit(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """Let an annotator who failed in (from this page or the dashboard's table)."""
    form = AdmitForm(request.POST)
    back = request.POST.get("next") == "dashboard"
    if not form.is_valid():
        messages.error(request, _("Say why the annotator is let in."))
    else:
        annotator = campaign_account_or_404(campaign, form.cleaned_data["annotator"])
        try:
            setup.admit(campaign, annotator, form.cleaned_data["reason"], by=_user(request))
        except ValidationError as error:
            _field_messages(request, error)
        else:
            messages.success(
                request,
                _("%(username)s may annotate now.") % {"username": annotator.get_username()},
            )
    return redirect("campaign_detail" if back else "campaign_qualification", campaign.pk)


urlpatterns = [
    path(
        "<row_id:campaign_id>/qualification/",
        campaign_qualification,
        name="campaign_qualification",
    ),
    path(
        "<row_id:campaign_id>/qualification/items/",
        campaign_qualification_item,
        name="campaign_qualification_item",
    ),
    path(
        "<row_id:campaign_id>/qualification/items/<row_id:pair_id>/remove/",
        campaign_qualification_remove,
        name="campaign_qualification_remove",
    ),
    path(
        "<row_id:campaign_id>/qualification/rule/",
        campaign_qualification_rule,
        name="campaign_qualification_rule",
    ),
    path(
        "<row_id:campaign_id>/qualification/admit/",
        campaign_qualification_admit,
        name="campaign_qualification_admit",
    ),
]
