from django import forms
from django.contrib import admin
from django.db import models as django_models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy, ngettext

from prb_annotate import models
from prb_annotate.security.logins import AdminLoginForm, unlock


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
    # Narrower text boxes for the Prolific ids: the campaign page fits a 1366 px screen.
    formfield_overrides = {
        django_models.CharField: {"widget": forms.TextInput(attrs={"size": 10})},
    }
    # Given by the member on the join or consent page, or by their first right gold or
    # practice answer: never typed in here.
    readonly_fields = ["consent_given_at", "proven_at"]


@admin.register(models.Campaign)
class CampaignAdmin(admin.ModelAdmin[models.Campaign]):
    list_display = ["name", "dataset", "status", "annotations_per_pair", "created_at"]
    list_filter = ["status", "dataset"]
    search_fields = ["name"]
    inlines = [MembershipInline]


@admin.register(models.InviteJoin)
class InviteJoinAdmin(admin.ModelAdmin[models.InviteJoin]):
    """Accounts made by invite links, with the address each came from (join_limits.py)."""

    list_display = ["user", "campaign", "address", "at"]
    list_filter = ["campaign"]
    search_fields = ["address", "user__username"]
    raw_id_fields = ["user"]


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


# Logins go through the same throttle as the login page and the API's token endpoint.
admin.site.login_form = AdminLoginForm


@admin.register(models.FailedLogin)
class FailedLoginAdmin(admin.ModelAdmin[models.FailedLogin]):
    """Recent failed logins; the action unlocks the usernames and addresses of the rows chosen."""

    list_display = ["username", "address", "at"]
    search_fields = ["username", "address"]
    ordering = ["-at"]
    actions = ["unlock_selected"]

    @admin.action(
        description=gettext_lazy("Unlock the usernames and addresses of the selected failures")
    )
    def unlock_selected(self, request: HttpRequest, queryset: QuerySet[models.FailedLogin]) -> None:
        usernames = set(queryset.values_list("username", flat=True))
        addresses = set(queryset.values_list("address", flat=True))
        removed = unlock(usernames=usernames, addresses=addresses)
        self.message_user(
            request,
            ngettext(
                "Unlocked: %(count)d failed login forgotten.",
                "Unlocked: %(count)d failed logins forgotten.",
                removed,
            )
            % {"count": removed},
        )


@admin.register(models.Participant)
class ParticipantAdmin(admin.ModelAdmin[models.Participant]):
    list_display = ["participant_id", "campaign", "study_id", "session_id", "created_at"]
    list_filter = ["campaign"]
    search_fields = ["participant_id", "study_id", "session_id"]
    raw_id_fields = ["user"]
    exclude = ["resume_key_hash"]


@admin.register(models.BonusPayment)
class BonusPaymentAdmin(admin.ModelAdmin[models.BonusPayment]):
    # A record of money paid: read here, never edited (what is owed is computed from it).
    list_display = ["participant_id", "campaign", "amount", "state", "paid_at", "paid_by"]
    list_filter = ["campaign", "state"]
    search_fields = ["participant_id", "prolific_payment_id"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
