"""Shapes of the practice, qualification and Prolific parts of the API: requests are checked
here, the rules are the services' (``campaigns/qualification/``, ``campaigns/prolific.py``)."""

from decimal import Decimal
from typing import Any

from rest_framework import serializers

from prb_annotate.campaigns.qualification.rules import EXPECTABLE, MAX_EXPLANATION
from prb_annotate.models import QualificationItem, QualificationRecord

QUESTIONS = list(EXPECTABLE)
OUTCOMES = ["", "not_started", *QualificationRecord.Outcome.values]


class PassRuleSerializer(serializers.Serializer):
    min_correct = serializers.IntegerField(
        min_value=0,
        max_value=10_000,
        allow_null=True,
        required=False,
        help_text="Items right to pass; null: every item.",
    )
    required_questions = serializers.ListField(
        child=serializers.ChoiceField(choices=QUESTIONS),
        max_length=len(QUESTIONS),
        required=False,
        help_text="Questions every item must have right (of those it expects).",
    )


class ExpectedAnswersSerializer(serializers.Serializer):
    rubric_fit = serializers.ChoiceField(choices=list(EXPECTABLE["rubric_fit"]), required=False)
    differentiator = serializers.ChoiceField(
        choices=list(EXPECTABLE["differentiator"]), required=False
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs:
            raise serializers.ValidationError("Expect an answer to at least one question.")
        return attrs


class ExplanationsSerializer(serializers.Serializer):
    rubric_fit = serializers.CharField(max_length=MAX_EXPLANATION, required=False, allow_blank=True)
    differentiator = serializers.CharField(
        max_length=MAX_EXPLANATION, required=False, allow_blank=True
    )


class ItemChoiceSerializer(serializers.Serializer):
    """A practice or qualification pair as a manager chooses it."""

    phase = serializers.ChoiceField(choices=QualificationItem.Phase.values)
    expected_answers = ExpectedAnswersSerializer()
    explanations = ExplanationsSerializer(required=False)


class CreationItemSerializer(ItemChoiceSerializer):
    """A pair chosen at campaign creation, by its record id."""

    phase = None  # type: ignore[assignment]  # given by the list it is in
    external_id = serializers.CharField(max_length=255)
    expected_answers = ExpectedAnswersSerializer(required=False)


class QualificationItemSerializer(serializers.Serializer):
    pair = serializers.IntegerField(source="pair_id")
    external_id = serializers.CharField(source="pair.external_id")
    phase = serializers.CharField()
    position = serializers.IntegerField()
    expected_answers = serializers.DictField(child=serializers.CharField())
    explanations = serializers.DictField(child=serializers.CharField())
    answers = serializers.IntegerField(source="answer_count", help_text="Answers given to it.")


class OutcomeCountsSerializer(serializers.Serializer):
    passed = serializers.IntegerField()
    failed = serializers.IntegerField()
    in_progress = serializers.IntegerField()
    admitted = serializers.IntegerField()
    not_started = serializers.IntegerField()


class QualificationSettingsSerializer(serializers.Serializer):
    """What a PATCH may change: the pass rule and the screen-out URL."""

    min_correct = serializers.IntegerField(
        min_value=0, max_value=10_000, allow_null=True, required=False
    )
    required_questions = serializers.ListField(
        child=serializers.ChoiceField(choices=QUESTIONS), max_length=len(QUESTIONS), required=False
    )
    screen_out_url = serializers.URLField(max_length=1000, allow_blank=True, required=False)


class QualificationSerializer(serializers.Serializer):
    rule = PassRuleSerializer()
    rule_text = serializers.CharField()
    fixed = serializers.BooleanField(
        help_text="Members answered the qualification: its items, expected answers and rule "
        "stay as they are."
    )
    screen_out_url = serializers.CharField(allow_blank=True)
    practice = QualificationItemSerializer(many=True)
    qualification = QualificationItemSerializer(many=True)
    counts = OutcomeCountsSerializer()


class AttemptSerializer(serializers.Serializer):
    attempt = serializers.IntegerField()
    right = serializers.IntegerField()
    total = serializers.IntegerField()
    passed = serializers.BooleanField()
    finished_at = serializers.CharField()


class MemberQualificationSerializer(serializers.Serializer):
    annotator_id = serializers.IntegerField(source="user_id")
    annotator = serializers.CharField(source="username")
    participant_id = serializers.CharField(allow_blank=True)
    outcome = serializers.ChoiceField(choices=OUTCOMES, allow_blank=True)
    practice_done = serializers.BooleanField()
    attempts = AttemptSerializer(many=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    admitted_by = serializers.CharField(allow_blank=True)
    admit_reason = serializers.CharField(allow_blank=True)
    admitted_at = serializers.DateTimeField(allow_null=True)


class AdmitSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000)


class BonusRuleSerializer(serializers.Serializer):
    per_item = serializers.DecimalField(
        max_digits=7,
        decimal_places=2,
        min_value=Decimal("0.01"),
        max_value=Decimal("1000"),
        allow_null=True,
        required=False,
        help_text="Paid for each item submitted beyond items_beyond.",
    )
    items_beyond = serializers.IntegerField(
        min_value=0,
        max_value=1_000_000,
        allow_null=True,
        required=False,
        help_text="Null: the campaign's quota (0 without one).",
    )
    gold_amount = serializers.DecimalField(
        max_digits=7,
        decimal_places=2,
        min_value=Decimal("0.01"),
        max_value=Decimal("1000"),
        allow_null=True,
        required=False,
        help_text="Paid once for gold accuracy of gold_min_accuracy or more.",
    )
    gold_min_accuracy = serializers.FloatField(
        min_value=0.0, max_value=1.0, allow_null=True, required=False
    )


class BonusRuleReadSerializer(BonusRuleSerializer):
    text = serializers.CharField(read_only=True)


class QuestionFeedbackSerializer(serializers.Serializer):
    question = serializers.CharField()
    # DRF's metaclass takes declared fields off the class: this shadows no attribute.
    label = serializers.CharField()  # type: ignore[assignment]
    given = serializers.CharField(help_text="As the annotator saw it: Response A, Tie...")
    expected = serializers.CharField()
    correct = serializers.BooleanField()
    explanation = serializers.CharField(allow_blank=True)


class ItemFeedbackSerializer(serializers.Serializer):
    item_id = serializers.IntegerField()
    external_id = serializers.CharField()
    question_text = serializers.CharField()
    phase = serializers.CharField()
    attempt = serializers.IntegerField()
    correct = serializers.BooleanField()
    questions = QuestionFeedbackSerializer(many=True)


class AttemptResultSerializer(serializers.Serializer):
    attempt = serializers.IntegerField()
    right = serializers.IntegerField()
    total = serializers.IntegerField()
    passed = serializers.BooleanField()
    outcome = serializers.CharField()


class QualificationSubmitResultSerializer(serializers.Serializer):
    answer = serializers.IntegerField()
    item = serializers.IntegerField()
    kind = serializers.CharField(help_text="practice or qualification.")
    attempt = serializers.IntegerField()
    created = serializers.BooleanField(help_text="False when this client token was seen before.")
    message = serializers.CharField()
    feedback = ItemFeedbackSerializer(
        allow_null=True, help_text="Practice: what was expected and why."
    )
    attempt_result = AttemptResultSerializer(
        allow_null=True, help_text="Qualification: set when this answer ended an attempt."
    )
    attempt_feedback = ItemFeedbackSerializer(
        many=True, help_text="After a failed first attempt: every item, expected and why."
    )
    screen_out_url = serializers.CharField(
        allow_blank=True, help_text="Where to send a participant this answer screened out."
    )


class MyQualificationSerializer(serializers.Serializer):
    campaign = serializers.IntegerField()
    stage = serializers.ChoiceField(choices=["practice", "qualification", "screened_out", "queue"])
    outcome = serializers.ChoiceField(choices=OUTCOMES, allow_blank=True)
    attempt = serializers.IntegerField(allow_null=True)
    attempts = AttemptSerializer(many=True)
    feedback = ItemFeedbackSerializer(
        many=True, help_text="After a failed first attempt: each of its items, expected and why."
    )
    screen_out_url = serializers.CharField(allow_blank=True)


def creation_choices(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """``CreationItemSerializer`` rows as ``create_campaign`` takes them, by external id."""
    choices: dict[str, dict[str, Any]] = {}
    for row in items:
        external_id = row["external_id"]
        if external_id in choices:
            raise serializers.ValidationError(f"Pair {external_id} is listed twice.")
        choices[external_id] = {
            "expected_answers": dict(row.get("expected_answers") or {}),
            "explanations": dict(row.get("explanations") or {}),
        }
    return choices
