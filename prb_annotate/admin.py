from django.contrib import admin

from prb_annotate import models


@admin.register(models.Dataset)
class DatasetAdmin(admin.ModelAdmin[models.Dataset]):
    list_display = ["name", "source", "imported_at"]
    search_fields = ["name", "source"]


@admin.register(models.Pair)
class PairAdmin(admin.ModelAdmin[models.Pair]):
    list_display = ["external_id", "dataset", "category"]
    list_filter = ["dataset", "category"]
    search_fields = ["external_id", "question", "chosen", "rejected"]
    list_select_related = ["dataset"]


class MembershipInline(admin.TabularInline[models.Membership, models.Campaign]):
    model = models.Membership
    extra = 0
    raw_id_fields = ["user"]


@admin.register(models.Campaign)
class CampaignAdmin(admin.ModelAdmin[models.Campaign]):
    list_display = ["name", "dataset", "status", "annotations_per_pair", "created_at"]
    list_filter = ["status", "dataset"]
    search_fields = ["name"]
    inlines = [MembershipInline]


@admin.register(models.CampaignItem)
class CampaignItemAdmin(admin.ModelAdmin[models.CampaignItem]):
    list_display = ["campaign", "pair", "kind", "extra_annotations"]
    list_filter = ["campaign", "kind"]
    raw_id_fields = ["pair"]


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin[models.Assignment]):
    list_display = ["item", "annotator", "status", "chosen_position", "reserved_at"]
    list_filter = ["campaign", "status"]
    raw_id_fields = ["item", "annotator"]


@admin.register(models.Annotation)
class AnnotationAdmin(admin.ModelAdmin[models.Annotation]):
    list_display = ["assignment", "revision", "is_current", "rubric_fit", "differentiator"]
    list_filter = ["is_current", "rubric_fit", "differentiator", "flagged"]
    raw_id_fields = ["assignment"]


@admin.register(models.EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin[models.EvaluationRun]):
    list_display = ["model_name", "campaign", "mode", "subset", "created_at"]
    list_filter = ["campaign", "mode", "subset"]
