"""Web forms: the campaign forms managers fill in (new campaign, settings, annotators, dataset
upload), the sign-up invite's form, and the question set of the annotation page.

The annotation page is not a Django ``Form``: its fields depend on the campaign (criteria and
scale) and are parsed by ``annotating.answers_from_form``, so that the page and the API accept
exactly the same thing. This module only lays the questions out for the template, with what
was entered and the errors.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.validators import RegexValidator

from prb_annotate.audit import listing, rule
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns.accounts import AnnotatorListError, parse_annotator_sources
from prb_annotate.campaigns.editing import change_errors
from prb_annotate.models import Adjudication, Campaign, Dataset, EvaluationRun

MAJORITY_BELOW_HALF = (
    "Must be at least 0.5: below it the losing side of a vote could win "
    "(with 0.3, two answers for the chosen answer against three for the rejected one pass)."
)

# Form field <- PlanTargets field, for the planned-sample part of the campaign form.
PLAN_FIELDS = {
    "plan_half_width": "half_width",
    "plan_category_half_width": "category_half_width",
    "plan_expected_share": "expected_share",
    "plan_split_share": "split_share",
    "plan_price": "price_per_annotation",
}

# The thresholds of annotator quality control, on the creation form and the dashboard's form.
QUALITY_FIELD_OPTIONS: dict[str, dict[str, Any]] = {
    "min_gold_accuracy": {
        "label": "Minimum gold accuracy",
        "required": False,
        "max_value": 1.0,
        "help_text": "Annotators below it leave the audit; empty to keep everyone.",
    },
    "position_bias_max_p": {
        "label": "Position-bias p-value threshold",
        "required": False,
        "max_value": 1.0,
        "help_text": "Annotators whose share of “A” answers has a binomial p-value below it "
        "leave the audit (0.01 is a usual choice); empty to keep everyone.",
    },
    "fast_answer_seconds": {
        "label": "Fast-answer floor (seconds)",
        "required": False,
        "initial": 10.0,
        "max_value": 3600.0,
        "help_text": "Quality control counts answers given faster than this as too fast.",
    },
}


def quality_field(name: str, **overrides: Any) -> forms.FloatField:
    return forms.FloatField(min_value=0.0, **{**QUALITY_FIELD_OPTIONS[name], **overrides})


STUDY_ID_HELP = (
    "Prolific's study id (in the study's address). A link with another STUDY_ID then makes no "
    "account; leave empty to take any study."
)


def study_id_field() -> forms.CharField:
    return forms.CharField(
        label="Prolific study id",
        required=False,
        max_length=100,
        validators=[RegexValidator(r"^[A-Za-z0-9_-]+$", "Letters, digits, '-' and '_' only.")],
        help_text=STUDY_ID_HELP,
    )


@dataclass(frozen=True)
class FieldGroup:
    """A group of a form's fields, as the template draws it (a fieldset, folded or open)."""

    key: str
    legend: str
    fields: list[forms.BoundField]
    open: bool
    help_text: str = ""


class CampaignForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"))
    name = forms.CharField(max_length=200)
    guidelines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="Markdown, shown to annotators one click away from every item.",
    )
    annotations_per_pair = forms.IntegerField(
        label="Annotations per pair (k)", min_value=1, max_value=50, initial=3
    )
    external = forms.BooleanField(
        label="External campaign (no queue)",
        required=False,
        help_text="Its answers were collected elsewhere and are imported from files on its page.",
    )
    reservation_minutes = forms.IntegerField(
        min_value=1,
        max_value=24 * 60,
        initial=30,
        help_text="An item not submitted within this time goes back to the queue.",
    )
    sample = forms.IntegerField(
        label="Sample size",
        required=False,
        min_value=1,
        help_text="Number of pairs drawn at random from the dataset; empty for all of them.",
    )
    seed = forms.IntegerField(initial=0, help_text="Makes the sample and the order reproducible.")
    gold_pair_ids = forms.CharField(
        label="Gold pairs",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Ids of pairs whose answers are known, separated by commas or spaces. They "
        "expect the dataset's claim: the chosen answer fits, the difference is preference.",
    )
    gold_rate = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        initial=0.0,
        help_text="Share of gold items mixed into each annotator's queue.",
    )
    majority_threshold = forms.FloatField(
        required=False,
        initial=0.5,
        min_value=0.5,
        max_value=0.99,
        error_messages={"min_value": MAJORITY_BELOW_HALF},
        help_text="A vote passes when the share of annotators on one side is above this.",
    )
    quota_per_annotator = forms.IntegerField(
        label="Quota per annotator",
        required=False,
        min_value=1,
        help_text="Items each annotator does before the completion page; empty for no limit.",
    )
    show_timer = forms.BooleanField(
        label="Show a timer to annotators",
        required=False,
        help_text="A running clock of the time spent on the current item, on the annotation page.",
    )
    min_gold_accuracy = quality_field("min_gold_accuracy")
    position_bias_max_p = quality_field("position_bias_max_p")
    fast_answer_seconds = quality_field("fast_answer_seconds")
    prolific_study_id = study_id_field()
    completion_url = forms.URLField(
        label="Completion URL",
        required=False,
        max_length=1000,
        assume_scheme="https",
        help_text="Where annotators go when their quota is done, e.g. Prolific's completion link.",
    )
    practice_pair_ids = forms.CharField(
        label="Practice pairs",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Ids of pairs shown first, with feedback, counted nowhere. They expect the "
        "dataset's claim; set expected answers and explanations on the campaign's practice "
        "and qualification page.",
    )
    qualification_pair_ids = forms.CharField(
        label="Qualification pairs",
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Ids of pairs a member must pass (two attempts) before the queue.",
    )
    qualification_min_correct = forms.IntegerField(
        label="Qualification: items right to pass",
        required=False,
        min_value=0,
        help_text="Empty: every qualification item right.",
    )
    qualification_required_questions = forms.MultipleChoiceField(
        label="Qualification: and",
        required=False,
        choices=[
            ("rubric_fit", "every better-fit answer right"),
            ("differentiator", "every main-difference answer right"),
        ],
        widget=forms.CheckboxSelectMultiple,
    )
    screen_out_url = forms.URLField(
        label="Screen-out URL",
        required=False,
        max_length=1000,
        assume_scheme="https",
        help_text="Where a study participant who fails the qualification goes, e.g. Prolific's "
        "screen-out completion link; empty: a page of this site tells them.",
    )

    plan_half_width = forms.FloatField(
        label="Planned sample: target half-width overall",
        required=False,
        min_value=0.001,
        max_value=0.499,
        help_text="Instead of a sample size: the pairs needed for a 95% interval this wide "
        "around the dataset's validated share, e.g. 0.05 for ±5 points.",
    )
    plan_category_half_width = forms.FloatField(
        label="Planned sample: target half-width per category",
        required=False,
        min_value=0.001,
        max_value=0.499,
        help_text="The same target for every category on its own (the larger size wins).",
    )
    plan_expected_share = forms.FloatField(
        label="Planned sample: expected validated share",
        initial=0.5,
        required=False,
        min_value=0.01,
        max_value=0.99,
        help_text="0.5 when unknown (the most pairs), or the share a pilot found.",
    )
    plan_split_share = forms.FloatField(
        label="Planned sample: expected share of split votes",
        initial=0.0,
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="Each asks one more annotator; counted in the annotations and the cost.",
    )
    plan_price = forms.FloatField(
        label="Planned sample: price per annotation",
        required=False,
        min_value=0.0,
        max_value=1_000_000.0,
        help_text="To see the cost of the plan.",
    )
    plan_model_agreement = forms.FloatField(
        label="Planned sample: a model annotator's agreement with the humans",
        required=False,
        min_value=0.0,
        max_value=1.0,
        help_text="Share of pairs where a model annotator on every pair matched the human "
        "verdict in a pilot, e.g. 0.85: the preview also shows the human pairs the targets "
        "need with its help (prediction-powered inference, docs/ppi.md).",
    )

    # (key, legend, field names): the form's groups in page order. The first is always open;
    # the others start folded unless they hold an error or a value other than the default.
    GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
        (
            "basics",
            "Basics",
            (
                "dataset",
                "name",
                "external",
                "guidelines",
                "annotations_per_pair",
                "reservation_minutes",
                "sample",
                "seed",
            ),
        ),
        (
            "quality",
            "Quality and gold",
            (
                "gold_pair_ids",
                "gold_rate",
                "majority_threshold",
                "min_gold_accuracy",
                "position_bias_max_p",
                "fast_answer_seconds",
            ),
        ),
        ("crowd", "Crowd and Prolific", ("quota_per_annotator", "completion_url", "show_timer")),
        ("plan", "Planned sample", (*PLAN_FIELDS, "plan_model_agreement")),
    )

    def groups(self, *, previewing: bool = False) -> list[FieldGroup]:
        """The fields by group, each open or folded (``previewing``: the plan group is open, as
        its preview is what the manager asked to see)."""
        grouped = {name for _, _, names in self.GROUPS for name in names}
        # A field added without a group still shows, in the first one.
        extra = tuple(name for name in self.fields if name not in grouped)
        result = []
        for index, (key, legend, names) in enumerate(self.GROUPS):
            fields = [self[name] for name in (names + extra if index == 0 else names)]
            is_open = index == 0 or (previewing and key == "plan") or self._touched(fields)
            result.append(FieldGroup(key, legend, fields, is_open))
        return result

    def _touched(self, fields: list[forms.BoundField]) -> bool:
        if any(field.errors for field in fields):
            return True
        return self.is_bound and any(
            field.name in self.changed_data and self.data.get(field.name) for field in fields
        )

    def sample_targets(self) -> PlanTargets | None:
        """The planned-sample targets entered, or None when no half-width was given."""
        data = self.cleaned_data
        if data.get("plan_half_width") is None and data.get("plan_category_half_width") is None:
            return None
        return PlanTargets(
            half_width=data.get("plan_half_width"),
            category_half_width=data.get("plan_category_half_width"),
            expected_share=data.get("plan_expected_share") or 0.5,
            split_share=data.get("plan_split_share") or 0.0,
            price_per_annotation=data.get("plan_price"),
        )

    def clean_gold_pair_ids(self) -> list[str]:
        return _ids(self.cleaned_data["gold_pair_ids"])

    def clean_practice_pair_ids(self) -> list[str]:
        return _ids(self.cleaned_data["practice_pair_ids"])

    def clean_qualification_pair_ids(self) -> list[str]:
        return _ids(self.cleaned_data["qualification_pair_ids"])

    def qualification_rule(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "min_correct": data.get("qualification_min_correct"),
            "required_questions": list(data.get("qualification_required_questions") or []),
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if cleaned.get("gold_rate") and not cleaned.get("gold_pair_ids"):
            self.add_error("gold_pair_ids", "A gold rate needs gold pairs.")
        self._check_apart(cleaned)
        planned = any(
            cleaned.get(f) is not None for f in ("plan_half_width", "plan_category_half_width")
        )
        if planned and cleaned.get("sample") is not None:
            self.add_error("sample", "Give a sample size or a target half-width, not both.")
        return cleaned

    def _check_apart(self, cleaned: dict[str, Any]) -> None:
        """A pair is gold, practice or qualification, never two of them."""
        gold = set(cleaned.get("gold_pair_ids") or [])
        practice = set(cleaned.get("practice_pair_ids") or [])
        qualification = set(cleaned.get("qualification_pair_ids") or [])
        for field, ids, others in (
            ("practice_pair_ids", practice, gold | qualification),
            ("qualification_pair_ids", qualification, gold),
        ):
            both = sorted(ids & others)
            if both:
                self.add_error(field, f"Already gold or practice pairs: {', '.join(both)}.")

    def clean_majority_threshold(self) -> float:
        value = self.cleaned_data["majority_threshold"]
        return 0.5 if value is None else float(value)

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"].strip()
        if Campaign.objects.filter(name=name).exists():
            raise forms.ValidationError("A campaign with this name already exists.")
        return name


def _ids(text: str) -> list[str]:
    return sorted(set(re.split(r"[\s,]+", text.strip())) - {""})


class QualitySettingsForm(forms.ModelForm[Campaign]):
    """The thresholds of annotator quality control, changeable while the campaign runs."""

    min_gold_accuracy = quality_field("min_gold_accuracy")
    position_bias_max_p = quality_field("position_bias_max_p")
    fast_answer_seconds = quality_field("fast_answer_seconds", required=True)

    class Meta:
        model = Campaign
        fields = ["min_gold_accuracy", "position_bias_max_p", "fast_answer_seconds"]


class StudyIdForm(forms.ModelForm[Campaign]):
    """The Prolific study whose participants the invite link admits, set once it exists."""

    prolific_study_id = study_id_field()

    class Meta:
        model = Campaign
        fields = ["prolific_study_id"]

    def clean_prolific_study_id(self) -> str:
        return str(self.cleaned_data["prolific_study_id"]).strip()


# The settings page's groups: (key, legend, field names, what the group says of its rules).
# A setting added to a group is on the page (CampaignSettingsForm reads its fields here).
SETTINGS_GROUPS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("basics", "Basics", ("name", "guidelines"), ""),
    (
        "work",
        "Annotators' work",
        (
            "annotations_per_pair",
            "quota_per_annotator",
            "reservation_minutes",
            "show_timer",
            "reading_check",
        ),
        "k may take any value in a draft; once the campaign has started it only goes up.",
    ),
    (
        "joining",
        "Joining",
        ("consent_text",),
        "A member accepts the consent text once, before their first item (a member already "
        "working, before their next one); the time is kept with their membership.",
    ),
    (
        "crowd",
        "Crowd and Prolific",
        ("completion_url", "prolific_study_id", "study_link_enabled", "signup_link_enabled"),
        "A link turned off answers like a link that never existed; accounts made through "
        "it keep working. Rotate a link on the dashboard to end the old one for good.",
    ),
    (
        "verdict",
        "Verdict thresholds",
        ("quality_threshold", "majority_threshold"),
        "A change recomputes the audit the next time it is opened.",
    ),
    (
        "quality",
        "Quality control",
        ("min_gold_accuracy", "position_bias_max_p", "fast_answer_seconds"),
        "Who is left out of the audit follows; replacement slots are asked for the pairs "
        "whose answers leave, and withdrawn where nobody filled them when answers return.",
    ),
)


class CampaignSettingsForm(forms.ModelForm[Campaign]):
    """Everything that may change once a campaign exists, in the groups of SETTINGS_GROUPS;
    the rules are in ``campaigns/editing.py`` (k only upwards once started, ...)."""

    annotations_per_pair = forms.IntegerField(
        label="Annotations per pair (k)", min_value=1, max_value=50
    )
    reservation_minutes = forms.IntegerField(
        min_value=1,
        max_value=24 * 60,
        help_text="An item not submitted within this time goes back to the queue.",
    )
    quota_per_annotator = forms.IntegerField(
        label="Quota per annotator",
        required=False,
        min_value=1,
        help_text="Items each annotator does before the completion page; empty for no limit.",
    )
    completion_url = forms.URLField(
        label="Completion URL",
        required=False,
        max_length=1000,
        assume_scheme="https",
        help_text="Where annotators go when their quota is done, e.g. Prolific's completion link.",
    )
    quality_threshold = forms.FloatField(
        min_value=1.0,
        help_text="Both answers need at least this median rating on every criterion.",
    )
    majority_threshold = forms.FloatField(
        min_value=0.5,
        max_value=0.99,
        error_messages={"min_value": MAJORITY_BELOW_HALF},
        help_text="A vote passes when the share of annotators on one side is above this.",
    )
    min_gold_accuracy = quality_field("min_gold_accuracy")
    position_bias_max_p = quality_field("position_bias_max_p")
    fast_answer_seconds = quality_field("fast_answer_seconds", required=True)

    class Meta:
        model = Campaign
        fields = [name for _, _, names, _ in SETTINGS_GROUPS for name in names]
        labels = {
            "show_timer": "Show a timer to annotators",
            "reading_check": "Ask before submitting unread responses",
            "consent_text": "Consent text",
            "study_link_enabled": "Study link (Prolific) on",
            "signup_link_enabled": "Sign-up invite on",
        }
        help_texts = {
            "reading_check": "Submitting asks once for confirmation while less than half of "
            "either response has been scrolled into view.",
            "consent_text": "Shown on the join page; when not empty, each annotator accepts it "
            "before their first item. Plain text; empty lines start paragraphs.",
        }
        widgets = {
            "guidelines": forms.Textarea(attrs={"rows": 8}),
            "consent_text": forms.Textarea(attrs={"rows": 5}),
        }

    def groups(self) -> list[FieldGroup]:
        return [
            FieldGroup(key, legend, [self[name] for name in names], True, rules)
            for key, legend, names, rules in SETTINGS_GROUPS
        ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        # Against the campaign as stored: the instance is updated only after clean().
        for field, message in change_errors(self.instance, cleaned).items():
            if field in self.fields:
                self.add_error(field, message)
        return cleaned


class ExcludeAnnotatorForm(forms.Form):
    annotator = forms.IntegerField(widget=forms.HiddenInput)
    reason = forms.CharField(max_length=2000, help_text="Kept with the exclusion.")


class AddMemberForm(forms.Form):
    username = forms.CharField(max_length=150)

    def clean_username(self) -> AbstractBaseUser:
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise forms.ValidationError(f"No user named {username!r}.")
        return user


class AddAnnotatorsForm(forms.Form):
    """Annotators to add, pasted or in a CSV file; read by ``accounts.parse_annotators``."""

    usernames = forms.CharField(
        label="Usernames",
        required=False,
        max_length=200_000,
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "alice alice@example.org\nbob"}),
        help_text="One or more per line, each optionally followed by an email.",
    )
    csv_file = forms.FileField(
        label="or a CSV file",
        required=False,
        help_text="With a username column, and an email column if you like.",
    )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        sources = []
        if (cleaned.get("usernames") or "").strip():
            sources.append(("the list", cleaned["usernames"]))
        upload = cleaned.get("csv_file")
        if upload is not None:
            try:
                sources.append((upload.name or "the file", upload.read().decode("utf-8-sig")))
            except UnicodeDecodeError:
                self.add_error("csv_file", "The file is not UTF-8 text.")
                return cleaned
        if not sources:
            self.add_error(None, "Give usernames or a CSV file.")
            return cleaned
        try:
            cleaned["entries"] = parse_annotator_sources(sources)
        except AnnotatorListError as error:
            self.add_error(None, error.problems)
        return cleaned


class SignUpForm(forms.Form):
    """The sign-up invite's form; the account is made by ``signup.sign_up``."""

    username = forms.CharField(
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text="Letters, digits and @ . + - _ only. You log in with it.",
        widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}),
    )
    password1 = forms.CharField(
        label="Password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password2 = forms.CharField(
        label="Password again",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"].strip()
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("This username is taken.")
        return username

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        first, second = cleaned.get("password1"), cleaned.get("password2")
        if first and second and first != second:
            self.add_error("password2", "The two passwords differ.")
        elif first:
            user = get_user_model()(username=cleaned.get("username", ""))
            try:
                validate_password(first, user)
            except forms.ValidationError as error:
                self.add_error("password1", error)
        return cleaned


class UploadForm(forms.Form):
    """A dataset file uploaded on the datasets page; imported by ``import_upload`` (or, for a
    zipped folder, ``import_path``)."""

    file = forms.FileField(
        help_text="JSON Lines, JSON, CSV or Parquet; or a .zip of a Hugging Face snapshot "
        "folder or of an export."
    )
    name = forms.CharField(
        label="Dataset name",
        max_length=200,
        required=False,
        help_text="A new name makes a new dataset; an existing one adds the new records to it. "
        "Empty: the file's name.",
    )
    update = forms.BooleanField(
        label="Update records whose id exists with other content",
        required=False,
        help_text="Otherwise such a record is an error and nothing is imported.",
    )

    def dataset_name(self) -> str:
        name = self.cleaned_data.get("name") or ""
        if name.strip():
            return name.strip()
        return Path(self.cleaned_data["file"].name or "dataset").stem[:200]


def _yes_no_field(label: str) -> forms.TypedChoiceField:
    return forms.TypedChoiceField(
        label=label,
        required=False,
        choices=[("", "any"), ("yes", "yes"), ("no", "no")],
        coerce=lambda value: value == "yes",
        empty_value=None,
    )


class PairFilterForm(forms.Form):
    """The "Pairs" list's filters and sort (``audit.listing`` applies them)."""

    verdict = forms.ChoiceField(
        required=False, choices=[("", "any"), *((v, v) for v in rule.VERDICTS)]
    )
    reason = forms.ChoiceField(
        required=False,
        choices=[("", "any"), *((r, rule.reason_words(r)) for r in rule.ADJUDICATION_REASONS)],
    )
    category = forms.CharField(required=False, max_length=200)
    flagged = _yes_no_field("Flagged")
    split = _yes_no_field("Split vote")
    adjudicated = _yes_no_field("Adjudicated")
    run = forms.IntegerField(label="Evaluation run", required=False, min_value=1)
    disagrees = _yes_no_field("Reward model disagrees with the humans")
    sort = forms.ChoiceField(
        required=False,
        choices=[("", "id")] + [(f"{d}{s}", f"{d}{s}") for s in listing.SORTS for d in ("", "-")],
    )

    def clean_category(self) -> str | None:
        # Empty means any category.
        return self.cleaned_data["category"] or None


class AdjudicationForm(forms.Form):
    # Nothing chosen in advance: a manager names the decision every time.
    decision = forms.ChoiceField(
        choices=[
            ("", "choose a decision"),
            *((value, label) for value, label in Adjudication.Decision.choices),
        ]
    )
    reason = forms.ChoiceField(
        choices=[
            (code, f"{rule.reason_words(code)}: {label}")
            for code, label in rule.ADJUDICATION_REASON_LABELS.items()
        ]
    )
    note = forms.CharField(
        required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3})
    )


class LeaderboardForm(forms.Form):
    """The evaluations page's choices: the runs to rank, the tie policy, the subset shown."""

    policy = forms.ChoiceField(
        required=False,
        choices=[
            ("left-out", "ties left out"),
            ("as-wrong", "ties count as wrong (the paper's figure)"),
        ],
        label="Rank by accuracy with",
    )
    run = forms.TypedMultipleChoiceField(
        required=False,
        coerce=int,
        label="Runs",
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: the runs over all pairs.",
    )
    subset = forms.CharField(required=False, max_length=300, widget=forms.HiddenInput)

    def __init__(self, data: Any, runs: Sequence[EvaluationRun]) -> None:
        super().__init__(data)
        self.fields["run"].choices = [  # type: ignore[attr-defined]
            (run.pk, f"#{run.pk} {run.model_name} ({run.mode} mode, {run.subset} pairs)")
            for run in runs
        ]
