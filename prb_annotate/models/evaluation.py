"""Reward models and model annotators scored on a campaign's pairs."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from prb_annotate.models.campaigns import Campaign
from prb_annotate.models.datasets import Pair


class EvaluationRun(models.Model):
    """A reward model scored on a subset of a campaign's pairs."""

    class Subset(models.TextChoices):
        VALIDATED = "validated"
        EXCLUDED = "excluded"
        ALL = "all"

    campaign = models.ForeignKey(
        Campaign,
        on_delete=models.CASCADE,
        related_name="evaluation_runs",
        verbose_name=_("Campaign"),
    )
    # The model as it was given to ``evaluate`` (a hub id, a built-in, or a folder on the server).
    model_name = models.CharField(max_length=1000, verbose_name=_("Model"))
    # The run's name on the pages and in the paper: unique among the campaign's runs not
    # removed, never a server path (``campaigns/run_names.py``).
    name = models.CharField(max_length=200, blank=True, verbose_name=_("Name"))
    # A model whose weights are random (the tiny test model): its scores mean nothing.
    random_weights = models.BooleanField(default=False, verbose_name=_("Random weights"))
    # Removed from the leaderboard, the paper and the run list; kept, and listed as history.
    removed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("Removed at"))
    mode = models.CharField(max_length=20, default="question", verbose_name=_("Mode"))
    subset = models.CharField(
        max_length=10, choices=Subset.choices, default=Subset.ALL, verbose_name=_("Subset")
    )
    settings = models.JSONField(default=dict, blank=True, verbose_name=_("Settings"))
    summary = models.JSONField(default=dict, blank=True, verbose_name=_("Summary"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("Created at"))

    class Meta:
        verbose_name = _("evaluation run")
        verbose_name_plural = _("evaluation runs")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.model_name} on {self.campaign_id} ({self.subset})"


class PairScore(models.Model):
    """One pair's result in a run. A judge may leave scores empty (its reply named no answer)."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="scores")
    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="scores")
    score_chosen = models.FloatField(null=True, blank=True)
    score_rejected = models.FloatField(null=True, blank=True)
    # correct / wrong / tie / unparsed, as the scorer reports it.
    outcome = models.CharField(max_length=20)
    # The pair's audit verdict when the run was made: validated / excluded / undecided.
    verdict = models.CharField(max_length=20, blank=True)
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = _("pair score")
        verbose_name_plural = _("pair scores")
        constraints = [models.UniqueConstraint(fields=["run", "pair"], name="score_unique_pair")]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.pair_id}"


class ModelAnswer(models.Model):
    """A language model's answer to one annotation question about one pair, in one A/B order:
    a *model annotator* (an EvaluationRun with mode "annotator"). Kept apart from Annotation on
    purpose, so that it can never enter the human agreement coefficients, the verdicts, the
    queue or the exports; the audit compares it with the humans separately."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="model_answers")
    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="model_answers")
    question = models.CharField(max_length=20)  # rubric_fit / differentiator
    # Where the chosen answer was shown (A = first).
    chosen_position = models.CharField(max_length=1)
    reply = models.TextField()
    # Dataset orientation, as Annotation stores it; "" when the reply named no choice.
    answer = models.CharField(max_length=20, blank=True)
    probability = models.FloatField(null=True)  # of chosen / preference (evaluation.annotator)

    class Meta:
        verbose_name = _("model answer")
        verbose_name_plural = _("model answers")
        constraints = [
            models.UniqueConstraint(
                fields=["run", "pair", "question", "chosen_position"], name="model_answer_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.pair_id}:{self.question}:{self.chosen_position}"
