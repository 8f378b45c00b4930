"""The work of annotators: items handed out, answers being written, answers submitted."""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from prb_annotate.models.campaigns import USER_MODEL, Campaign, CampaignItem


class Assignment(models.Model):
    """One item handed to one annotator. Progress is a query over these rows."""

    class Status(models.TextChoices):
        RESERVED = "reserved"
        SUBMITTED = "submitted"
        EXPIRED = "expired"
        SKIPPED = "skipped"

    class Position(models.TextChoices):
        A = "A"
        B = "B"

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="assignments", verbose_name=_("Campaign")
    )
    item = models.ForeignKey(
        CampaignItem, on_delete=models.CASCADE, related_name="assignments", verbose_name=_("Item")
    )
    annotator = models.ForeignKey(
        USER_MODEL,
        on_delete=models.CASCADE,
        related_name="assignments",
        verbose_name=_("Annotator"),
    )
    # Which side (A or B) shows the dataset's chosen answer to this annotator; empty for an
    # imported answer whose file did not say.
    chosen_position = models.CharField(
        max_length=1,
        choices=Position.choices,
        blank=True,
        verbose_name=_("Side of the chosen answer"),
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.RESERVED, verbose_name=_("Status")
    )
    reserved_at = models.DateTimeField(verbose_name=_("Reserved at"))
    expires_at = models.DateTimeField(verbose_name=_("Expires at"))
    submitted_at = models.DateTimeField(null=True, blank=True, verbose_name=_("Submitted at"))
    skip_reason = models.CharField(max_length=500, blank=True, verbose_name=_("Skip reason"))

    class Meta:
        verbose_name = _("assignment")
        verbose_name_plural = _("assignments")
        ordering = ["reserved_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"], name="assignment_unique_annotator"
            )
        ]
        indexes = [
            models.Index(
                fields=["campaign", "annotator", "status"], name="assignment_by_annotator"
            ),
            models.Index(fields=["item", "status"], name="assignment_by_item"),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}->{self.annotator_id} ({self.status})"


class AnswerDraft(models.Model):
    """An annotator's unsaved answers on a reserved item, as the form last held them: kept so
    that the work resumes on another device. Read by the annotation page alone, never counted
    (``campaigns/drafts.py``)."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="draft")
    values = models.JSONField(default=dict)
    saved_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("answer draft")
        verbose_name_plural = _("answer drafts")

    def __str__(self) -> str:
        return f"draft of {self.assignment_id}"


class Annotation(models.Model):
    """A submitted judgement, in dataset orientation (chosen / rejected, never A / B). Revisions
    are kept: each submit for the same assignment adds a row and only the newest is current."""

    class RubricFit(models.TextChoices):
        CHOSEN = "chosen"
        REJECTED = "rejected"
        TIE = "tie"

    class Differentiator(models.TextChoices):
        PREFERENCE = "preference", "personal preference"
        QUALITY = "quality", "general quality"
        BOTH = "both"
        NONE = "none", "no real difference"

    class Confidence(models.TextChoices):
        LOW = "low"
        MEDIUM = "medium"
        HIGH = "high"

    assignment = models.ForeignKey(
        Assignment,
        on_delete=models.CASCADE,
        related_name="annotations",
        verbose_name=_("Assignment"),
    )
    revision = models.PositiveIntegerField(default=1, verbose_name=_("Revision"))
    is_current = models.BooleanField(default=True, verbose_name=_("Current"))
    # {criterion: rating} for each answer of the pair.
    quality_chosen = models.JSONField(default=dict, verbose_name=_("Ratings of the chosen answer"))
    quality_rejected = models.JSONField(
        default=dict, verbose_name=_("Ratings of the rejected answer")
    )
    rubric_fit = models.CharField(
        max_length=10, choices=RubricFit.choices, verbose_name=_("Rubric fit")
    )
    differentiator = models.CharField(
        max_length=10, choices=Differentiator.choices, verbose_name=_("Main difference")
    )
    confidence = models.CharField(
        max_length=10, choices=Confidence.choices, verbose_name=_("Confidence")
    )
    comment = models.TextField(blank=True, verbose_name=_("Comment"))
    flagged = models.BooleanField(default=False, verbose_name=_("Flagged as unusable"))
    time_on_task_ms = models.PositiveIntegerField(
        null=True, blank=True, verbose_name=_("Time on task (ms)")
    )
    # Sent by the client with each submit: a re-sent request with the same token is harmless.
    client_token = models.CharField(max_length=64, unique=True, verbose_name=_("Client token"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("Created at"))

    class Meta:
        verbose_name = _("annotation")
        verbose_name_plural = _("annotations")
        ordering = ["assignment", "revision"]
        constraints = [
            models.UniqueConstraint(
                fields=["assignment", "revision"], name="annotation_unique_revision"
            ),
            models.UniqueConstraint(
                fields=["assignment"],
                condition=Q(is_current=True),
                name="annotation_one_current",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assignment_id} r{self.revision}"

    def rubric_fit_as_position(self, chosen_position: str) -> str:
        """The answer as the annotator saw it: A, B or tie."""
        if self.rubric_fit == self.RubricFit.TIE:
            return "tie"
        other = "B" if chosen_position == "A" else "A"
        return chosen_position if self.rubric_fit == self.RubricFit.CHOSEN else other
