"""The pairs: a dataset and its preference records."""

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


class Dataset(models.Model):
    name = models.CharField(max_length=200, unique=True, verbose_name=_("Name"))
    # The imported file's (or folder's) name and its sha256, never a path on the server.
    source = models.CharField(max_length=1000, blank=True, verbose_name=_("Source"))
    source_sha256 = models.CharField(max_length=64, blank=True, verbose_name=_("Source SHA-256"))
    description = models.TextField(blank=True, verbose_name=_("Description"))
    imported_at = models.DateTimeField(auto_now_add=True, verbose_name=_("Imported at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("Updated at"))

    class Meta:
        verbose_name = _("dataset")
        verbose_name_plural = _("datasets")
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Pair(models.Model):
    """One preference record: a question with a chosen and a rejected answer."""

    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="pairs", verbose_name=_("Dataset")
    )
    external_id = models.CharField(max_length=255, verbose_name=_("Record id"))
    category = models.CharField(max_length=200, blank=True, verbose_name=_("Category"))
    question = models.TextField(verbose_name=pgettext_lazy("the user's question", "Question"))
    profile = models.JSONField(default=list, blank=True, verbose_name=_("Profile"))
    rubric_aspects = models.JSONField(default=list, blank=True, verbose_name=_("Rubric aspects"))
    narrative = models.TextField(blank=True, verbose_name=_("Narrative"))
    chosen = models.TextField(verbose_name=_("Chosen answer"))
    rejected = models.TextField(verbose_name=_("Rejected answer"))
    # Record fields we do not model, given back unchanged on export.
    extra = models.JSONField(default=dict, blank=True, verbose_name=_("Other record fields"))
    content_hash = models.CharField(max_length=64, verbose_name=_("Content hash"))

    class Meta:
        verbose_name = _("preference pair")
        verbose_name_plural = _("preference pairs")
        ordering = ["dataset", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "external_id"], name="pair_unique_external_id"
            )
        ]
        indexes = [models.Index(fields=["dataset", "category"], name="pair_dataset_category")]

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.external_id}"
