"""Web forms: the campaign forms managers fill in (new campaign, settings, annotators, dataset
upload, answer-file upload, export choice), the sign-up invite's form, and the question set of
the annotation page.

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
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from prb_annotate.audit import listing, rule
from prb_annotate.audit.active_sample import SampleDesign
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns.accounts import AnnotatorListError, parse_annotator_sources
from prb_annotate.campaigns.editing import change_errors
from prb_annotate.campaigns.lifecycle import CAMPAIGN_SETTINGS
from prb_annotate.campaigns.setting_fields import (
    CAMPAIGN,
    PASS_RULE,
    PLAN,
    SETTINGS_GROUPS,
    StrOrPromise,
    group_settings,
)
from prb_annotate.datasets.mapping import ColumnMapping, MappingInvalid, parse_mapping
from prb_annotate.models import Adjudication, Campaign, Dataset, EvaluationRun
from prb_annotate.web.setting_fields import fill_defaults, form_field, prefixed_label

# Form field <- plan setting (PlanTargets' fields, the design and its floor), for the
# planned-sample part of the campaign form.
PLAN_FIELDS = {
    f"plan_{name}": name
    for name in ("half_width", "category_half_width", "expected_share", "split_share")
} | {"plan_price": "price_per_annotation", "plan_design": "design", "plan_floor": "floor"}


def setting(name: str, *, creating: bool = True, **overrides: Any) -> forms.Field:
    """The form field of the campaign setting ``name``, as declared."""
    return form_field(CAMPAIGN[name], creating=creating, **overrides)


def _pair_ids(label: StrOrPromise, help_text: StrOrPromise) -> forms.CharField:
    """Record ids typed in a box (``_ids`` reads them)."""
    return forms.CharField(
        label=label, required=False, widget=forms.Textarea(attrs={"rows": 2}), help_text=help_text
    )


def _plan(target: str) -> forms.Field:
    return form_field(PLAN[target], label=prefixed_label(_("Planned sample"), PLAN[target]))


def field_messages(form: forms.BaseForm) -> list[str]:
    """A bound form's errors as one sentence a field ("Label: what is wrong."), for a page
    that answers a refused form with messages on the page it came from."""
    return [
        f"{form.fields[field].label}: {' '.join(error['message'] for error in errors)}"
        for field, errors in form.errors.get_json_data().items()
    ]


@dataclass(frozen=True)
class FieldGroup:
    """A group of a form's fields, as the template draws it (a fieldset, folded or open)."""

    key: str
    legend: StrOrPromise
    fields: list[forms.BoundField]
    open: bool
    help_text: StrOrPromise = ""


class CampaignForm(forms.Form):
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=Dataset.objects.order_by("name"))
    name = setting("name")
    guidelines = setting("guidelines", widget=forms.Textarea(attrs={"rows": 8}))
    annotations_per_pair = setting("annotations_per_pair")
    external = setting("external")
    reservation_minutes = setting("reservation_minutes")
    first_reservation_minutes = setting("first_reservation_minutes")
    sample = setting("sample")
    seed = setting("seed")
    gold_pair_ids = _pair_ids(
        _("Gold pairs"),
        _(
            "Ids of pairs whose answers are known, separated by commas or spaces. They expect the "
            "dataset's claim: the chosen answer fits, the difference is preference."
        ),
    )
    gold_rate = setting("gold_rate")
    majority_threshold = setting("majority_threshold")
    quota_per_annotator = setting("quota_per_annotator")
    show_timer = setting("show_timer")
    reading_check = setting("reading_check")
    consent_text = setting("consent_text", widget=forms.Textarea(attrs={"rows": 5}))
    # The language its participants read, and its texts in other languages (docs/i18n.md), as
    # on the settings page.
    language = setting("language")
    translations = setting("translations", widget=forms.Textarea(attrs={"rows": 4}))
    min_gold_accuracy = setting("min_gold_accuracy")
    position_bias_max_p = setting("position_bias_max_p")
    fast_answer_seconds = setting("fast_answer_seconds")
    prolific_study_id = setting("prolific_study_id")
    completion_url = setting("completion_url")
    no_places_url = setting("no_places_url")
    practice_pair_ids = _pair_ids(
        _("Practice pairs"),
        _(
            "Ids of pairs shown first, with feedback, counted nowhere. They expect the dataset's "
            "claim; set expected answers and explanations on the campaign's practice and "
            "qualification page."
        ),
    )
    qualification_pair_ids = _pair_ids(
        _("Qualification pairs"),
        _("Ids of pairs a member must pass (two attempts) before the queue."),
    )
    qualification_min_correct = form_field(
        PASS_RULE["min_correct"], label=prefixed_label(_("Qualification"), PASS_RULE["min_correct"])
    )
    qualification_required_questions = form_field(
        PASS_RULE["required_questions"],
        label=prefixed_label(_("Qualification"), PASS_RULE["required_questions"]),
    )
    screen_out_url = setting("screen_out_url")

    plan_half_width = _plan("half_width")
    plan_category_half_width = _plan("category_half_width")
    plan_expected_share = _plan("expected_share")
    plan_split_share = _plan("split_share")
    plan_price = _plan("price_per_annotation")
    plan_design = _plan("design")
    plan_floor = _plan("floor")
    plan_model_agreement = _plan("model_agreement")

    # (key, legend, field names): the form's groups in page order. The first is always open;
    # the others start folded unless they hold an error or a value other than the default.
    GROUPS: tuple[tuple[str, StrOrPromise, tuple[str, ...]], ...] = (
        (
            "basics",
            _("Basics"),
            (
                "dataset",
                "name",
                "external",
                "guidelines",
                "annotations_per_pair",
                "reservation_minutes",
                "reading_check",
                "sample",
                "seed",
            ),
        ),
        ("joining", _("Joining and consent"), ("consent_text", "language", "translations")),
        (
            "quality",
            _("Quality and gold"),
            (
                "gold_pair_ids",
                "gold_rate",
                "majority_threshold",
                "min_gold_accuracy",
                "position_bias_max_p",
                "fast_answer_seconds",
            ),
        ),
        (
            "qualification",
            _("Practice and qualification"),
            (
                "practice_pair_ids",
                "qualification_pair_ids",
                "qualification_min_correct",
                "qualification_required_questions",
                "screen_out_url",
            ),
        ),
        (
            "crowd",
            _("Crowd and Prolific"),
            (
                "quota_per_annotator",
                "prolific_study_id",
                "first_reservation_minutes",
                "completion_url",
                "no_places_url",
                "show_timer",
            ),
        ),
        ("plan", _("Planned sample"), (*PLAN_FIELDS, "plan_model_agreement")),
    )

    def groups(self, *, previewing: bool = False) -> list[FieldGroup]:
        """The fields by group, each open or folded (``previewing``: the plan group is open, as
        its preview is what the manager asked to see)."""
        grouped = {name for _, _, names in self.GROUPS for name in names}
        # A field added without a group still shows, in the first one (a test keeps every field
        # of the new-campaign form in a group of its own).
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

    def sample_design(self) -> SampleDesign:
        """The planned sample's design as entered (uniform when left empty)."""
        data = self.cleaned_data
        return SampleDesign(
            data.get("plan_design") or "uniform", data.get("plan_floor") or PLAN["floor"].default
        )

    def clean_gold_pair_ids(self) -> list[str]:
        return _ids(self.cleaned_data["gold_pair_ids"])

    def clean_practice_pair_ids(self) -> list[str]:
        return _ids(self.cleaned_data["practice_pair_ids"])

    def clean_qualification_pair_ids(self) -> list[str]:
        return _ids(self.cleaned_data["qualification_pair_ids"])

    def campaign_settings(self) -> dict[str, Any]:
        """The keyword settings ``create_campaign`` takes, as entered."""
        data = self.cleaned_data
        return {name: data[name] for name in CAMPAIGN_SETTINGS if name in self.fields}

    def qualification_rule(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {
            "min_correct": data.get("qualification_min_correct"),
            "required_questions": list(data.get("qualification_required_questions") or []),
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        fill_defaults(cleaned, CAMPAIGN)
        fill_defaults(cleaned, PLAN, prefix="plan_")
        if cleaned.get("gold_rate") and not cleaned.get("gold_pair_ids"):
            self.add_error("gold_pair_ids", _("A gold rate needs gold pairs."))
        self._check_apart(cleaned)
        planned = any(
            cleaned.get(f) is not None for f in ("plan_half_width", "plan_category_half_width")
        )
        if planned and cleaned.get("sample") is not None:
            self.add_error("sample", _("Give a sample size or a target half-width, not both."))
        if cleaned.get("plan_design") == "active" and not planned:
            self.add_error("plan_design", _("An active sample needs a target half-width."))
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
                self.add_error(
                    field, _("Already gold or practice pairs: %(ids)s.") % {"ids": ", ".join(both)}
                )

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"].strip()
        if Campaign.objects.filter(name=name).exists():
            raise forms.ValidationError(_("A campaign with this name already exists."))
        return name


def _ids(text: str) -> list[str]:
    return sorted(set(re.split(r"[\s,]+", text.strip())) - {""})


class QualitySettingsForm(forms.ModelForm[Campaign]):
    """The thresholds of annotator quality control, changeable while the campaign runs."""

    min_gold_accuracy = setting("min_gold_accuracy", creating=False)
    position_bias_max_p = setting("position_bias_max_p", creating=False)
    fast_answer_seconds = setting("fast_answer_seconds", creating=False)

    class Meta:
        model = Campaign
        fields = list(group_settings("quality"))


class StudyIdForm(forms.ModelForm[Campaign]):
    """The Prolific study whose participants the invite link admits, set once it exists."""

    prolific_study_id = setting("prolific_study_id", creating=False)

    class Meta:
        model = Campaign
        fields = ["prolific_study_id"]

    def clean_prolific_study_id(self) -> str:
        return str(self.cleaned_data["prolific_study_id"]).strip()


# The settings page's widgets: the rest of each field is the setting's declaration.
SETTINGS_WIDGETS = {
    "guidelines": forms.Textarea(attrs={"rows": 8}),
    "consent_text": forms.Textarea(attrs={"rows": 5}),
}


def _declared_field(model_field: Any, **kwargs: Any) -> forms.Field | None:
    """A settings page field: the setting's declaration, or the model's for anything else."""
    if model_field.name not in CAMPAIGN:
        return model_field.formfield(**kwargs)
    widget = SETTINGS_WIDGETS.get(model_field.name)
    overrides = {} if widget is None else {"widget": widget}
    return setting(model_field.name, creating=False, **overrides)


class CampaignSettingsForm(forms.ModelForm[Campaign]):
    """Everything that may change once a campaign exists, in the settings page's groups
    (``campaigns/setting_fields.py`` declares each setting and its group); the rules are in
    ``campaigns/editing.py`` (k only upwards once started, ...)."""

    class Meta:
        model = Campaign
        fields = [name for group in SETTINGS_GROUPS for name in group_settings(group.key)]
        formfield_callback = _declared_field

    def groups(self) -> list[FieldGroup]:
        return [
            FieldGroup(
                group.key,
                group.legend,
                [self[name] for name in group_settings(group.key)],
                True,
                group.rules,
            )
            for group in SETTINGS_GROUPS
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
    reason = forms.CharField(
        label=_("Reason"), max_length=2000, help_text=_("Kept with the exclusion.")
    )


class AddMemberForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)

    def clean_username(self) -> AbstractBaseUser:
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise forms.ValidationError(_("No user named %(name)r.") % {"name": username})
        return user


class AddAnnotatorsForm(forms.Form):
    """Annotators to add, pasted or in a CSV file; read by ``accounts.parse_annotators``."""

    usernames = forms.CharField(
        label=_("Usernames"),
        required=False,
        max_length=200_000,
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "alice alice@example.org\nbob"}),
        help_text=_("One or more per line, each optionally followed by an email."),
    )
    csv_file = forms.FileField(
        label=_("or a CSV file"),
        required=False,
        help_text=_("With a username column, and an email column if you like."),
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
                self.add_error("csv_file", _("The file is not UTF-8 text."))
                return cleaned
        if not sources:
            self.add_error(None, _("Give usernames or a CSV file."))
            return cleaned
        try:
            cleaned["entries"] = parse_annotator_sources(sources)
        except AnnotatorListError as error:
            self.add_error(None, error.problems)
        return cleaned


class SignUpForm(forms.Form):
    """The sign-up invite's form; the account is made by ``signup.sign_up``."""

    username = forms.CharField(
        label=_("Username"),
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text=_("Letters, digits and @ . + - _ only. You log in with it."),
        widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}),
    )
    password1 = forms.CharField(
        label=_("Password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password2 = forms.CharField(
        label=_("Password again"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"].strip()
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise forms.ValidationError(_("This username is taken."))
        return username

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        first, second = cleaned.get("password1"), cleaned.get("password2")
        if first and second and first != second:
            self.add_error("password2", _("The two passwords differ."))
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
        label=_("File"),
        help_text=_(
            "JSON Lines, JSON, CSV, Parquet or Arrow; or a .zip of a Hugging Face "
            "snapshot folder, a folder save_to_disk wrote, or an export."
        ),
    )
    name = forms.CharField(
        label=_("Dataset name"),
        max_length=200,
        required=False,
        help_text=_(
            "A new name makes a new dataset; an existing one adds the new records to it. "
            "Empty: the file's name."
        ),
    )
    update = forms.BooleanField(
        label=_("Update records whose id exists with other content"),
        required=False,
        help_text=_("Otherwise such a record is an error and nothing is imported."),
    )
    mapping = forms.CharField(
        label=_("Column mapping (JSON)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_(
            'The file\'s own column names and winner labels, e.g. {"columns": '
            '{"question": "instruction"}}; see the datasets guide, under Guides. Empty: our names.'
        ),
    )
    preview = forms.BooleanField(
        label=_("Preview the first rows under the mapping; import nothing"),
        required=False,
    )

    def clean_mapping(self) -> ColumnMapping:
        try:
            return parse_mapping(self.cleaned_data.get("mapping") or "")
        except MappingInvalid as exc:
            raise forms.ValidationError(exc.problems) from exc

    def dataset_name(self) -> str:
        name = self.cleaned_data.get("name") or ""
        if name.strip():
            return name.strip()
        return Path(self.cleaned_data["file"].name or "dataset").stem[:200]


def _yes_no_field(label: StrOrPromise) -> forms.TypedChoiceField:
    return forms.TypedChoiceField(
        label=label,
        required=False,
        choices=[("", _("any")), ("yes", _("yes")), ("no", _("no"))],
        coerce=lambda value: value == "yes",
        empty_value=None,
    )


class AnswerUploadForm(forms.Form):
    file = forms.FileField(
        label=_("File"),
        help_text=_(
            "A tidy table (.csv, .jsonl, .parquet; our annotations export is one) or a "
            "Label Studio JSON export (.json)."
        ),
    )
    mapping = forms.FileField(
        label=_("Mapping"),
        required=False,
        help_text=_("JSON mapping of columns, values and Label Studio controls."),
    )


class ExportForm(forms.Form):
    subset = forms.ChoiceField(
        label=_("Subset"),
        choices=[
            ("validated", _("Validated pairs")),
            ("excluded", _("Excluded pairs (failed or still undecided)")),
            ("all", _("All pairs")),
        ],
        initial="validated",
    )
    format = forms.ChoiceField(
        label=_("Format"),
        choices=[("jsonl", "JSON Lines"), ("parquet", "Parquet"), ("csv", "CSV")],
        initial="jsonl",
    )
    with_validation = forms.BooleanField(
        required=False,
        initial=True,
        label=_("Add a validation object to each record"),
        help_text=_("Number of annotations, majority answers, quality medians, verdict, reasons."),
    )


class PairFilterForm(forms.Form):
    """The "Pairs" list's filters and sort (``audit.listing`` applies them)."""

    verdict = forms.ChoiceField(
        label=_("Verdict"),
        required=False,
        choices=[("", _("any")), *((v, _(v)) for v in rule.VERDICTS)],
    )
    reason = forms.ChoiceField(
        label=_("Reason"),
        required=False,
        # The audit's words are kept English there and marked where defined: shown translated.
        choices=[
            ("", _("any")),
            *((r, _(rule.reason_words(r))) for r in rule.ADJUDICATION_REASONS),
        ],
    )
    category = forms.CharField(label=_("Category"), required=False, max_length=200)
    flagged = _yes_no_field(_("Flagged"))
    split = _yes_no_field(_("Split vote"))
    adjudicated = _yes_no_field(_("Adjudicated"))
    run = forms.IntegerField(label=_("Evaluation run"), required=False, min_value=1)
    disagrees = _yes_no_field(_("Reward model disagrees with the humans"))
    sort = forms.ChoiceField(
        label=_("Sort"),
        required=False,
        choices=[("", "id")] + [(f"{d}{s}", f"{d}{s}") for s in listing.SORTS for d in ("", "-")],
    )

    def clean_category(self) -> str | None:
        # Empty means any category.
        return self.cleaned_data["category"] or None


class AdjudicationForm(forms.Form):
    # Nothing chosen in advance: a manager names the decision every time.
    decision = forms.ChoiceField(
        label=_("Decision"),
        choices=[
            ("", _("choose a decision")),
            *((value, label) for value, label in Adjudication.Decision.choices),
        ],
    )
    reason = forms.ChoiceField(
        label=_("Reason"),
        choices=[
            (code, format_lazy("{}: {}", _(rule.reason_words(code)), _(label)))
            for code, label in rule.ADJUDICATION_REASON_LABELS.items()
        ],
    )
    note = forms.CharField(
        label=_("Note"), required=False, max_length=5000, widget=forms.Textarea(attrs={"rows": 3})
    )


class LeaderboardForm(forms.Form):
    """The evaluations page's choices: the runs to rank, the tie policy, the subset shown."""

    policy = forms.ChoiceField(
        required=False,
        choices=[
            ("left-out", _("ties left out")),
            ("as-wrong", _("ties count as wrong (the paper's figure)")),
        ],
        label=_("Rank by accuracy with"),
    )
    run = forms.TypedMultipleChoiceField(
        required=False,
        coerce=int,
        label=_("Runs"),
        widget=forms.CheckboxSelectMultiple,
        help_text=_("None ticked: the newest run of each model over all pairs."),
    )
    subset = forms.CharField(required=False, max_length=300, widget=forms.HiddenInput)

    def __init__(self, data: Any, runs: Sequence[EvaluationRun]) -> None:
        super().__init__(data)
        self.fields["run"].choices = [  # type: ignore[attr-defined]
            (
                run.pk,
                _("%(name)s (run %(run)s, %(mode)s mode, %(subset)s)")
                % {
                    "name": run.name or run.model_name,
                    "run": run.pk,
                    "mode": run.mode,
                    "subset": run.subset,
                },
            )
            for run in runs
        ]
