"""Shapes of the annotator-work API, for the OpenAPI schema and its clients.

The submit body is checked by ``annotating.parse_submission`` (the same code as the annotator
page), not by these serializers; ``SubmitRequestSerializer`` documents it. The quality ratings
are one field per side and criterion of the campaign, ``quality_A_<criterion>`` and
``quality_B_<criterion>`` (for the default criteria: correctness, relevance, helpfulness).
"""

from rest_framework import serializers

from prb_annotate.audit.rule import DEFAULT_CRITERIA


class ScaleSerializer(serializers.Serializer):
    min = serializers.IntegerField()
    max = serializers.IntegerField()


class ReservationSerializer(serializers.Serializer):
    """The reserved pair as the annotator sees it: responses A and B, never which one the
    dataset chose."""

    kind = serializers.ChoiceField(
        choices=["regular", "practice", "qualification"],
        help_text="practice and qualification items come before the queue; their answers go "
        "to submit_url and count nowhere.",
    )
    assignment = serializers.IntegerField(
        allow_null=True, help_text="Null for practice and qualification items."
    )
    item = serializers.IntegerField(
        allow_null=True, help_text="The practice or qualification item; null for regular items."
    )
    attempt = serializers.IntegerField(
        allow_null=True, help_text="Qualification attempt (1 or 2), or the practice try."
    )
    number = serializers.IntegerField(allow_null=True, help_text="n-th item of its kind.")
    total = serializers.IntegerField(allow_null=True, help_text="Items of its kind.")
    campaign = serializers.IntegerField()
    question = serializers.CharField()
    profile = serializers.JSONField()
    rubric_aspects = serializers.JSONField()
    narrative = serializers.CharField(allow_blank=True)
    response_a = serializers.CharField()
    response_b = serializers.CharField()
    criteria = serializers.ListField(child=serializers.CharField())
    scale = ScaleSerializer()
    expires_at = serializers.DateTimeField(allow_null=True)
    submit_url = serializers.CharField(help_text="Where the answers go.")


def _rating(side: str, criterion: str) -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=1, help_text=f"Response {side} on {criterion}: 1 to the campaign's scale."
    )


class SubmitRequestSerializer(serializers.Serializer):
    """One judgement of the pair, in the A/B orientation the annotator saw (shown here for the
    default criteria)."""

    rubric_fit = serializers.ChoiceField(choices=["A", "B", "tie"])
    differentiator = serializers.ChoiceField(choices=["preference", "quality", "both", "none"])
    confidence = serializers.ChoiceField(choices=["low", "medium", "high"])
    comment = serializers.CharField(required=False, allow_blank=True)
    flagged = serializers.BooleanField(required=False)
    client_token = serializers.CharField(
        max_length=64, help_text="Chosen by the client; sending it again is harmless."
    )
    time_on_task_ms = serializers.IntegerField(min_value=0, required=False)

    def get_fields(self) -> dict[str, serializers.Field]:
        """The ratings first, one per side and default criterion (``quality_A_correctness``)."""
        ratings = {
            f"quality_{side}_{criterion}": _rating(side, criterion)
            for side in ("A", "B")
            for criterion in DEFAULT_CRITERIA
        }
        return {**ratings, **super().get_fields()}


class SubmitResultSerializer(serializers.Serializer):
    """The answer to a submit, read off ``annotating.SubmitResult``."""

    annotation = serializers.IntegerField(source="annotation.pk")
    assignment = serializers.IntegerField(source="annotation.assignment_id")
    revision = serializers.IntegerField(source="annotation.revision")
    created = serializers.BooleanField(help_text="False when this client token was seen before.")
    message = serializers.CharField()


class SkipRequestSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500)


class SkipResultSerializer(serializers.Serializer):
    """The skipped assignment."""

    assignment = serializers.IntegerField(source="pk")
    status = serializers.CharField()


class MyProgressSerializer(serializers.Serializer):
    campaign = serializers.IntegerField()
    status = serializers.CharField()
    done = serializers.IntegerField()
    quota = serializers.IntegerField(allow_null=True)
    quota_done = serializers.BooleanField()
    completion_url = serializers.CharField(allow_blank=True)
    available = serializers.IntegerField(
        help_text="Items done, in hand and open to this annotator now (at most the quota)."
    )
    finished = serializers.BooleanField(
        help_text="Nothing will come to this annotator again: quota reached, every pair "
        "done by them or complete, or the campaign closed."
    )
    waiting = serializers.BooleanField(
        help_text="Nothing now, but others hold the last pairs; they may come back."
    )
    held = serializers.CharField(
        allow_blank=True,
        help_text="A rule of the queue about this annotator that keeps the open pairs from "
        "them: qualification (its practice or qualification items come first), screened-out "
        "(failed the qualification; finished unless a manager lets them in), network (the "
        "invite link's accounts from their network hold their share; waiting), gold-spent (a "
        "new account wrong on every gold pair; finished), or empty. While the campaign is not "
        "active its status keeps every pair from them instead: closed (finished), paused or "
        "draft (neither finished nor waiting: come back once a manager resumes or starts it).",
    )
    qualification = serializers.CharField(
        allow_blank=True,
        help_text="not_started, in_progress, passed, failed or admitted; empty when the "
        "campaign has no qualification.",
    )
    consent_required = serializers.BooleanField(
        help_text="The campaign's consent text is still to be accepted "
        "(POST /api/campaigns/{id}/consent/) before the next item."
    )
    consent_given_at = serializers.DateTimeField(allow_null=True)


class ConsentRequestSerializer(serializers.Serializer):
    accept = serializers.BooleanField(help_text="true: the annotator accepts the consent text.")


class ConsentResultSerializer(serializers.Serializer):
    campaign = serializers.IntegerField()
    consent_text = serializers.CharField(allow_blank=True)
    consent_given_at = serializers.DateTimeField(allow_null=True)
