"""Shapes of the practice, qualification and Prolific parts of the API: requests are checked
here, the rules are the services' (``campaigns/qualification/``, ``campaigns/prolific.py``)."""

from dataclasses import fields
from typing import Any

from rest_framework import serializers

from prb_annotate.api.setting_fields import api_field
from prb_annotate.campaigns.qualification.rules import EXPECTABLE, MAX_EXPLANATION
from prb_annotate.campaigns.qualification.setup import OutcomeCounts
from prb_annotate.campaigns.setting_fields import BONUS_RULE, CAMPAIGN, PASS_RULE
from prb_annotate.models import QualificationItem, QualificationRecord

QUESTIONS = list(EXPECTABLE)
OUTCOMES = ["", "not_started", *QualificationRecord.Outcome.values]


class PassRuleSerializer(serializers.Serializer):
    min_correct = api_field(PASS_RULE["min_correct"])
    required_questions = api_field(PASS_RULE["required_questions"])


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

    # Left out (or empty), a pair chosen already keeps its phase, as on the page: choosing it
    # again to add an explanation never moves it.
    phase = serializers.ChoiceField(
        choices=QualificationItem.Phase.values,
        required=False,
        allow_blank=True,
        help_text="practice or qualification; left out, a pair chosen already keeps its phase.",
    )
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
    # The members per qualification outcome: a count per field of setup.OutcomeCounts.
    def get_fields(self) -> dict[str, serializers.Field]:
        return {field.name: serializers.IntegerField() for field in fields(OutcomeCounts)}


class QualificationSettingsSerializer(PassRuleSerializer):
    """What a PATCH may change: the pass rule and the screen-out URL."""

    screen_out_url = api_field(CAMPAIGN["screen_out_url"])


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


class AttemptCountsSerializer(serializers.Serializer):
    """A qualification attempt's items right out of its total, and whether it passed."""

    attempt = serializers.IntegerField()
    right = serializers.IntegerField()
    total = serializers.IntegerField()
    passed = serializers.BooleanField()


class AttemptSerializer(AttemptCountsSerializer):
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
    per_item = api_field(BONUS_RULE["per_item"])
    items_beyond = api_field(BONUS_RULE["items_beyond"])
    gold_amount = api_field(BONUS_RULE["gold_amount"])
    gold_min_accuracy = api_field(BONUS_RULE["gold_min_accuracy"])


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
    answers_shown = serializers.BooleanField(
        help_text="False after a failed qualification attempt: given and expected are empty, "
        "since the next attempt asks the same items."
    )


class AttemptResultSerializer(AttemptCountsSerializer):
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
        many=True,
        help_text="After a failed first attempt: every item, right or wrong and why; "
        "the answers given and expected stay hidden (answers_shown is false).",
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
        many=True,
        help_text="After a failed first attempt: each of its items, right or wrong and why; "
        "the answers given and expected stay hidden (answers_shown is false).",
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


class BonusPaymentSerializer(serializers.Serializer):
    participant_id = serializers.CharField()
    amount = serializers.DecimalField(max_digits=10, decimal_places=2)
    state = serializers.ChoiceField(
        choices=["paid", "unconfirmed"],
        help_text="unconfirmed: sent, but Prolific's answer to the pay call was lost; counted as "
        "paid (never sent again) until settled.",
    )
    prolific_payment_id = serializers.CharField(
        allow_blank=True, help_text="Prolific's bulk bonus id ('' before Prolific gave one)."
    )
    paid_at = serializers.DateTimeField(help_text="When the share was claimed for payment.")
    paid_by = serializers.CharField(source="paid_by.username", allow_null=True, default=None)


class SettleSerializer(serializers.Serializer):
    prolific_payment_id = serializers.CharField(
        allow_blank=True, help_text="The unconfirmed bulk bonus, as the payments list names it."
    )
    paid = serializers.BooleanField(
        help_text="true: Prolific shows it paid, record its shares as paid; false: Prolific did "
        "not pay it, withdraw its shares (owed again)."
    )


class SettledSerializer(serializers.Serializer):
    settled = serializers.IntegerField(help_text="Shares settled.")
