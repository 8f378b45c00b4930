"""What managers decide over the audit: adjudications and annotators left out."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from prb_annotate.models.campaigns import USER_MODEL, Campaign, CampaignItem


class Adjudication(models.Model):
    """A manager's final decision on a campaign pair, overriding the annotators' verdict.

    Revisable with history: each decision adds a row and only the newest has ``is_current``.
    A decision of ``withdrawn`` hands the pair back to the annotators' verdict.
    """

    class Decision(models.TextChoices):
        VALIDATED = "validated"
        EXCLUDED = "excluded"
        WITHDRAWN = "withdrawn"

    item = models.ForeignKey(CampaignItem, on_delete=models.CASCADE, related_name="adjudications")
    decision = models.CharField(max_length=10, choices=Decision.choices)
    # A reason code (the audit's codes, or ``adjudicator_judgement``).
    reason = models.CharField(max_length=64)
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    is_current = models.BooleanField(default=True)

    class Meta:
        verbose_name = _("adjudication")
        verbose_name_plural = _("adjudications")
        ordering = ["item", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["item"], condition=Q(is_current=True), name="adjudication_one_current"
            )
        ]

    def __str__(self) -> str:
        return f"{self.item_id}: {self.decision}"


class AnnotatorExclusion(models.Model):
    """An annotator a manager left out of a campaign's audit, with the reason; reversible.

    Current when ``lifted_at`` is empty; lifting keeps the row as history.
    """

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="annotator_exclusions"
    )
    annotator = models.ForeignKey(USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.TextField()
    excluded_by = models.ForeignKey(
        USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_by = models.ForeignKey(
        USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lifted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("annotator left out")
        verbose_name_plural = _("annotators left out")
        ordering = ["campaign", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "annotator"],
                condition=Q(lifted_at__isnull=True),
                name="exclusion_one_current",
            )
        ]

    def __str__(self) -> str:
        return f"{self.annotator_id} out of {self.campaign_id}"
