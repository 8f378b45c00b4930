"""Shapes and input validation of the API. Workflows stay in the service modules: a serializer
checks the request, the view calls ``create_campaign``, ``set_status``, ``import_upload``..."""

from typing import Any

from django.contrib.auth import get_user_model
from rest_framework import serializers

from prb_annotate.exports.export import FORMATS, SUBSETS
from prb_annotate.models import AnnotatorExclusion, Campaign, Dataset, Membership, Pair

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
        fields = ["id", "name", "source", "description", "imported_at", "updated_at", "pair_count"]
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
    source = serializers.CharField()  # type: ignore[assignment]
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
    majority_threshold = serializers.FloatField(min_value=0.0, max_value=0.99, required=False)
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
            "invite_token",
            "created_by",
            "created_at",
        ]
        read_only_fields = [
            "id",
            "dataset",
            "status",
            "gold_rate",
            "seed",
            "invite_token",
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
            locked = self.instance.question_set_errors(attrs)
            if locked:
                raise serializers.ValidationError({k: [v] for k, v in locked.items()})
        return attrs


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

    class Meta(CampaignSerializer.Meta):
        fields = [*CampaignSerializer.Meta.fields, "sample", "gold_pair_ids"]
        read_only_fields = ["id", "status", "invite_token", "created_by", "created_at"]


class UsernameField(serializers.SlugRelatedField):
    """A user by username. A NUL character is refused before the lookup: no username holds
    one, and PostgreSQL rejects it in a query with an error instead of finding nobody."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data)
        return super().to_internal_value(data)


class MembershipSerializer(serializers.ModelSerializer[Membership]):
    username = UsernameField(
        source="user", slug_field="username", queryset=get_user_model().objects.all()
    )

    class Meta:
        model = Membership
        fields = ["id", "username", "role", "participant_id", "joined_at"]
        read_only_fields = ["id", "participant_id", "joined_at"]


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


class VerdictFilterSerializer(QueryParameters):
    category = serializers.CharField(required=False, max_length=200)
    verdict = serializers.ChoiceField(choices=VERDICT_CHOICES, required=False)


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
        help_text="Per question: coefficients with value, ci_low, ci_high; pairwise kappas.",
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
    annotators = AnnotatorProgressSerializer(many=True)


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
    agreement_z = serializers.FloatField(
        allow_null=True, help_text="Modified z-score of the agreement among the annotators."
    )
    share_a = serializers.FloatField(allow_null=True)
    position_p_value = serializers.FloatField(allow_null=True)
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
    annotator = serializers.SlugRelatedField(
        slug_field="username",
        queryset=get_user_model().objects.all(),
        help_text="Username of an annotator of the campaign.",
    )
    reason = serializers.CharField(max_length=2000, help_text="Why; kept with the exclusion.")
