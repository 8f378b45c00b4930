"""Answers collected elsewhere: the files imported into an external campaign, and their
annotators."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from prb_annotate.models.campaigns import USER_MODEL, Campaign


class AnswerImport(models.Model):
    """A file of answers imported into an external campaign: its name and sha256 (never a path
    on the server), its reader and how many answers it brought."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="answer_imports")
    source = models.CharField(max_length=1000)
    source_sha256 = models.CharField(max_length=64)
    # tidy, annotations-export or label-studio (``campaigns/external/readers.py``).
    file_format = models.CharField(max_length=20)
    answers = models.PositiveIntegerField(default=0)
    imported_by = models.ForeignKey(
        USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("answer import")
        verbose_name_plural = _("answer imports")
        ordering = ["campaign", "imported_at", "id"]

    def __str__(self) -> str:
        return f"{self.source} into {self.campaign_id}"


class ExternalAnnotator(models.Model):
    """An annotator id as an imported file gave it, and the account (no password, never able
    to log in) that the answers are kept under, so that the audit and the exports read them as
    they read everyone's."""

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="external_annotators"
    )
    user = models.OneToOneField(
        USER_MODEL, on_delete=models.CASCADE, related_name="external_annotator"
    )
    given_id = models.CharField(max_length=200)

    class Meta:
        verbose_name = _("external annotator")
        verbose_name_plural = _("external annotators")
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "given_id"], name="external_annotator_unique_id"
            )
        ]

    def __str__(self) -> str:
        return f"{self.given_id}@{self.campaign_id}"
