"""Shapes and input validation of the API. Workflows stay in the service modules: a serializer
checks the request, the view calls ``create_campaign``, ``set_status``, ``import_upload``..."""

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy
from rest_framework import serializers

from prb_annotate.api.serializers_qualification import CreationItemSerializer, PassRuleSerializer
from prb_annotate.api.setting_fields import api_field, model_field_kwargs
from prb_annotate.audit import listing, rule
from prb_annotate.audit.active_sample import SampleDesign
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns.editing import change_errors, pay_errors
from prb_annotate.campaigns.lifecycle import LINK_SWITCHES
from prb_annotate.campaigns.progress import CampaignProgress
from prb_annotate.campaigns.setting_fields import (
    CAMPAIGN,
    MAX_SCALE,
    MAX_SEED,
    PAY_SETTINGS,
    PLAN,
    fixed_after_creation,
)
from prb_annotate.datasets.mapping import ColumnMapping, MappingInvalid, parse_mapping
from prb_annotate.exports.export import FORMATS, SUBSETS
from prb_annotate.languages.texts import valid_texts
from prb_annotate.models import (
    Adjudication,
    AnnotatorExclusion,
    Campaign,
    Dataset,
    Membership,
    Pair,
)

MAX_CRITERIA = 20
MAX_GOLD_PAIRS = 10_000
MAX_RESAMPLES = 5000
VERDICT_CHOICES = ("validated", "excluded", "undecided")


def username_of(*, allow_null: bool = False) -> serializers.SlugRelatedField[Any]:
    """A related user, shown by their username."""
    return serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=allow_null
    )


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
        extra_kwargs = {
            "source": {
                "help_text": "What the dataset's latest import that added or changed records "
                "read, as stored (never a path on the server): a file's or folder's name, "
                "``upload:NAME`` for an upload, ``hf://datasets/ID@COMMIT, ...`` for a Hub "
                "dataset. Earlier imports' records may come from other sources."
            },
            "source_sha256": {
                "help_text": "The sha256 of that file's bytes; for a folder, an uploaded .zip "
                "(its unpacked files, not the zip) or a Hub dataset, that of the listing of the "
                'files read (docs/export.md, "Folder hashes").'
            },
        }


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
    """An uploaded file (.jsonl, .json, .csv, .parquet, .arrow, or a .zip of a folder)
    imported into the named dataset, read under an optional column mapping."""

    file = serializers.FileField()
    name = serializers.CharField(max_length=200, help_text="Dataset name; created when missing.")
    # DRF's metaclass takes declared fields off the class: this shadows no method.
    update = serializers.BooleanField(  # type: ignore[assignment]
        default=False, help_text="Replace records whose id exists with different content."
    )
    mapping = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="A column mapping as JSON text (docs/datasets.md): the file's own column "
        "names and winner labels.",
    )

    def validate_mapping(self, value: str) -> ColumnMapping:
        try:
            return parse_mapping(value)
        except MappingInvalid as exc:
            raise serializers.ValidationError(exc.problems) from exc


class ImportReportSerializer(serializers.Serializer):
    dataset = serializers.CharField()
    dataset_id = serializers.IntegerField()
    source = serializers.CharField(  # type: ignore[assignment]
        help_text="What this import read, as stored (never a path on the server): the file's "
        "or folder's name, ``upload:NAME`` for a file or .zip uploaded through the page or the "
        "API. The dataset keeps it when the import added or changed records."
    )
    source_sha256 = serializers.CharField(
        help_text="The sha256 of the file's bytes; for a folder, an uploaded .zip (its unpacked "
        "files, not the zip) or a Hub dataset, that of the listing of the files read "
        '(docs/export.md, "Folder hashes").'
    )
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
        # The record as stored: every column, in the model's order.
        fields = [field.name for field in Pair._meta.concrete_fields]
        read_only_fields = fields


class CampaignSerializer(serializers.ModelSerializer[Campaign]):
    """A campaign as managers read and change it. What fixes the sample (dataset, seed, gold)
    is set at creation only; the status changes through the start / pause / close actions."""

    annotations_per_pair = api_field(CAMPAIGN["annotations_per_pair"])
    reservation_minutes = api_field(CAMPAIGN["reservation_minutes"])
    first_reservation_minutes = api_field(CAMPAIGN["first_reservation_minutes"])
    quality_criteria = serializers.ListField(
        child=serializers.RegexField(r"^[a-z][a-z0-9_]{0,39}$"),
        min_length=1,
        max_length=MAX_CRITERIA,
        required=False,
        help_text="Quality criteria rated for each answer (lowercase identifiers).",
    )
    rating_scale_max = serializers.IntegerField(min_value=2, max_value=MAX_SCALE, required=False)
    quality_threshold = api_field(CAMPAIGN["quality_threshold"])
    majority_threshold = api_field(CAMPAIGN["majority_threshold"])
    min_gold_accuracy = api_field(CAMPAIGN["min_gold_accuracy"])
    position_bias_max_p = api_field(CAMPAIGN["position_bias_max_p"])
    fast_answer_seconds = api_field(CAMPAIGN["fast_answer_seconds"])
    quota_per_annotator = api_field(CAMPAIGN["quota_per_annotator"])
    prolific_study_id = api_field(CAMPAIGN["prolific_study_id"])
    completion_url = api_field(CAMPAIGN["completion_url"])
    no_places_url = api_field(CAMPAIGN["no_places_url"])
    screen_out_url = api_field(CAMPAIGN["screen_out_url"])
    pay_amount = api_field(CAMPAIGN["pay_amount"])
    pay_currency = api_field(CAMPAIGN["pay_currency"])
    pay_per = api_field(CAMPAIGN["pay_per"])
    language = api_field(CAMPAIGN["language"])
    translations = api_field(CAMPAIGN["translations"], validators=[valid_texts])
    show_timer = api_field(CAMPAIGN["show_timer"])
    reading_check = api_field(CAMPAIGN["reading_check"])
    study_link_enabled = api_field(CAMPAIGN["study_link_enabled"])
    signup_link_enabled = api_field(CAMPAIGN["signup_link_enabled"])
    created_by = username_of(allow_null=True)

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
            "first_reservation_minutes",
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
            "no_places_url",
            "prolific_study_id",
            "screen_out_url",
            "show_timer",
            "reading_check",
            "consent_text",
            "pay_amount",
            "pay_currency",
            "pay_per",
            "language",
            "translations",
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
            *fixed_after_creation(),
            "sample_plan",
            "invite_token",
            "signup_token",
            "created_by",
            "created_at",
        ]
        # The model's fields (a unique name, texts, those fixed at creation) with the
        # declared label and help.
        extra_kwargs = model_field_kwargs(
            CAMPAIGN, ("name", "guidelines", "consent_text", *fixed_after_creation())
        )

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
            # once answered, the pay in full or not at all.
            refused = change_errors(self.instance, attrs)
        else:
            refused = pay_errors({name: attrs.get(name) for name in PAY_SETTINGS})
        if refused:
            raise serializers.ValidationError({k: [v] for k, v in refused.items()})
        return attrs


# The targets of a planned sample, as PlanTargets names them, and what a sample_targets object
# holds besides them.
TARGET_NAMES = tuple(field.name for field in dataclasses.fields(PlanTargets))
DESIGN_FIELDS = ("design", "floor")


class SampleTargetsSerializer(serializers.Serializer):
    """Targets of a planned sample (``audit/sampling.py``); shares are fractions of 1."""

    def get_fields(self) -> dict[str, serializers.Field]:
        """A field per target PlanTargets takes, then the design's, as their settings declare
        them."""
        declared = {
            name: api_field(PLAN[name], creating=True) for name in (*TARGET_NAMES, *DESIGN_FIELDS)
        }
        return {**declared, **super().get_fields()}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("half_width") is None and attrs.get("category_half_width") is None:
            raise serializers.ValidationError(
                {"half_width": ["Give half_width, category_half_width or both."]}
            )
        return attrs

    def targets(self) -> PlanTargets:
        return planned_sample_input(self.validated_data)[0]

    def design_chosen(self) -> SampleDesign:
        return planned_sample_input(self.validated_data)[1]


def planned_sample_input(data: Mapping[str, Any]) -> tuple[PlanTargets, SampleDesign]:
    """A validated sample_targets object as the plan's targets and its design."""
    targets = {name: data[name] for name in TARGET_NAMES if name in data}
    design = SampleDesign(
        data.get("design") or PLAN["design"].default,
        data.get("floor") or PLAN["floor"].default,
    )
    return PlanTargets(**targets), design


class SamplePlanRequestSerializer(SampleTargetsSerializer):
    """A plan preview: the targets, k, and the gold pairs to leave out of the sample."""

    annotations_per_pair = api_field(CAMPAIGN["annotations_per_pair"], creating=True)
    gold_pair_ids = serializers.ListField(
        child=serializers.CharField(max_length=255), required=False, max_length=MAX_GOLD_PAIRS
    )
    model_agreement = api_field(PLAN["model_agreement"], creating=True)


class CampaignCreateSerializer(CampaignSerializer):
    """Creation also fixes the dataset, the sample, the gold items and the seed; either invite
    link may start off (an external campaign's both are off)."""

    dataset = serializers.PrimaryKeyRelatedField(queryset=Dataset.objects.all())
    annotations_per_pair = api_field(CAMPAIGN["annotations_per_pair"], creating=True)
    reservation_minutes = api_field(CAMPAIGN["reservation_minutes"], creating=True)
    first_reservation_minutes = api_field(CAMPAIGN["first_reservation_minutes"], creating=True)
    quality_threshold = api_field(CAMPAIGN["quality_threshold"], creating=True)
    majority_threshold = api_field(CAMPAIGN["majority_threshold"], creating=True)
    fast_answer_seconds = api_field(CAMPAIGN["fast_answer_seconds"], creating=True)
    sample = api_field(CAMPAIGN["sample"], creating=True, write_only=True)
    gold_pair_ids = serializers.ListField(
        child=serializers.CharField(max_length=255),
        required=False,
        max_length=MAX_GOLD_PAIRS,
        write_only=True,
        help_text="External ids of pairs that become gold items, expecting the dataset's claim.",
    )
    gold_rate = api_field(CAMPAIGN["gold_rate"], creating=True)
    seed = api_field(CAMPAIGN["seed"], creating=True)
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
        # Creation sets the dataset and what is fixed after it; the rest stays read back only
        # (sample_plan too: the plan is made from sample_targets, never given).
        read_only_fields = [
            name
            for name in CampaignSerializer.Meta.read_only_fields
            if name not in {"dataset", *fixed_after_creation()}
        ]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        external = attrs.get("external", False)
        turned_on = [switch for switch in LINK_SWITCHES if external and attrs.get(switch)]
        if turned_on:
            # create_campaign refuses it too; here the error is keyed by the field.
            message = "An external campaign has no links to turn on: its answers come from files."
            raise serializers.ValidationError({switch: [message] for switch in turned_on})
        return attrs


class UsernameField(serializers.SlugRelatedField):
    """A user by username. A NUL character is refused before the lookup: no username holds
    one, and PostgreSQL rejects it in a query with an error instead of finding nobody."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data)
        return super().to_internal_value(data)


class CampaignAnnotatorField(UsernameField):
    """An annotator of the campaign in the serializer's context, by username. Any other name
    gets the same answer whether or not an account holds it: acting on a campaign's annotators
    says nothing about the accounts outside it."""

    default_error_messages = {
        "does_not_exist": gettext_lazy("{value} is not an annotator of this campaign."),
    }

    def get_queryset(self) -> QuerySet[Any]:
        # The schema reads the model from ``queryset`` (every account); a request's lookup is
        # among the campaign's annotators only.
        return get_user_model().objects.filter(
            memberships__campaign=self.context["campaign"],
            memberships__role=Membership.Role.ANNOTATOR,
        )


class MembershipSerializer(serializers.ModelSerializer[Membership]):
    # A text box in the browsable API, not a list of every account: a manager names a user,
    # and never sees the others' names. Adding a name says whether an account holds it (the
    # manager must be told); nothing here names an account the manager did not name.
    username = UsernameField(
        source="user",
        slug_field="username",
        queryset=get_user_model().objects.all(),
        style={"base_template": "input.html"},
        error_messages={"does_not_exist": gettext_lazy("No account has the username {value}.")},
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

    decided_by = username_of(allow_null=True)
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
    """The filters and sort of the "Pairs" page (``audit.listing``). Its query string works
    here unchanged: the page's form sends every filter, the ones left at "any" empty, so an
    empty parameter means "not given" here as there; a value that is wrong is still refused."""

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

    def to_internal_value(self, data: Any) -> Any:
        given = {name: data.get(name) for name in self.fields if data.get(name) not in (None, "")}
        return super().to_internal_value(given)

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


class PaperQuerySerializer(AuditQuerySerializer):
    run = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),  # a row id
        required=False,
        help_text="The reward-model runs the leaderboard ranks (``?run=3&run=5``); by default "
        "the evaluations page's: the newest run of each model over all pairs.",
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


class PlacesSerializer(serializers.Serializer):
    """Whether a newcomer can still be given work (``campaigns/places.py``)."""

    # The answer first, then what it is made of.
    left = serializers.IntegerField(
        help_text="Places for newcomers: free slots less what is held. At 0 the study link and "
        "the sign-up invite say there are no places left, before consent."
    )
    free_slots = serializers.IntegerField(
        help_text="Slots of regular pairs no submitted answer or live reservation occupies."
    )
    held = serializers.IntegerField(
        help_text="Items the annotators still at work may yet take within their quota."
    )
    open_pairs = serializers.IntegerField(
        help_text="Regular pairs with a free slot: one annotator answers each pair once at most."
    )
    for_newcomer = serializers.IntegerField(
        help_text="The most regular items a newcomer could be given now: left, one per open pair."
    )


class ProgressSerializer(serializers.Serializer):
    """Regular items by state (gold items apart), and each annotator's counts: a count for each
    whole-number field of ``campaigns.progress.CampaignProgress``, then what needs more words."""

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
    places = PlacesSerializer(required=False)

    def get_fields(self) -> dict[str, serializers.Field]:
        counts = {
            field.name: serializers.IntegerField()
            for field in dataclasses.fields(CampaignProgress)
            if field.type is int
        }
        return {**counts, **super().get_fields()}


class FiniteFloatField(serializers.FloatField):
    """A float that JSON can carry: an infinite or undefined value is written as null."""

    def to_representation(self, value: Any) -> Any:
        number = float(value)
        return number if math.isfinite(number) else None


def holm_adjusted(p_field: str, use: str) -> serializers.FloatField:
    """The p-value ``p_field`` Holm-adjusted across a campaign's annotators; ``use`` says what
    compares it (the help text's end)."""
    return serializers.FloatField(
        allow_null=True,
        help_text=f"{p_field} Holm-adjusted across the campaign's annotators{use}",
    )


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
    agreement_p_holm = holm_adjusted("agreement_p_value", "; the agreement mark is set below 0.05.")
    share_a = serializers.FloatField(allow_null=True)
    position_p_value = serializers.FloatField(allow_null=True)
    position_p_holm = holm_adjusted(
        "position_p_value", ": the value the position-bias mark and position_bias_max_p compare."
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
    annotator = username_of()
    excluded_by = username_of(allow_null=True)
    lifted_by = username_of(allow_null=True)

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
    """Needs ``context={"campaign": ...}``: the annotator is looked up among its annotators."""

    annotator = CampaignAnnotatorField(
        slug_field="username",
        queryset=get_user_model().objects.all(),
        help_text="Username of an annotator of the campaign.",
    )
    reason = serializers.CharField(max_length=2000, help_text="Why; kept with the exclusion.")
