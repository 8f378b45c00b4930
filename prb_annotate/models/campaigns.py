"""A campaign, its items and its members."""

import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F
from django.utils.translation import gettext_lazy as _

from prb_annotate.languages import models as lang  # LanguageChoice; validators
from prb_annotate.models.datasets import Dataset, Pair

# The user model's label, short enough to keep a foreign key to it on one line; every
# model module's keys to users name it.
USER_MODEL = settings.AUTH_USER_MODEL


def default_quality_criteria() -> list[str]:
    return ["correctness", "relevance", "helpfulness"]


def new_invite_token() -> str:
    # 256 bits from the OS generator: unguessable, and URL-safe for invite links.
    return secrets.token_urlsafe(32)


class Campaign(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        ACTIVE = "active", _("Active")
        PAUSED = "paused", _("Paused")
        CLOSED = "closed", _("Closed")

    dataset = models.ForeignKey(
        Dataset, on_delete=models.PROTECT, related_name="campaigns", verbose_name=_("Dataset")
    )
    name = models.CharField(max_length=200, unique=True, verbose_name=_("Name"))
    guidelines = models.TextField(
        blank=True, help_text=_("Markdown shown to annotators."), verbose_name=_("Guidelines")
    )
    annotations_per_pair = models.PositiveSmallIntegerField(
        default=3, verbose_name=_("Annotations per pair (k)")
    )
    reservation_minutes = models.PositiveIntegerField(
        default=30, verbose_name=_("Reservation minutes")
    )
    # A link's newcomer's reservations until a gold or practice answer is right (0: off).
    first_reservation_minutes = models.PositiveIntegerField(
        default=10, verbose_name=_("First reservation (minutes)")
    )
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.DRAFT, verbose_name=_("Status")
    )
    quality_criteria = models.JSONField(
        default=default_quality_criteria, verbose_name=_("Quality criteria")
    )
    rating_scale_max = models.PositiveSmallIntegerField(
        default=5, verbose_name=_("Rating scale maximum")
    )
    # A pair is validated when both answers reach this median on every criterion ...
    quality_threshold = models.FloatField(default=4.0, verbose_name=_("Quality threshold"))
    # ... and a strict majority of annotators agree (share of annotations, > this value).
    # Below 0.5 the losing side could win, so such values are refused.
    majority_threshold = models.FloatField(
        default=0.5,
        validators=[MinValueValidator(0.5), MaxValueValidator(0.99)],
        verbose_name=_("Majority threshold"),
    )
    # Annotators whose gold accuracy falls below this are left out of the audit (None: keep all).
    min_gold_accuracy = models.FloatField(
        null=True, blank=True, verbose_name=_("Minimum gold accuracy")
    )
    # Annotators whose A-share binomial p-value is below this leave the audit (None: keep all).
    position_bias_max_p = models.FloatField(
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        verbose_name=_("Position-bias p-value threshold"),
    )
    # Quality control marks answers given faster than this as too fast.
    fast_answer_seconds = models.FloatField(
        default=10.0,
        validators=[MinValueValidator(0.0)],
        verbose_name=_("Fast-answer floor (seconds)"),
    )
    # The annotation page shows a running timer for the current item.
    show_timer = models.BooleanField(default=False, verbose_name=_("Show a timer to annotators"))
    # Submitting asks once for confirmation while less than half of either response has been
    # scrolled into view (``annotate.js``); off: a complete answer is submitted at once.
    reading_check = models.BooleanField(
        default=False, verbose_name=_("Ask before submitting unread responses")
    )
    # Shown on the join page (and the consent page) when not empty: a member accepts it before
    # their first item, and the time they did is kept on their membership.
    consent_text = models.TextField(blank=True, verbose_name=_("Consent text"))
    gold_rate = models.FloatField(default=0.0, verbose_name=_("Gold rate"))
    seed = models.IntegerField(default=0, verbose_name=_("Seed"))
    quota_per_annotator = models.PositiveIntegerField(
        null=True, blank=True, verbose_name=_("Quota per annotator")
    )
    # A planned sample: targets, pairs per category, top-ups (``audit/sampling.py``'s
    # ``SamplePlan.as_json``); None for a campaign over all pairs or a plain random sample.
    sample_plan = models.JSONField(null=True, blank=True, verbose_name=_("Sample plan"))
    # The study link (``/join/<invite_token>/``, Prolific's values appended) and the sign-up
    # invite (``/signup/<signup_token>/``): each can be turned off, or rotated (ending the old).
    invite_token = models.CharField(
        max_length=64, unique=True, default=new_invite_token, verbose_name=_("Study link token")
    )
    study_link_enabled = models.BooleanField(
        default=True, verbose_name=_("Study link (Prolific) on")
    )
    signup_token = models.CharField(
        max_length=64, unique=True, default=new_invite_token, verbose_name=_("Sign-up invite token")
    )
    signup_link_enabled = models.BooleanField(default=True, verbose_name=_("Sign-up invite on"))
    completion_url = models.URLField(max_length=1000, blank=True, verbose_name=_("Completion URL"))
    # Where a study participant goes who arrives when every place is taken (campaigns/places.py).
    no_places_url = models.URLField(max_length=1000, blank=True, verbose_name=_("No-places URL"))
    # The Prolific study whose participants may join through the invite link: a link that
    # carries another STUDY_ID is refused. Empty: any study (``campaigns/join_limits.py``).
    prolific_study_id = models.CharField(
        max_length=100, blank=True, verbose_name=_("Prolific study id")
    )
    # Where a participant who fails the qualification goes; empty: a page of the app tells them.
    screen_out_url = models.URLField(max_length=1000, blank=True, verbose_name=_("Screen-out URL"))
    # The qualification's pass rule (``campaigns/qualification/rules.py``, ``PassRule``);
    # empty: every qualification item answered right.
    qualification_rule = models.JSONField(
        default=dict, blank=True, verbose_name=_("Qualification pass rule")
    )
    # What Prolific participants earn as bonuses (``campaigns/prolific.py``, ``BonusRule``);
    # empty: no bonus.
    bonus_rule = models.JSONField(default=dict, blank=True, verbose_name=_("Bonus rule"))
    # What participants were paid (amount, ISO currency, "study" or "hour"), for the paper.
    pay_amount = models.DecimalField(
        max_digits=7, decimal_places=2, null=True, blank=True, verbose_name=_("Pay")
    )
    pay_currency = models.CharField(max_length=3, blank=True, verbose_name=_("Pay currency"))
    pay_per = models.CharField(max_length=5, blank=True, verbose_name=_("Pay for"))
    # An external campaign has no queue: its answers were collected elsewhere and come from
    # files (``campaigns/external/``). It is closed from the start, so no link or queue opens.
    external = models.BooleanField(default=False, verbose_name=_("External campaign (no queue)"))
    # Its participants' pages speak this unless they chose a language (empty: their browser's);
    # texts written per language: {"ko": {"guidelines": ..., ...}} (``languages/texts.py``).
    language = models.CharField(
        max_length=10,
        blank=True,
        validators=[lang.valid_code],
        verbose_name=_("Participants' language"),
    )
    translations = models.JSONField(
        default=dict,
        blank=True,
        validators=[lang.valid_texts],
        verbose_name=_("Texts per language"),
    )
    created_by = models.ForeignKey(
        USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("Created by"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("Created at"))

    class Meta:
        verbose_name = _("campaign")
        verbose_name_plural = _("campaigns")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.status == self.Status.ACTIVE

    # The question set: answers already given were asked with these, so they may not change.
    QUESTION_SET_FIELDS = ("quality_criteria", "rating_scale_max")

    def has_answers(self) -> bool:
        # Through the reverse relations: annotations.py imports this module, not the other way.
        return self.assignments.filter(annotations__isnull=False).exists()

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


# The slots an item has beyond k (split-vote extras and replacements), in raw SQL over a
# campaign item row named ``i``: ``CampaignItem.target_annotations()`` for the hand-written
# queries of the queue, the submit and the annotators' standing.
RAISED_SLOTS_SQL = "(i.extra_annotations + i.replacement_annotations)"


class CampaignItem(models.Model):
    class Kind(models.TextChoices):
        REGULAR = "regular"
        GOLD = "gold"

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="items", verbose_name=_("Campaign")
    )
    pair = models.ForeignKey(
        Pair, on_delete=models.PROTECT, related_name="campaign_items", verbose_name=_("Pair")
    )
    kind = models.CharField(
        max_length=10, choices=Kind.choices, default=Kind.REGULAR, verbose_name=_("Kind")
    )
    # Gold items: the expected answers in dataset orientation, e.g.
    # {"rubric_fit": "chosen", "differentiator": "preference"}.
    gold_answers = models.JSONField(null=True, blank=True, verbose_name=_("Gold answers"))
    # Raised by the audit when a split vote asks for one more annotator (k + extra).
    extra_annotations = models.PositiveSmallIntegerField(
        default=0, verbose_name=_("Extra annotations")
    )
    # Slots added because annotations on this item left the audit (an excluded annotator, one
    # below the gold accuracy or over the position-bias threshold). Their answers still hold
    # their slots, so the item needs this many more occupied slots, by other annotators, to
    # reach the annotations its verdict counts (k + extra).
    replacement_annotations = models.PositiveSmallIntegerField(
        default=0, verbose_name=_("Replacement annotations")
    )
    # Seeded random rank that breaks ties in the queue reproducibly.
    order_key = models.BigIntegerField(default=0, verbose_name=_("Queue order"))
    # An actively drawn planned sample: the probability this pair had of being drawn
    # (``audit/active_sample.py``); None for every other item.
    inclusion_probability = models.FloatField(
        null=True, blank=True, verbose_name=_("Inclusion probability")
    )

    class Meta:
        verbose_name = _("campaign item")
        verbose_name_plural = _("campaign items")
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

    campaign = models.ForeignKey(
        Campaign, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("Campaign")
    )
    user = models.ForeignKey(
        USER_MODEL, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("User")
    )
    role = models.CharField(
        max_length=10, choices=Role.choices, default=Role.ANNOTATOR, verbose_name=_("Role")
    )
    participant_id = models.CharField(max_length=200, blank=True, verbose_name=_("Participant id"))
    study_id = models.CharField(max_length=200, blank=True, verbose_name=_("Study id"))
    session_id = models.CharField(max_length=200, blank=True, verbose_name=_("Session id"))
    joined_at = models.DateTimeField(auto_now_add=True, verbose_name=_("Joined at"))
    # When the member accepted the campaign's consent text (None: not asked, or not yet).
    consent_given_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("Consent given at")
    )
    # When the member first answered a gold, practice or qualification item right
    # (``assignment.py``).
    proven_at = models.DateTimeField(null=True, blank=True, verbose_name=_("First right answer at"))

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        constraints = [
            models.UniqueConstraint(fields=["campaign", "user"], name="membership_unique_user")
        ]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.campaign_id} ({self.role})"


class BonusPayment(models.Model):
    """One participant's share of a bonus paid through Prolific's API (``prolific_api``): what
    was paid, to whom, when and by whom. What a participant is still owed is the bonus rule's
    amount due less the sum of their rows, so a second press pays only the difference.

    A share is ``unconfirmed`` from its claim until Prolific answers the pay call, and stays so
    when that answer is lost (Prolific's pay call is not idempotent: sent again, it pays
    again). It counts as paid, so nothing pays it twice, until a manager who checked on
    Prolific records it as paid or withdraws it (``prolific_api.settle``)."""

    class State(models.TextChoices):
        PAID = "paid", _("paid")
        UNCONFIRMED = "unconfirmed", _("sent, not confirmed")

    campaign = models.ForeignKey(
        Campaign,
        on_delete=models.CASCADE,
        related_name="bonus_payments",
        verbose_name=_("Campaign"),
    )
    participant_id = models.CharField(max_length=200, verbose_name=_("Participant id"))
    amount = models.DecimalField(max_digits=10, decimal_places=2, verbose_name=_("Amount"))
    # Prolific's id of the bulk bonus the share was paid in (one per press).
    prolific_payment_id = models.CharField(
        max_length=100, blank=True, verbose_name=_("Prolific payment id")
    )
    paid_at = models.DateTimeField(auto_now_add=True, verbose_name=_("Paid at"))
    paid_by = models.ForeignKey(
        USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("Paid by"),
    )
    state = models.CharField(
        max_length=12, choices=State.choices, default=State.PAID, verbose_name=_("State")
    )

    class Meta:
        verbose_name = _("bonus payment")
        verbose_name_plural = _("bonus payments")
        ordering = ["paid_at", "pk"]
        indexes = [models.Index(fields=["campaign", "participant_id"])]

    def __str__(self) -> str:
        return f"{self.participant_id} {self.amount} @{self.campaign_id}"
