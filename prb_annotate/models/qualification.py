"""Practice and qualification before the queue."""

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from prb_annotate.models.campaigns import USER_MODEL, Campaign, Membership
from prb_annotate.models.datasets import Pair


class QualificationItem(models.Model):
    """A practice or qualification pair of a campaign, with its expected answers and an
    explanation per question: shown to members before the queue.

    Never a ``CampaignItem``: no queue, count of items, progress figure, audit or export reads
    this table, and the pair is set apart from the campaign's regular sample like a gold pair.
    Its answers are ``QualificationAnswer`` rows, never ``Annotation`` rows.
    """

    class Phase(models.TextChoices):
        PRACTICE = "practice"
        QUALIFICATION = "qualification"

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="qualification_items"
    )
    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="+")
    phase = models.CharField(max_length=20, choices=Phase.choices)
    # Order within the phase (members answer in this order).
    position = models.PositiveIntegerField(default=0)
    # In dataset orientation, as gold items: {"rubric_fit": "chosen", "differentiator": ...}.
    expected_answers = models.JSONField(default=dict)
    # {question: why the expected answer is right}, shown as feedback.
    explanations = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = _("practice or qualification item")
        verbose_name_plural = _("practice and qualification items")
        ordering = ["campaign", "phase", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "pair"], name="qualification_item_unique_pair"
            )
        ]
        indexes = [models.Index(fields=["campaign", "phase"], name="qualification_item_phase")]

    def __str__(self) -> str:
        return f"{self.campaign_id}:{self.pair_id} ({self.phase})"


class QualificationAnswer(models.Model):
    """One answer to a practice or qualification item: ``attempt`` is the qualification
    attempt (1 or 2), or the try of a practice item (a retry adds a row)."""

    item = models.ForeignKey(QualificationItem, on_delete=models.CASCADE, related_name="answers")
    annotator = models.ForeignKey(USER_MODEL, on_delete=models.CASCADE, related_name="+")
    attempt = models.PositiveSmallIntegerField()
    # Which side (A or B) showed the dataset's chosen answer.
    chosen_position = models.CharField(max_length=1)
    # The answers in dataset orientation (the fields of ``annotating.Answers``).
    answers = models.JSONField(default=dict)
    # {question: answered as expected}, for the questions the item expects an answer to.
    marks = models.JSONField(default=dict)
    time_on_task_ms = models.PositiveIntegerField(null=True, blank=True)
    client_token = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = _("practice or qualification answer")
        verbose_name_plural = _("practice and qualification answers")
        ordering = ["item", "annotator", "attempt"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator", "attempt"], name="qualification_answer_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.item_id}:{self.annotator_id} #{self.attempt}"

    @property
    def correct(self) -> bool:
        return all(self.marks.values())


class QualificationRecord(models.Model):
    """One member's qualification: outcome, attempts and times, and a manager letting a
    member who failed in (who, why, when)."""

    class Outcome(models.TextChoices):
        IN_PROGRESS = "in_progress", "in progress"
        PASSED = "passed", "passed"
        FAILED = "failed", "failed"
        ADMITTED = "admitted", "let in by a manager"

    membership = models.OneToOneField(
        Membership, on_delete=models.CASCADE, related_name="qualification"
    )
    outcome = models.CharField(max_length=20, choices=Outcome.choices, default=Outcome.IN_PROGRESS)
    # The attempt being answered (1 or 2); the finished ones are in ``attempts``.
    attempt = models.PositiveSmallIntegerField(default=1)
    # [{"attempt", "right", "total", "passed", "finished_at"}] for each finished attempt.
    attempts = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    admitted_by = models.ForeignKey(
        USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    admit_reason = models.TextField(blank=True)
    admitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("qualification record")
        verbose_name_plural = _("qualification records")

    def __str__(self) -> str:
        return f"{self.membership_id}: {self.outcome}"
