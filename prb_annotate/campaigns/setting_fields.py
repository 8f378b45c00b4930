"""Each campaign setting declared once: its label, bounds, default, help, the settings page's
group it is in, and whether it may change once the campaign exists.

The managers' pages (``web/setting_fields.py`` builds Django form fields) and the API
(``api/setting_fields.py`` builds DRF fields) both read these declarations, as ``ModelForm``
and ``ModelSerializer`` both read a model field: the page and the API cannot drift apart.
Both layers sit above this module; it imports neither Django's forms nor DRF.

Two rules turn one declaration into both fields:

- ``optional``: the setting may be empty (an empty box on a page, ``null`` or ``""`` in the
  API). A setting that is not optional but ``empty_takes_default`` may be left empty on the
  creation form, where it takes its default; the settings page asks for a value.
- ``default``: the creation form's initial value, and the API's default where a request may
  leave the setting out (creation; a sample plan). A change leaves an omitted setting as it is.

``help`` is what a page says under the field; ``api_help`` replaces it in the API only where
the API's words must differ (``null`` where the page says "empty", a field's API name).
"""

from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django_stubs_ext import StrOrPromise

from prb_annotate.audit.ppi_designs import ACTIVE_FLOOR
from prb_annotate.campaigns.qualification.rules import EXPECTABLE, REQUIRED_WORDS


class Kind(StrEnum):
    INTEGER = "integer"
    FLOAT = "float"
    DECIMAL = "decimal"
    BOOLEAN = "boolean"
    TEXT = "text"
    URL = "url"
    # A subset of ``choices``: check boxes on a page, a list in the API.
    CHOICES = "choices"
    # One of ``choices``: a menu on a page, a choice in the API.
    CHOICE = "choice"
    # A JSON object: a text box of JSON on a page, an object in the API.
    JSON = "json"


class AfterCreation(StrEnum):
    """Whether a setting may change once the campaign exists (``campaigns/editing.py``)."""

    FREE = "free"
    # k: any value in a draft, only upwards once started, fixed once closed.
    UPWARDS = "upwards"
    # What fixes the sample and the queue: set at creation only.
    FIXED = "fixed"


@dataclass(frozen=True)
class Setting:
    name: str
    kind: Kind
    # None: each layer derives the label from the name ("reservation_minutes" ->
    # "Reservation minutes"), as Django and DRF both do.
    label: StrOrPromise | None = None
    help: StrOrPromise = ""
    api_help: str | None = None
    minimum: Any = None
    maximum: Any = None
    default: Any = None
    optional: bool = False
    empty_takes_default: bool = False
    group: str = ""
    after_creation: AfterCreation = AfterCreation.FREE
    max_length: int | None = None
    pattern: str | None = None
    pattern_message: StrOrPromise = ""
    below_minimum: StrOrPromise = ""
    choices: tuple[tuple[str, StrOrPromise], ...] = ()
    # DECIMAL: (max_digits, decimal_places).
    digits: tuple[int, int] = (0, 0)

    def digit_kwargs(self) -> dict[str, Any]:
        """A DECIMAL's digits as keyword arguments, named alike by Django's and DRF's fields."""
        max_digits, decimal_places = self.digits
        return {"max_digits": max_digits, "decimal_places": decimal_places}

    def bounds(self) -> dict[str, Any]:
        """The bounds as keyword arguments, named alike by Django's and DRF's fields."""
        bounds: dict[str, Any] = {}
        if self.minimum is not None:
            bounds["min_value"] = self.minimum
        if self.maximum is not None:
            bounds["max_value"] = self.maximum
        if self.max_length is not None:
            bounds["max_length"] = self.max_length
        return bounds

    @property
    def described(self) -> StrOrPromise:
        """The help as the API gives it."""
        return self.help if self.api_help is None else self.api_help


@dataclass(frozen=True)
class SettingGroup:
    """A fieldset of the settings page, with what it says of its rules."""

    key: str
    legend: StrOrPromise
    rules: StrOrPromise = ""


def _by_name(*settings: Setting) -> dict[str, Setting]:
    return {setting.name: setting for setting in settings}


MAX_K = 50
# Amounts of money (a participant's pay, a bonus), in the study's currency.
MIN_AMOUNT, MAX_AMOUNT, AMOUNT_DIGITS = Decimal("0.01"), Decimal("1000"), (7, 2)
MAX_SCALE = 10
MAX_SEED = 2**31 - 1
MAJORITY_BELOW_HALF = _(
    "Must be at least 0.5: below it the losing side of a vote could win "
    "(with 0.3, two answers for the chosen answer against three for the rejected one pass)."
)

# The settings page's groups in page order; each lists the settings of CAMPAIGN whose group
# it is, in CAMPAIGN's order.
SETTINGS_GROUPS = (
    SettingGroup("basics", _("Basics")),
    SettingGroup(
        "work",
        _("Annotators' work"),
        _("k may take any value in a draft; once the campaign has started it only goes up."),
    ),
    SettingGroup(
        "joining",
        _("Joining"),
        _(
            "A member accepts the consent text once, before their first item (a member already "
            "working, before their next one); the time is kept with their membership."
        ),
    ),
    SettingGroup(
        "crowd",
        _("Crowd and Prolific"),
        _(
            "A link turned off answers like a link that never existed; accounts made through "
            "it keep working. Rotate a link on the dashboard to end the old one for good."
        ),
    ),
    SettingGroup(
        "verdict",
        _("Verdict thresholds"),
        _(
            "After a change, the audit is computed again when it is next opened, or, where a "
            "worker computes it (a large campaign), when its computation is started on the "
            "audit page."
        ),
    ),
    SettingGroup(
        "quality",
        _("Quality control"),
        _(
            "Who is left out of the audit follows; replacement slots are asked for the pairs "
            "whose answers leave, and withdrawn where nobody filled them when answers return."
        ),
    ),
)

CAMPAIGN = _by_name(
    Setting("name", Kind.TEXT, label=_("Name"), max_length=200, group="basics"),
    Setting(
        "guidelines",
        Kind.TEXT,
        label=_("Guidelines"),
        help=_("Markdown, shown to annotators one click away from every item."),
        optional=True,
        group="basics",
    ),
    Setting(
        "annotations_per_pair",
        Kind.INTEGER,
        label=_("Annotations per pair (k)"),
        api_help="k: annotations wanted per pair.",
        minimum=1,
        maximum=MAX_K,
        default=3,
        group="work",
        after_creation=AfterCreation.UPWARDS,
    ),
    Setting(
        "quota_per_annotator",
        Kind.INTEGER,
        label=_("Quota per annotator"),
        help=_("Items each annotator does before the completion page; empty for no limit."),
        api_help="Items each annotator does before the completion page; null for no limit.",
        minimum=1,
        maximum=1_000_000,
        optional=True,
        group="work",
    ),
    Setting(
        "reservation_minutes",
        Kind.INTEGER,
        label=_("Reservation minutes"),
        help=_("An item not submitted within this time goes back to the queue."),
        minimum=1,
        maximum=24 * 60,
        default=30,
        group="work",
    ),
    Setting(
        "first_reservation_minutes",
        Kind.INTEGER,
        label=_("First reservation (minutes)"),
        help=_(
            "A participant who joined through a link holds an item this long (at most the "
            "reservation above) until they answer a gold, practice or qualification item right; "
            "until then, where the campaign has gold items, their first answer is followed by "
            "gold items only. Without any of these, their first reservation alone is this short. "
            "0 turns it off."
        ),
        minimum=0,
        maximum=24 * 60,
        default=10,
        empty_takes_default=True,
        group="work",
    ),
    Setting(
        "show_timer",
        Kind.BOOLEAN,
        label=_("Show a timer to annotators"),
        help=_("A running clock of the time spent on the current item, on the annotation page."),
        group="work",
    ),
    Setting(
        "reading_check",
        Kind.BOOLEAN,
        label=_("Ask before submitting unread responses"),
        help=_(
            "Submitting asks once for confirmation while less than half of either response "
            "has been scrolled into view."
        ),
        group="work",
    ),
    Setting(
        "consent_text",
        Kind.TEXT,
        label=_("Consent text"),
        help=_(
            "Shown on the join page; when not empty, each annotator accepts it before their "
            "first item. Plain text; empty lines start paragraphs."
        ),
        optional=True,
        group="joining",
    ),
    Setting(
        "pay_amount",
        Kind.DECIMAL,
        label=_("Pay"),
        help=_(
            "What each participant was paid, for the paper's methods paragraph (with the "
            "currency and what it is for below); empty: the paper does not state the pay."
        ),
        api_help="What each participant was paid, for the paper's methods paragraph; null: "
        "the paper does not state the pay. Needs pay_currency and pay_per.",
        minimum=MIN_AMOUNT,
        maximum=MAX_AMOUNT,
        digits=AMOUNT_DIGITS,
        optional=True,
        group="joining",
    ),
    Setting(
        "pay_currency",
        Kind.TEXT,
        label=_("Pay currency"),
        help=_("Its ISO 4217 code, e.g. GBP, USD or EUR."),
        max_length=3,
        pattern=r"^[A-Z]{3}$",
        pattern_message=_("Three capital letters (ISO 4217), e.g. GBP."),
        optional=True,
        group="joining",
    ),
    Setting(
        "pay_per",
        Kind.CHOICE,
        label=_("Pay for"),
        help=_("The whole study, or each hour of work."),
        api_help="What the pay is for: study (the whole study) or hour.",
        optional=True,
        group="joining",
        choices=(("study", _("the whole study")), ("hour", _("each hour of work"))),
    ),
    Setting(
        "completion_url",
        Kind.URL,
        label=_("Completion URL"),
        help=_("Where annotators go when their quota is done, e.g. Prolific's completion link."),
        max_length=1000,
        optional=True,
        group="crowd",
    ),
    Setting(
        "no_places_url",
        Kind.URL,
        label=_("No-places URL"),
        help=_(
            "Where a study participant goes who arrives when every place is taken (before "
            "consent or any item), e.g. the Prolific completion link with the code you set for "
            "this case; empty: the join page tells them to return the study."
        ),
        max_length=1000,
        optional=True,
        group="crowd",
    ),
    Setting(
        "prolific_study_id",
        Kind.TEXT,
        label=_("Prolific study id"),
        help=_(
            "Prolific's study id (in the study's address). A link with another STUDY_ID then "
            "makes no account; leave empty to take any study."
        ),
        api_help="Prolific's study id: invite links with another STUDY_ID make no account. "
        "Empty: any study.",
        max_length=100,
        pattern=r"^[A-Za-z0-9_-]+$",
        pattern_message=_("Letters, digits, '-' and '_' only."),
        optional=True,
        group="crowd",
    ),
    # The language its participants and annotators read (docs/i18n.md).
    Setting(
        "language",
        Kind.TEXT,
        label=_("Participants' language"),
        help=format_lazy(
            _(
                "The language of the pages its participants and annotators see, as a code "
                "({codes}); a language a person chose in the header wins. Empty: their browser's."
            ),
            codes=", ".join(f"{code}: {name}" for code, name in settings.LANGUAGES),
        ),
        max_length=10,
        # Empty is allowed apart (optional): a pattern that matched it too would make the
        # schema's two choices for an empty value overlap.
        pattern="^(" + "|".join(code for code, _name in settings.LANGUAGES) + ")$",
        pattern_message=_("One of the interface's language codes, or empty."),
        optional=True,
        group="joining",
    ),
    Setting(
        "translations",
        Kind.JSON,
        label=_("Texts per language"),
        help=_(
            "The guidelines, consent text and qualification explanations written in other "
            'languages, as JSON: {"ko": {"guidelines": "...", "consent_text": "...", '
            '"explanations": {"<pair id>": {"rubric_fit": "..."}}}}. A text left out shows the '
            "campaign's own."
        ),
        optional=True,
        group="joining",
    ),
    Setting("study_link_enabled", Kind.BOOLEAN, label=_("Study link (Prolific) on"), group="crowd"),
    Setting("signup_link_enabled", Kind.BOOLEAN, label=_("Sign-up invite on"), group="crowd"),
    Setting(
        "quality_threshold",
        Kind.FLOAT,
        label=_("Quality threshold"),
        help=_("Both answers need at least this median rating on every criterion."),
        minimum=1.0,
        maximum=float(MAX_SCALE),
        default=4.0,
        group="verdict",
    ),
    Setting(
        "majority_threshold",
        Kind.FLOAT,
        label=_("Majority threshold"),
        help=_("A vote passes when the share of annotators on one side is above this."),
        minimum=0.5,
        maximum=0.99,
        default=0.5,
        empty_takes_default=True,
        below_minimum=MAJORITY_BELOW_HALF,
        group="verdict",
    ),
    Setting(
        "min_gold_accuracy",
        Kind.FLOAT,
        label=_("Minimum gold accuracy"),
        help=_("Annotators below it leave the audit; empty to keep everyone."),
        api_help="Annotators below it leave the audit; null keeps everyone.",
        minimum=0.0,
        maximum=1.0,
        optional=True,
        group="quality",
    ),
    Setting(
        "position_bias_max_p",
        Kind.FLOAT,
        label=_("Position-bias p-value threshold"),
        help=_(
            "Annotators whose share of “A” answers has a binomial p-value below it, "
            "Holm-corrected across the campaign's annotators, leave the audit (0.01 is a usual "
            "choice); empty to keep everyone."
        ),
        api_help="Annotators whose share of A answers has a binomial p-value below this, "
        "Holm-corrected across the campaign's annotators, leave the audit; null keeps everyone.",
        minimum=0.0,
        maximum=1.0,
        optional=True,
        group="quality",
    ),
    Setting(
        "fast_answer_seconds",
        Kind.FLOAT,
        label=_("Fast-answer floor (seconds)"),
        help=_("Quality control counts answers given faster than this as too fast."),
        minimum=0.0,
        maximum=3600.0,
        default=10.0,
        empty_takes_default=True,
        group="quality",
    ),
    Setting(
        "external",
        Kind.BOOLEAN,
        label=_("External campaign (no queue)"),
        help=_("Its answers were collected elsewhere and are imported from files on its page."),
        after_creation=AfterCreation.FIXED,
    ),
    Setting(
        "sample",
        Kind.INTEGER,
        label=_("Sample size"),
        help=_("Number of pairs drawn at random from the dataset; empty for all of them."),
        api_help="Number of pairs drawn at random (seeded); all pairs when omitted.",
        minimum=1,
        optional=True,
        after_creation=AfterCreation.FIXED,
    ),
    Setting(
        "seed",
        Kind.INTEGER,
        label=_("Seed"),
        help=_("Makes the sample and the order reproducible."),
        minimum=0,
        maximum=MAX_SEED,
        default=0,
        after_creation=AfterCreation.FIXED,
    ),
    Setting(
        "gold_rate",
        Kind.FLOAT,
        label=_("Gold rate"),
        help=_("Share of gold items mixed into each annotator's queue."),
        minimum=0.0,
        maximum=1.0,
        default=0.0,
        after_creation=AfterCreation.FIXED,
    ),
    Setting(
        "screen_out_url",
        Kind.URL,
        label=_("Screen-out URL"),
        help=_(
            "Where a study participant who fails the qualification goes, e.g. Prolific's "
            "screen-out completion link; empty: a page of this site tells them."
        ),
        max_length=1000,
        optional=True,
    ),
)

# The qualification's pass rule (``campaigns/qualification/rules.py``).
PASS_RULE = _by_name(
    Setting(
        "min_correct",
        Kind.INTEGER,
        label=_("Items right to pass"),
        help=_("Empty: every qualification item right."),
        api_help="Items right to pass; null: every item.",
        minimum=0,
        maximum=10_000,
        optional=True,
    ),
    Setting(
        "required_questions",
        Kind.CHOICES,
        label=_("And"),
        api_help="Questions every item must have right (of those it expects).",
        optional=True,
        choices=tuple(REQUIRED_WORDS.items()),
    ),
)
assert [code for code, _ in PASS_RULE["required_questions"].choices] == list(EXPECTABLE)

# A planned sample's targets (``audit/sampling.py``'s PlanTargets, and the model annotator's
# agreement the prediction-powered preview takes); shares are fractions of 1.
_CONFIDENCE = Setting(
    "confidence", Kind.FLOAT, label=_("Confidence"), minimum=0.5, maximum=0.999, default=0.95
)
PLAN = _by_name(
    Setting(
        "half_width",
        Kind.FLOAT,
        label=_("Target half-width overall"),
        help=_(
            "Instead of a sample size: the pairs needed for an interval this wide around the "
            "dataset's validated share, at the plan's confidence level, e.g. 0.05 for ±5 points."
        ),
        api_help="Target half-width of the interval of the dataset's validated share, at the "
        "plan's confidence level (0.05 = ±5 points).",
        minimum=0.001,
        maximum=0.499,
        optional=True,
    ),
    Setting(
        "category_half_width",
        Kind.FLOAT,
        label=_("Target half-width per category"),
        help=_("The same target for every category on its own (the larger size wins)."),
        minimum=0.001,
        maximum=0.499,
        optional=True,
    ),
    Setting(
        "expected_share",
        Kind.FLOAT,
        label=_("Expected validated share"),
        help=_("0.5 when unknown (the most pairs), or the share a pilot found."),
        minimum=0.01,
        maximum=0.99,
        default=0.5,
        empty_takes_default=True,
    ),
    _CONFIDENCE,
    Setting(
        "split_share",
        Kind.FLOAT,
        label=_("Expected share of split votes"),
        help=_(
            "Share of pairs expected to need one more annotator for a split vote; counted in "
            "the annotations and the cost."
        ),
        minimum=0.0,
        maximum=1.0,
        default=0.0,
        empty_takes_default=True,
    ),
    # Bounded so that the cost (price x annotations) stays a finite JSON number.
    Setting(
        "price_per_annotation",
        Kind.FLOAT,
        label=_("Price per annotation"),
        help=_("For the cost of the plan."),
        minimum=0.0,
        maximum=1_000_000.0,
        optional=True,
    ),
    Setting(
        "design",
        Kind.CHOICE,
        label=_("Sample design"),
        help=_(
            "Uniform: a seeded random sample of each category. Active: each pair drawn with its "
            "own probability, higher where a model annotator is unsure; it needs a model "
            "annotator's run over the whole dataset that kept its probabilities (the PPI guide, "
            "under Guides)."
        ),
        api_help="uniform (a seeded random sample of each category) or active (each pair drawn "
        "with its own probability, higher where a model annotator is unsure; needs a "
        "model-annotator run over the whole dataset with probabilities, docs/ppi.md).",
        default="uniform",
        empty_takes_default=True,
        choices=(
            ("uniform", _("uniform: a random sample of each category")),
            ("active", _("active: more pairs where the model annotator is unsure")),
        ),
    ),
    Setting(
        "floor",
        Kind.FLOAT,
        label=_("Active sampling's floor"),
        help=_(
            "No pair is drawn with less than this share of the uniform probability, so that "
            "every pair can be drawn (active design only)."
        ),
        minimum=0.01,
        maximum=1.0,
        default=ACTIVE_FLOOR,
        empty_takes_default=True,
    ),
    Setting(
        "model_agreement",
        Kind.FLOAT,
        label=_("A model annotator's agreement with the humans"),
        help=_(
            "Share of pairs where a model annotator on every pair matched the human verdict "
            "in a pilot, e.g. 0.85: the preview also shows the human pairs the targets need with "
            "its help (prediction-powered inference: the PPI guide, under Guides)."
        ),
        api_help="A model annotator's agreement with the human verdicts in a pilot: the answer "
        "adds with_model, the human pairs the targets need with its help (docs/ppi.md).",
        minimum=0.0,
        maximum=1.0,
        optional=True,
    ),
)

# A Prolific study's bonus rule (``campaigns/prolific.py``); amounts in the study's currency.
BONUS_RULE = _by_name(
    Setting(
        "per_item",
        Kind.DECIMAL,
        label=_("Bonus per item"),
        help=_("Paid for each item submitted beyond the number below."),
        api_help="Paid for each item submitted beyond items_beyond.",
        minimum=MIN_AMOUNT,
        maximum=MAX_AMOUNT,
        digits=AMOUNT_DIGITS,
        optional=True,
    ),
    Setting(
        "items_beyond",
        Kind.INTEGER,
        label=_("Beyond this many items"),
        help=_("Empty: the campaign's quota (0 without one)."),
        api_help="Null: the campaign's quota (0 without one).",
        minimum=0,
        maximum=1_000_000,
        optional=True,
    ),
    Setting(
        "gold_amount",
        Kind.DECIMAL,
        label=_("Gold bonus"),
        help=_("Paid once to whoever reaches the gold accuracy below."),
        api_help="Paid once for gold accuracy of gold_min_accuracy or more.",
        minimum=MIN_AMOUNT,
        maximum=MAX_AMOUNT,
        digits=AMOUNT_DIGITS,
        optional=True,
    ),
    Setting(
        "gold_min_accuracy",
        Kind.FLOAT,
        label=_("Gold accuracy at least"),
        help=_("A share, e.g. 0.8 for 80%."),
        minimum=0.0,
        maximum=1.0,
        optional=True,
    ),
)


def group_settings(group: str) -> tuple[str, ...]:
    """The names of CAMPAIGN's settings in ``group``, in page order."""
    return tuple(name for name, setting in CAMPAIGN.items() if setting.group == group)


def fixed_after_creation() -> tuple[str, ...]:
    """The names of CAMPAIGN's settings that only creation sets."""
    return tuple(
        name for name, setting in CAMPAIGN.items() if setting.after_creation == AfterCreation.FIXED
    )


# The pay settings, which the paper states together or not at all (``campaigns/editing.py``).
PAY_SETTINGS = ("pay_amount", "pay_currency", "pay_per")
