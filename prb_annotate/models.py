"""Rows and single-object rules. Workflows that touch several models live in their own modules
(importing, assignment, annotating, audit, exporting)."""

import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils import timezone


def default_quality_criteria() -> list[str]:
    return ["correctness", "relevance", "helpfulness"]


def new_invite_token() -> str:
    # 256 bits from the OS generator: unguessable, and URL-safe for invite links.
    return secrets.token_urlsafe(32)


class Dataset(models.Model):
    name = models.CharField(max_length=200, unique=True)
    # The imported file's (or folder's) name and its sha256, never a path on the server.
    source = models.CharField(max_length=1000, blank=True)
    source_sha256 = models.CharField(max_length=64, blank=True)
    description = models.TextField(blank=True)
    imported_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Pair(models.Model):
    """One preference record: a question with a chosen and a rejected answer."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="pairs")
    external_id = models.CharField(max_length=255)
    category = models.CharField(max_length=200, blank=True)
    question = models.TextField()
    profile = models.JSONField(default=list, blank=True)
    rubric_aspects = models.JSONField(default=list, blank=True)
    narrative = models.TextField(blank=True)
    chosen = models.TextField()
    rejected = models.TextField()
    # Record fields we do not model, given back unchanged on export.
    extra = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["dataset", "external_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "external_id"], name="pair_unique_external_id"
            )
        ]
        indexes = [models.Index(fields=["dataset", "category"], name="pair_dataset_category")]

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.external_id}"


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft"
        ACTIVE = "active"
        PAUSED = "paused"
        CLOSED = "closed"

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="campaigns")
    name = models.CharField(max_length=200, unique=True)
    guidelines = models.TextField(blank=True, help_text="Markdown shown to annotators.")
    annotations_per_pair = models.PositiveSmallIntegerField(default=3)
    reservation_minutes = models.PositiveIntegerField(default=30)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    quality_criteria = models.JSONField(default=default_quality_criteria)
    rating_scale_max = models.PositiveSmallIntegerField(default=5)
    # A pair is validated when both answers reach this median on every criterion ...
    quality_threshold = models.FloatField(default=4.0)
    # ... and a strict majority of annotators agree (share of annotations, > this value).
    # Below 0.5 the losing side could win, so such values are refused.
    majority_threshold = models.FloatField(
        default=0.5, validators=[MinValueValidator(0.5), MaxValueValidator(0.99)]
    )
    # Annotators whose gold accuracy falls below this are left out of the audit (None: keep all).
    min_gold_accuracy = models.FloatField(null=True, blank=True)
    # Annotators whose share of "A" answers is biased with a binomial p-value below this are
    # left out of the audit (None: keep all).
    position_bias_max_p = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    # Quality control marks answers given faster than this as too fast.
    fast_answer_seconds = models.FloatField(default=10.0, validators=[MinValueValidator(0.0)])
    # The annotation page shows a running timer for the current item.
    show_timer = models.BooleanField(default=False)
    # Submitting asks once for confirmation while less than half of either response has been
    # scrolled into view (``annotate.js``); off: a complete answer is submitted at once.
    reading_check = models.BooleanField(default=False)
    # Shown on the join page (and the consent page) when not empty: a member accepts it before
    # their first item, and the time they did is kept on their membership.
    consent_text = models.TextField(blank=True)
    gold_rate = models.FloatField(default=0.0)
    seed = models.IntegerField(default=0)
    quota_per_annotator = models.PositiveIntegerField(null=True, blank=True)
    # A campaign over a planned sample: the targets, the pairs per category and each top-up
    # (``audit/sampling.py``, ``SamplePlan.as_json``). None for a campaign over all pairs or a
    # plain random sample.
    sample_plan = models.JSONField(null=True, blank=True)
    # The study link (``/join/<invite_token>/``, with Prolific's values appended) and the sign-up
    # invite (``/signup/<signup_token>/``): each can be turned off, and rotated to a new token,
    # which ends the old link.
    invite_token = models.CharField(max_length=64, unique=True, default=new_invite_token)
    study_link_enabled = models.BooleanField(default=True)
    signup_token = models.CharField(max_length=64, unique=True, default=new_invite_token)
    signup_link_enabled = models.BooleanField(default=True)
    completion_url = models.URLField(max_length=1000, blank=True)
    # The Prolific study whose participants may join through the invite link: a link that
    # carries another STUDY_ID is refused. Empty: any study (``campaigns/join_limits.py``).
    prolific_study_id = models.CharField(max_length=100, blank=True)
    # Where a study participant who fails the qualification is sent (Prolific's screen-out
    # completion link); empty: a page of the app tells them.
    screen_out_url = models.URLField(max_length=1000, blank=True)
    # The qualification's pass rule (``campaigns/qualification/rules.py``, ``PassRule``);
    # empty: every qualification item answered right.
    qualification_rule = models.JSONField(default=dict, blank=True)
    # What Prolific participants earn as bonuses (``campaigns/prolific.py``, ``BonusRule``);
    # empty: no bonus.
    bonus_rule = models.JSONField(default=dict, blank=True)
    # An external campaign has no queue: its answers were collected elsewhere and come from
    # files (``campaigns/external/``). It is closed from the start, so no link or queue opens.
    external = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.status == self.Status.ACTIVE

    # The question set: answers already given were asked with these, so they may not change.
    QUESTION_SET_FIELDS = ("quality_criteria", "rating_scale_max")

    def has_answers(self) -> bool:
        return Annotation.objects.filter(assignment__campaign=self).exists()

    def question_set_errors(self, changes: dict[str, Any]) -> dict[str, str]:
        """Why ``changes`` may not be applied: the question set is fixed once answers exist."""
        changed = [
            name
            for name in self.QUESTION_SET_FIELDS
            if name in changes and changes[name] != getattr(self, name)
        ]
        if not changed or self.pk is None or not self.has_answers():
            return {}
        message = "Cannot change once annotators have answered with the current question set."
        return dict.fromkeys(changed, message)

    def clean(self) -> None:
        if self.pk is None:
            return
        stored = Campaign.objects.filter(pk=self.pk).values(*self.QUESTION_SET_FIELDS).first()
        if stored is None:
            return
        current = {name: getattr(self, name) for name in self.QUESTION_SET_FIELDS}
        original = Campaign(pk=self.pk, **stored)
        errors = original.question_set_errors(current)
        if errors:
            raise ValidationError(errors)


class CampaignItem(models.Model):
    class Kind(models.TextChoices):
        REGULAR = "regular"
        GOLD = "gold"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="items")
    pair = models.ForeignKey(Pair, on_delete=models.PROTECT, related_name="campaign_items")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.REGULAR)
    # Gold items: the expected answers in dataset orientation, e.g.
    # {"rubric_fit": "chosen", "differentiator": "preference"}.
    gold_answers = models.JSONField(null=True, blank=True)
    # Raised by the audit when a split vote asks for one more annotator (k + extra).
    extra_annotations = models.PositiveSmallIntegerField(default=0)
    # Slots added because annotations on this item left the audit (an excluded annotator, one
    # below the gold accuracy or over the position-bias threshold). Their answers still hold
    # their slots, so the item needs this many more occupied slots, by other annotators, to
    # reach the annotations its verdict counts (k + extra).
    replacement_annotations = models.PositiveSmallIntegerField(default=0)
    # Seeded random rank that breaks ties in the queue reproducibly.
    order_key = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["campaign", "order_key", "id"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "pair"], name="item_unique_pair")
        ]
        # The assignment plan walks a campaign's items in queue order.
        indexes = [models.Index(fields=["campaign", "order_key"], name="item_queue_order")]

    def __str__(self) -> str:
        return f"{self.campaign_id}:{self.pair_id}"

    def target_annotations(self) -> int:
        """Occupied slots the item may have: k, split-vote extras, replacements."""
        return (
            self.campaign.annotations_per_pair
            + self.extra_annotations
            + self.replacement_annotations
        )

    @staticmethod
    def slot_limit() -> Any:
        """``target_annotations()`` as a query expression over CampaignItem rows."""
        return (
            F("campaign__annotations_per_pair")
            + F("extra_annotations")
            + F("replacement_annotations")
        )


class Membership(models.Model):
    class Role(models.TextChoices):
        ANNOTATOR = "annotator"
        MANAGER = "manager"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.ANNOTATOR)
    participant_id = models.CharField(max_length=200, blank=True)
    study_id = models.CharField(max_length=200, blank=True)
    session_id = models.CharField(max_length=200, blank=True)
    joined_at = models.DateTimeField(auto_now_add=True)
    # When the member accepted the campaign's consent text (None: not asked, or not yet).
    consent_given_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "user"], name="membership_unique_user")
        ]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.campaign_id} ({self.role})"


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

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(CampaignItem, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    # Which side (A or B) shows the dataset's chosen answer to this annotator; empty for an
    # imported answer whose file did not say.
    chosen_position = models.CharField(max_length=1, choices=Position.choices, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RESERVED)
    reserved_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    skip_reason = models.CharField(max_length=500, blank=True)

    class Meta:
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


class Annotation(models.Model):
    """A submitted judgement, in dataset orientation (chosen / rejected, never A / B).

    Revisions are kept: each submit for the same assignment adds a row and only the newest has
    ``is_current``.
    """

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

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="annotations")
    revision = models.PositiveIntegerField(default=1)
    is_current = models.BooleanField(default=True)
    # {criterion: rating} for each answer of the pair.
    quality_chosen = models.JSONField(default=dict)
    quality_rejected = models.JSONField(default=dict)
    rubric_fit = models.CharField(max_length=10, choices=RubricFit.choices)
    differentiator = models.CharField(max_length=10, choices=Differentiator.choices)
    confidence = models.CharField(max_length=10, choices=Confidence.choices)
    comment = models.TextField(blank=True)
    flagged = models.BooleanField(default=False)
    time_on_task_ms = models.PositiveIntegerField(null=True, blank=True)
    # Sent by the client with each submit: a re-sent request with the same token is harmless.
    client_token = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
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


class EvaluationRun(models.Model):
    """A reward model scored on a subset of a campaign's pairs."""

    class Subset(models.TextChoices):
        VALIDATED = "validated"
        EXCLUDED = "excluded"
        ALL = "all"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="evaluation_runs")
    model_name = models.CharField(max_length=1000)
    mode = models.CharField(max_length=20, default="question")
    subset = models.CharField(max_length=10, choices=Subset.choices, default=Subset.ALL)
    settings = models.JSONField(default=dict, blank=True)
    summary = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
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
    # rubric_fit / differentiator
    question = models.CharField(max_length=20)
    # Where the chosen answer was shown (A = first).
    chosen_position = models.CharField(max_length=1)
    reply = models.TextField()
    # Dataset orientation, as Annotation stores it; "" when the reply named no choice.
    answer = models.CharField(max_length=20, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run", "pair", "question", "chosen_position"], name="model_answer_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.pair_id}:{self.question}:{self.chosen_position}"


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
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    is_current = models.BooleanField(default=True)

    class Meta:
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
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    reason = models.TextField()
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lifted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
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


class Participant(models.Model):
    """An account made by an invite link for one study participant, in one campaign only.

    An account made by the study link has no password: the values Prolific sent at its first
    join, or the resume key that join gave the participant's browser (kept here only as a
    hash), are what bring the same person back. An account made by the sign-up invite has a
    password and logs in as usual; its ``participant_id`` is ``signup:<user id>``, which no
    study link can carry (a colon is refused there), and it has no resume key. Either way
    ``prb_annotate.access`` lets it reach ``campaign`` and nothing else.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participant"
    )
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="participants")
    participant_id = models.CharField(max_length=100)
    study_id = models.CharField(max_length=100, blank=True)
    session_id = models.CharField(max_length=100, blank=True)
    resume_key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "participant_id"], name="participant_unique_per_campaign"
            )
        ]

    def __str__(self) -> str:
        return f"{self.participant_id}@{self.campaign_id}"


class FailedLogin(models.Model):
    """One failed login. Recent rows lock their username, or their client address, for a while
    (``prb_annotate.logins``); rows in the database are shared by every worker process."""

    username = models.CharField(max_length=150)
    address = models.CharField(max_length=100)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["username", "at"], name="failedlogin_username_at"),
            models.Index(fields=["address", "at"], name="failedlogin_address_at"),
        ]

    def __str__(self) -> str:
        return f"{self.username} from {self.address} at {self.at:%Y-%m-%d %H:%M:%S}"


class InviteJoin(models.Model):
    """An account made through a campaign's invite link, and the address it came from.

    ``campaigns/join_limits.py`` counts, per campaign and address, the accounts that have not
    submitted anything yet, so that one address cannot reserve more than a small share of the
    campaign's slots.
    """

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="invite_joins")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    address = models.CharField(max_length=100)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["campaign", "address"], name="invitejoin_address")]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.campaign_id} from {self.address}"


class KnownLogin(models.Model):
    """A username's last successful login from one address: failures from elsewhere do not lock
    the username out from here (``prb_annotate.logins``)."""

    username = models.CharField(max_length=150)
    address = models.CharField(max_length=100)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["username", "address"], name="knownlogin_unique")
        ]

    def __str__(self) -> str:
        return f"{self.username} from {self.address}"


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
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
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
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    admit_reason = models.TextField(blank=True)
    admitted_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.membership_id}: {self.outcome}"


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
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
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
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="external_annotator"
    )
    given_id = models.CharField(max_length=200)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["campaign", "given_id"], name="external_annotator_unique_id"
            )
        ]

    def __str__(self) -> str:
        return f"{self.given_id}@{self.campaign_id}"
