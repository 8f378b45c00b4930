"""Shapes and input validation of the API. Workflows stay in the service modules: a serializer
checks the request, the view calls ``create_campaign``, ``set_status``, ``import_upload``..."""

import math
from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import serializers

from prb_annotate.api.serializers_qualification import CreationItemSerializer, PassRuleSerializer
from prb_annotate.audit import listing, rule
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns.editing import change_errors
from prb_annotate.exports.export import FORMATS, SUBSETS
from prb_annotate.forms import MAJORITY_BELOW_HALF
from prb_annotate.models import (
    Adjudication,
    AnnotatorExclusion,
    Campaign,
    Dataset,
    Membership,
    Pair,
)

MAX_K = 50
MAX_SCALE = 10
MAX_CRITERIA = 20
MAX_GOLD_PAIRS = 10_000
MAX_SEED = 2**31 - 1
MAX_RESAMPLES = 5000
VERDICT_CHOICES = ("validated", "excluded", "undecided")


class DatasetSerializer(serializers.ModelSerializer[Dataset]):
    pair_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Dataset
        fields = [
            "id",
            "name",
            "source",
            "source_sha256",
            "description",
            "imported_at",
            "updated_at",
            "pair_count",
        ]
        read_only_fields = fields


class DatasetDetailSerializer(DatasetSerializer):
    categories = serializers.SerializerMethodField()

    class Meta(DatasetSerializer.Meta):
        fields = [*DatasetSerializer.Meta.fields, "categories"]
        read_only_fields = fields

    def get_categories(self, dataset: Dataset) -> dict[str, int]:
        rows = dataset.pairs.values_list("category").order_by("category")
        counts: dict[str, int] = {}
        for (category,) in rows.iterator():
            counts[category] = counts.get(category, 0) + 1
        return counts


class DatasetImportSerializer(serializers.Serializer):
    """An uploaded file (.jsonl, .json, .csv, .parquet) imported into the named dataset."""

    file = serializers.FileField()
    name = serializers.CharField(max_length=200, help_text="Dataset name; created when missing.")
    # DRF's metaclass takes declared fields off the class: this shadows no method.
    update = serializers.BooleanField(  # type: ignore[assignment]
        default=False, help_text="Replace records whose id exists with different content."
    )


class ImportReportSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    dataset_id = serializers.IntegerField()
    source = serializers.CharField(  # type: ignore[assignment]
        help_text="The imported file's name (never a path on the server)."
    )
    source_sha256 = serializers.CharField(help_text="The sha256 of the imported file.")
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    categories = serializers.DictField(child=serializers.IntegerField())
    files = serializers.ListField(child=serializers.CharField())
    summary = serializers.CharField()


class PairSerializer(serializers.ModelSerializer[Pair]):
    class Meta:
        model = Pair
        fields = ["id", "external_id", "category", "question"]
        read_only_fields = fields


class PairDetailSerializer(serializers.ModelSerializer[Pair]):
    class Meta:
        model = Pair
        fields = [
            "id",
            "dataset",
            "external_id",
            "category",
            "question",
            "profile",
            "rubric_aspects",
            "narrative",
            "chosen",
            "rejected",
            "extra",
            "content_hash",
        ]
        read_only_fields = fields


class CampaignSerializer(serializers.ModelSerializer[Campaign]):
    """A campaign as managers read and change it. What fixes the sample (dataset, seed, gold)
    is set at creation only; the status changes through the start / pause / close actions."""

    annotations_per_pair = serializers.IntegerField(
        min_value=1, max_value=MAX_K, required=False, help_text="k: annotations wanted per pair."
    )
    # Not required: a campaign created without them gets the model's defaults.
    reservation_minutes = serializers.IntegerField(min_value=1, max_value=24 * 60, required=False)
    quality_criteria = serializers.ListField(
        child=serializers.RegexField(r"^[a-z][a-z0-9_]{0,39}$"),
        min_length=1,
        max_length=MAX_CRITERIA,
        required=False,
        help_text="Quality criteria rated for each answer (lowercase identifiers).",
    )
    rating_scale_max = serializers.IntegerField(min_value=2, max_value=MAX_SCALE, required=False)
    quality_threshold = serializers.FloatField(min_value=1.0, max_value=MAX_SCALE, required=False)
    majority_threshold = serializers.FloatField(
        min_value=0.5,
        max_value=0.99,
        required=False,
        error_messages={"min_value": MAJORITY_BELOW_HALF},
        help_text="A vote passes when the share on one side is above this (0.5 to 0.99).",
    )
    min_gold_accuracy = serializers.FloatField(
        min_value=0.0, max_value=1.0, allow_null=True, required=False
    )
    position_bias_max_p = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        allow_null=True,
        required=False,
        help_text="Annotators whose share of A answers has a binomial p-value below this leave "
        "the audit; null keeps everyone.",
    )
    fast_answer_seconds = serializers.FloatField(
        min_value=0.0,
        max_value=3600.0,
        required=False,
        help_text="Quality control counts answers faster than this as too fast.",
    )
    quota_per_annotator = serializers.IntegerField(
        min_value=1, max_value=1_000_000, allow_null=True, required=False
    )
    prolific_study_id = serializers.RegexField(
        r"^[A-Za-z0-9_-]+$",
        max_length=100,
        allow_blank=True,
        required=False,
        help_text="Prolific's study id: invite links with another STUDY_ID make no account. "
        "Empty: any study.",
    )
    created_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = Campaign
        fields = [
            "id",
            "dataset",
            "name",
            "guidelines",
            "status",
            "annotations_per_pair",
            "reservation_minutes",
            "quality_criteria",
            "rating_scale_max",
            "quality_threshold",
            "majority_threshold",
            "min_gold_accuracy",
            "position_bias_max_p",
            "fast_answer_seconds",
            "gold_rate",
            "seed",
            "quota_per_annotator",
            "completion_url",
            "prolific_study_id",
            "screen_out_url",
            "show_timer",
            "reading_check",
            "consent_text",
            "invite_token",
            "study_link_enabled",
            "signup_token",
            "signup_link_enabled",
            "created_by",
            "created_at",
            "sample_plan",
            "external",
        ]
        read_only_fields = [
            "id",
            "dataset",
            "status",
            "external",
            "gold_rate",
            "seed",
            "sample_plan",
            "invite_token",
            "signup_token",
            "created_by",
            "created_at",
        ]

    def update(self, instance: Campaign, validated_data: dict[str, Any]) -> Campaign:
        for field, value in validated_data.items():
            setattr(instance, field, value)
        # Only the fields sent: a status change another manager made meanwhile is kept.
        instance.save(update_fields=list(validated_data))
        return instance

    def validate_quality_criteria(self, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise serializers.ValidationError("Each criterion may appear once.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        scale = attrs.get("rating_scale_max", getattr(self.instance, "rating_scale_max", 5))
        threshold = attrs.get("quality_threshold", getattr(self.instance, "quality_threshold", 4))
        if threshold > scale:
            raise serializers.ValidationError(
                {"quality_threshold": [f"Must not exceed the rating scale maximum ({scale})."]}
            )
        if self.instance is not None:
            # The settings page's rules: k only upwards once started, the question set fixed
            # once answered.
            refused = change_errors(self.instance, attrs)
            if refused:
                raise serializers.ValidationError({k: [v] for k, v in refused.items()})
        return attrs


class SampleTargetsSerializer(serializers.Serializer):
    """Targets of a planned sample (``audit/sampling.py``); shares are fractions of 1."""

    half_width = serializers.FloatField(
        min_value=0.001,
        max_value=0.499,
        required=False,
        allow_null=True,
        help_text="Target half-width of the 95% interval of the dataset's validated share "
        "(0.05 = ±5 points).",
    )
    category_half_width = serializers.FloatField(
        min_value=0.001,
        max_value=0.499,
        required=False,
        allow_null=True,
        help_text="The same target for every category on its own; the larger size wins.",
    )
    expected_share = serializers.FloatField(
        min_value=0.01, max_value=0.99, default=0.5, help_text="0.5 when unknown, or a pilot's."
    )
    confidence = serializers.FloatField(min_value=0.5, max_value=0.999, default=0.95)
    split_share = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        default=0.0,
        help_text="Share of pairs expected to need one more annotator for a split vote.",
    )
    # Bounded so that the cost (price x annotations) stays a finite JSON number.
    price_per_annotation = serializers.FloatField(
        min_value=0.0,
        max_value=1_000_000.0,
        required=False,
        allow_null=True,
        help_text="For the cost of the plan.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("half_width") is None and attrs.get("category_half_width") is None:
            raise serializers.ValidationError(
                {"half_width": ["Give half_width, category_half_width or both."]}
            )
        return attrs

    def targets(self) -> PlanTargets:
        return PlanTargets(**self.validated_data)


class SamplePlanRequestSerializer(SampleTargetsSerializer):
    """A plan preview: the targets, k, and the gold pairs to leave out of the sample."""

    annotations_per_pair = serializers.IntegerField(min_value=1, max_value=MAX_K, default=3)
    gold_pair_ids = serializers.ListField(
        child=serializers.CharField(max_length=255), required=False, max_length=MAX_GOLD_PAIRS
    )
    model_agreement = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        required=False,
        help_text="A model annotator's agreement with the human verdicts in a pilot: the "
        "answer adds with_model, the human pairs the targets need with its help (docs/ppi.md).",
    )

    def targets(self) -> PlanTargets:
        data = dict(self.validated_data)
        data.pop("annotations_per_pair", None)
        data.pop("gold_pair_ids", None)
        data.pop("model_agreement", None)
        return PlanTargets(**data)


class CampaignCreateSerializer(CampaignSerializer):
    """Creation also fixes the dataset, the sample, the gold items and the seed."""

    dataset = serializers.PrimaryKeyRelatedField(queryset=Dataset.objects.all())
    annotations_per_pair = serializers.IntegerField(
        min_value=1, max_value=MAX_K, default=3, help_text="k: annotations wanted per pair."
    )
    sample = serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        write_only=True,
        help_text="Number of pairs drawn at random (seeded); all pairs when omitted.",
    )
    gold_pair_ids = serializers.ListField(
        child=serializers.CharField(max_length=255),
        required=False,
        max_length=MAX_GOLD_PAIRS,
        write_only=True,
        help_text="External ids of pairs that become gold items, expecting the dataset's claim.",
    )
    gold_rate = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.0)
    seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED, default=0)
    sample_targets = SampleTargetsSerializer(
        required=False,
        write_only=True,
        help_text="Instead of sample: plan a stratified sample for these targets; the "
        "campaign keeps the plan in sample_plan.",
    )

    practice_pairs = CreationItemSerializer(
        many=True,
        required=False,
        write_only=True,
        help_text="Pairs shown before the queue with feedback, counted nowhere: external_id, "
        "expected_answers (default: the dataset's claim), explanations.",
    )
    qualification_pairs = CreationItemSerializer(
        many=True,
        required=False,
        write_only=True,
        help_text="Pairs a member must pass (two attempts) before the queue, as practice_pairs.",
    )
    qualification_rule = PassRuleSerializer(
        required=False, help_text="The pass rule; empty: every qualification item right."
    )

    class Meta(CampaignSerializer.Meta):
        fields = [
            *CampaignSerializer.Meta.fields,
            "sample",
            "gold_pair_ids",
            "sample_targets",
            "practice_pairs",
            "qualification_pairs",
            "qualification_rule",
        ]
        read_only_fields = [
            "id",
            "status",
            "invite_token",
            "signup_token",
            "created_by",
            "created_at",
        ]


class UsernameField(serializers.SlugRelatedField):
    """A user by username. A NUL character is refused before the lookup: no username holds
    one, and PostgreSQL rejects it in a query with an error instead of finding nobody."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data)
        return super().to_internal_value(data)


class MembershipSerializer(serializers.ModelSerializer[Membership]):
    # A text box in the browsable API, not a list of every account: a manager names a user,
    # and never sees the others' names.
    username = UsernameField(
        source="user",
        slug_field="username",
        queryset=get_user_model().objects.all(),
        style={"base_template": "input.html"},
    )

    class Meta:
        model = Membership
        fields = ["id", "username", "role", "participant_id", "joined_at", "consent_given_at"]
        read_only_fields = ["id", "participant_id", "joined_at", "consent_given_at"]


class VerdictSerializer(serializers.Serializer):
    """One regular pair's verdict from the audit, with the reasons it failed."""

    pair_id = serializers.IntegerField()
    external_id = serializers.CharField()
    category = serializers.CharField(allow_blank=True)
    verdict = serializers.ChoiceField(choices=VERDICT_CHOICES)
    reasons = serializers.ListField(child=serializers.CharField())
    n_annotations = serializers.IntegerField()
    majority = serializers.DictField()
    quality_medians = serializers.DictField()
    adjudicated = serializers.BooleanField(help_text="A manager's decision gives the verdict.")
    annotators_verdict = serializers.CharField(help_text="The verdict of the answers alone.")
    annotators_reasons = serializers.ListField(child=serializers.CharField())

    def to_representation(self, instance: Any) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["annotators_verdict"], reasons = instance.by_annotators()
        data["annotators_reasons"] = list(reasons)
        return data


class ScoreSerializer(serializers.Serializer):
    chosen = serializers.FloatField(allow_null=True)
    rejected = serializers.FloatField(allow_null=True)
    margin = serializers.FloatField(allow_null=True)
    outcome = serializers.CharField()
    disagrees_with_annotators = serializers.BooleanField(allow_null=True)


class PairRowSerializer(VerdictSerializer):
    """A pair of the ``/verdicts/`` list: its verdict, flags and (with ``run``) model score."""

    flagged_annotations = serializers.IntegerField()
    split_vote = serializers.BooleanField()
    score = ScoreSerializer(allow_null=True, help_text="With ``run``: the pair's score in it.")

    def to_representation(self, instance: Any) -> dict[str, Any]:
        verdict = instance.verdict
        annotators_verdict, annotators_reasons = verdict.by_annotators()
        score = instance.score
        return {
            "pair_id": verdict.pair_id,
            "external_id": verdict.external_id,
            "category": verdict.category,
            "verdict": verdict.verdict,
            "reasons": list(verdict.reasons),
            "n_annotations": verdict.n_annotations,
            "majority": dict(verdict.majority),
            "quality_medians": {k: dict(v) for k, v in verdict.quality_medians.items()},
            "adjudicated": verdict.adjudicated,
            "annotators_verdict": annotators_verdict,
            "annotators_reasons": list(annotators_reasons),
            "flagged_annotations": instance.flagged,
            "split_vote": instance.split,
            "score": None
            if score is None
            else {
                "chosen": score.chosen,
                "rejected": score.rejected,
                "margin": score.margin,
                "outcome": score.outcome,
                "disagrees_with_annotators": instance.model_disagrees,
            },
        }


class AdjudicationSerializer(serializers.ModelSerializer[Adjudication]):
    """A manager's decision on a pair; POST records a new one (the previous becomes history)."""

    decided_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    reason = serializers.ChoiceField(choices=rule.ADJUDICATION_REASONS)
    note = serializers.CharField(required=False, allow_blank=True, max_length=5000, default="")

    class Meta:
        model = Adjudication
        fields = ["id", "decision", "reason", "note", "decided_by", "created_at", "is_current"]
        read_only_fields = ["id", "decided_by", "created_at", "is_current"]


class QueryParameters(serializers.Serializer):
    """Query parameters. One given empty (``?format=``) is an error: read as a form, an empty
    value means "not given", which would quietly answer with the default instead."""

    def to_internal_value(self, data: Any) -> Any:
        blank = [str(name) for name in self.fields if data.get(name) == ""]
        if blank:
            raise serializers.ValidationError(
                {name: ["Give a value, or leave the parameter out."] for name in blank}
            )
        return super().to_internal_value(data)


def _yes_no(help_text: str) -> serializers.ChoiceField:
    return serializers.ChoiceField(choices=["yes", "no"], required=False, help_text=help_text)


class VerdictFilterSerializer(QueryParameters):
    """The filters and sort of the "Pairs" page (``audit.listing``)."""

    category = serializers.CharField(required=False, max_length=200)
    verdict = serializers.ChoiceField(choices=VERDICT_CHOICES, required=False)
    reason = serializers.ChoiceField(
        choices=rule.ADJUDICATION_REASONS,
        required=False,
        help_text="A reason code of the final verdict or of the annotators' verdict.",
    )
    flagged = _yes_no("Some current annotation flags the pair.")
    split = _yes_no("The annotators' vote is split.")
    adjudicated = _yes_no("A manager's decision gives the verdict.")
    run = serializers.IntegerField(
        required=False, min_value=1, help_text="An evaluation run: adds its score per pair."
    )
    disagrees = _yes_no(
        "With run: the reward model picks the answer the annotators' majority did not."
    )
    sort = serializers.ChoiceField(
        choices=[f"{d}{name}" for name in listing.SORTS for d in ("", "-")],
        required=False,
        help_text="A column, descending with a leading minus; ids sort naturally.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        for name in ("flagged", "split", "adjudicated", "disagrees"):
            if name in attrs:
                attrs[name] = attrs[name] == "yes"
        return attrs


class PairFilterSerializer(QueryParameters):
    category = serializers.CharField(required=False, max_length=200)
    q = serializers.CharField(required=False, max_length=200, help_text="Text search.")


class AuditQuerySerializer(QueryParameters):
    resamples = serializers.IntegerField(
        min_value=0,
        max_value=MAX_RESAMPLES,
        default=1000,
        help_text="Bootstrap resamples for the confidence intervals.",
    )
    seed = serializers.IntegerField(
        min_value=0,
        max_value=MAX_SEED,
        required=False,
        help_text="Bootstrap seed; the campaign's seed when omitted.",
    )


class AgreementSerializer(serializers.Serializer):
    resamples = serializers.IntegerField()
    seed = serializers.IntegerField(allow_null=True)
    confidence = serializers.FloatField()
    questions = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per question: coefficients with value, ci_low, ci_high and the interval's "
        "method, reliable and reason; prevalence, paradox (a sentence when alpha and AC1/AC2 "
        "disagree strongly, else null); pairwise kappas.",
    )


class ExportQuerySerializer(QueryParameters):
    subset = serializers.ChoiceField(choices=SUBSETS, default="validated")
    format = serializers.ChoiceField(choices=FORMATS, default="jsonl")
    with_validation = serializers.BooleanField(
        default=False, help_text="Add a validation object to each record."
    )


class AnnotatorProgressSerializer(serializers.Serializer):
    user_id = serializers.IntegerField()
    username = serializers.CharField()
    participant_id = serializers.CharField(allow_blank=True)
    submitted = serializers.IntegerField()
    skipped = serializers.IntegerField()
    reserved = serializers.BooleanField(help_text="Holds a live reservation now.")
    median_seconds = serializers.FloatField(allow_null=True)
    gold_scored = serializers.IntegerField()
    gold_correct = serializers.IntegerField()
    gold_accuracy = serializers.FloatField(allow_null=True)


class ProgressSerializer(serializers.Serializer):
    """Regular items by state (gold items apart), and each annotator's counts."""

    items_total = serializers.IntegerField()
    items_complete = serializers.IntegerField()
    items_in_progress = serializers.IntegerField()
    items_untouched = serializers.IntegerField()
    gold_items = serializers.IntegerField()
    annotations_submitted = serializers.IntegerField()
    live_reservations = serializers.IntegerField()
    percent_complete = serializers.FloatField()
    replacement_slots_filled = serializers.IntegerField(
        help_text="Slots added for answers that left the audit, taken by a submitted answer."
    )
    replacement_slots_open = serializers.IntegerField(
        help_text="Slots added for answers that left the audit, not filled yet (withdrawn "
        "when the reason is lifted)."
    )
    pairs_short_of_answers = serializers.IntegerField(
        help_text="Pairs with answers out of the audit that lack answers for their verdict "
        "(undecided until replacements come in; on a closed campaign, until it is reopened "
        "for replacements)."
    )
    annotators = AnnotatorProgressSerializer(many=True)


class FiniteFloatField(serializers.FloatField):
    """A float that JSON can carry: an infinite or undefined value is written as null."""

    def to_representation(self, value: Any) -> Any:
        number = float(value)
        return number if math.isfinite(number) else None


class AnnotatorQualitySerializer(serializers.Serializer):
    """One annotator's quality-control figures (``audit/quality.py``), over regular pairs."""

    annotator = serializers.CharField()
    annotator_id = serializers.IntegerField(allow_null=True)
    annotations = serializers.IntegerField()
    gold_answered = serializers.IntegerField()
    gold_accuracy = serializers.FloatField(allow_null=True)
    agreement = serializers.FloatField(
        allow_null=True, help_text="Share of rubric-fit answers matching the others' majority."
    )
    agreement_units = serializers.IntegerField()
    agreement_count = serializers.IntegerField(
        help_text="Rubric-fit answers matching the others' majority (of agreement_units)."
    )
    agreement_p_value = serializers.FloatField(
        allow_null=True,
        help_text="One-sided Fisher exact p-value that this annotator agrees with the others' "
        "majority less often than everyone else pooled; null with nothing to compare.",
    )
    agreement_p_holm = serializers.FloatField(
        allow_null=True,
        help_text="agreement_p_value Holm-adjusted across the campaign's annotators; the "
        "agreement mark is set below 0.05.",
    )
    share_a = serializers.FloatField(allow_null=True)
    position_p_value = serializers.FloatField(allow_null=True)
    position_p_holm = serializers.FloatField(
        allow_null=True,
        help_text="position_p_value Holm-adjusted across the campaign's annotators: the value "
        "the position-bias mark and position_bias_max_p compare.",
    )
    median_seconds = serializers.FloatField(allow_null=True)
    fast_share = serializers.FloatField(allow_null=True)
    straight_lining_share = serializers.FloatField(allow_null=True)
    outliers = serializers.ListField(child=serializers.CharField())
    left_out = serializers.CharField(
        allow_null=True,
        help_text="Why the annotator's answers are out of the audit: manager_excluded, "
        "low_gold_accuracy or position_bias; null when they count.",
    )


class ExclusionSerializer(serializers.ModelSerializer[AnnotatorExclusion]):
    annotator: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    excluded_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    lifted_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )

    class Meta:
        model = AnnotatorExclusion
        fields = [
            "id",
            "annotator",
            "annotator_id",
            "reason",
            "excluded_by",
            "created_at",
            "lifted_by",
            "lifted_at",
        ]
        read_only_fields = fields


class ExcludeSerializer(serializers.Serializer):
    annotator = UsernameField(
        slug_field="username",
        queryset=get_user_model().objects.all(),
        help_text="Username of an annotator of the campaign.",
    )
    reason = serializers.CharField(max_length=2000, help_text="Why; kept with the exclusion.")
