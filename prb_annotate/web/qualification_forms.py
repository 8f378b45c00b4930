"""The managers' forms of the practice and qualification page and the Prolific page."""

from typing import Any

from django import forms
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from prb_annotate.campaigns.qualification.rules import EXPECTABLE, MAX_EXPLANATION
from prb_annotate.campaigns.setting_fields import BONUS_RULE, CAMPAIGN, PASS_RULE
from prb_annotate.models import Annotation, QualificationItem
from prb_annotate.web.setting_fields import form_field

FIT_CHOICES = [
    ("", "no expected answer"),
    ("chosen", "the dataset's chosen answer"),
    ("rejected", "the dataset's rejected answer"),
    ("tie", "tie"),
]
DIFFERENTIATOR_CHOICES = [("", "no expected answer"), *Annotation.Differentiator.choices]


def _explanation(question: str) -> forms.CharField:
    return forms.CharField(
        label=format_lazy(_("Why ({question})"), question=question.replace("_", " ")),
        required=False,
        max_length=MAX_EXPLANATION,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Shown as feedback next to the expected answer."),
    )


class QualificationItemForm(forms.Form):
    """Choose a pair for practice or qualification, or change the one it is."""

    pair = forms.CharField(label=_("Pair id"), max_length=255, help_text=_("The record's id."))
    # Empty keeps the phase of a pair chosen already, so that choosing it again to add an
    # explanation never moves it.
    phase = forms.ChoiceField(
        label=_("Phase"),
        choices=[
            ("", _("keep its phase (a pair chosen already)")),
            (QualificationItem.Phase.PRACTICE, _("Practice")),
            (QualificationItem.Phase.QUALIFICATION, _("Qualification")),
        ],
        required=False,
    )
    expected_rubric_fit = forms.ChoiceField(
        label=_("Expected better fit"), choices=FIT_CHOICES, required=False, initial="chosen"
    )
    expected_differentiator = forms.ChoiceField(
        label=_("Expected main difference"),
        choices=DIFFERENTIATOR_CHOICES,
        required=False,
        initial="preference",
    )
    explanation_rubric_fit = _explanation("rubric_fit")
    explanation_differentiator = _explanation("differentiator")

    def expected(self) -> dict[str, str]:
        data = self.cleaned_data
        return {q: data[f"expected_{q}"] for q in EXPECTABLE if data.get(f"expected_{q}")}

    def explanations(self) -> dict[str, str]:
        data = self.cleaned_data
        return {q: data[f"explanation_{q}"] for q in EXPECTABLE if data.get(f"explanation_{q}")}


class PassRuleForm(forms.Form):
    min_correct = form_field(PASS_RULE["min_correct"])
    required_questions = form_field(PASS_RULE["required_questions"])
    screen_out_url = form_field(CAMPAIGN["screen_out_url"])


class AdmitForm(forms.Form):
    annotator = forms.IntegerField(widget=forms.HiddenInput)
    reason = forms.CharField(
        label=_("Reason"), max_length=2000, help_text=_("Kept with the decision.")
    )


class BonusRuleForm(forms.Form):
    per_item = form_field(BONUS_RULE["per_item"])
    items_beyond = form_field(BONUS_RULE["items_beyond"])
    gold_amount = form_field(BONUS_RULE["gold_amount"])
    gold_min_accuracy = form_field(BONUS_RULE["gold_min_accuracy"])

    def rule_data(self) -> dict[str, Any]:
        return dict(self.cleaned_data)
