"""Work run in the background."""

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from prb_annotate.models.campaigns import USER_MODEL, Campaign


class Job(models.Model):
    """Work run by a task worker (prb_annotate/jobs/); no campaign: a dataset import's (staff)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    campaign = models.ForeignKey(Campaign, models.CASCADE, null=True, related_name="jobs")
    started_by = models.ForeignKey(
        USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=20)
    options = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    task_id = models.CharField(max_length=64, blank=True)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    log = models.TextField(blank=True)
    error = models.TextField(blank=True)
    result_file = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    heartbeat_at = models.DateTimeField(null=True)
    attempts = models.PositiveSmallIntegerField(default=0)  # workers that took it, retries too
    finished_at = models.DateTimeField(null=True)

    class Meta:
        verbose_name = _("background job")
        verbose_name_plural = _("background jobs")
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"
