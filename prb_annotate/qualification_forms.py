"""The managers' forms of the practice and qualification page and the Prolific page."""

from decimal import Decimal
from typing import Any

from django import forms

from prb_annotate.campaigns.qualification.rules import EXPECTABLE, MAX_EXPLANATION
from prb_annotate.models import Annotation, QualificationItem

FIT_CHOICES = [
    ("", "no expected answer"),
    ("chosen", "the dataset's chosen answer"),
    ("rejected", "the dataset's rejected answer"),
    ("tie", "tie"),
]
DIFFERENTIATOR_CHOICES = [("", "no expected answer"), *Annotation.Differentiator.choices]
QUESTION_CHOICES = [
    ("rubric_fit", "every better-fit answer right"),
    ("differentiator", "every main-difference answer right"),
]


def _explanation(question: str) -> forms.CharField:
    return forms.CharField(
        label=f"Why ({question.replace('_', ' ')})",
        required=False,
        max_length=MAX_EXPLANATION,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Shown as feedback next to the expected answer.",
    )


class QualificationItemForm(forms.Form):
    """Choose a pair for practice or qualification, or change the one it is."""

    pair = forms.CharField(label="Pair id", max_length=255, help_text="The record's id.")
    phase = forms.ChoiceField(choices=QualificationItem.Phase.choices)
    expected_rubric_fit = forms.ChoiceField(
        label="Expected better fit", choices=FIT_CHOICES, required=False, initial="chosen"
    )
    expected_differentiator = forms.ChoiceField(
        label="Expected main difference",
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
    min_correct = forms.IntegerField(
        label="Items right to pass",
        required=False,
        min_value=0,
        max_value=10_000,
        help_text="Empty: every qualification item right.",
    )
    required_questions = forms.MultipleChoiceField(
        label="And",
        choices=QUESTION_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    screen_out_url = forms.URLField(
        label="Screen-out URL",
        required=False,
        max_length=1000,
        assume_scheme="https",
        help_text="Where a study participant who fails goes: Prolific's completion link with "
        "the screen-out code. Empty: a page of this site tells them.",
    )


class AdmitForm(forms.Form):
    annotator = forms.IntegerField(widget=forms.HiddenInput)
    reason = forms.CharField(max_length=2000, help_text="Kept with the decision.")


def _amount(label: str, help_text: str) -> forms.DecimalField:
    return forms.DecimalField(
        label=label,
        required=False,
        min_value=Decimal("0.01"),
        max_value=Decimal("1000"),
        max_digits=7,
        decimal_places=2,
        help_text=help_text,
    )


class BonusRuleForm(forms.Form):
    per_item = _amount("Bonus per item", "Paid for each item submitted beyond the number below.")
    items_beyond = forms.IntegerField(
        label="Beyond this many items",
        required=False,
        min_value=0,
        max_value=1_000_000,
        help_text="Empty: the campaign's quota (0 without one).",
    )
    gold_amount = _amount("Gold bonus", "Paid once to whoever reaches the gold accuracy below.")
    gold_min_accuracy = forms.FloatField(
        label="Gold accuracy at least",
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="A share, e.g. 0.8 for 80%.",
    )

    def rule_data(self) -> dict[str, Any]:
        return dict(self.cleaned_data)
