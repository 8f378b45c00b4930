"""Each setting is declared once (``campaigns/setting_fields.py``) and the pages' forms and the
API's serializers agree on it: every declared setting is read back from the form fields and the
serializer fields that carry it (label, bounds, default, help, the message below its minimum),
and each side is asked to validate the values at and beyond its bounds."""

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, cast

import pytest
from django import forms
from django.forms.utils import pretty_name
from django.utils import translation
from rest_framework import serializers
from rest_framework.fields import empty

from prb_annotate.api.serializers import (
    CampaignCreateSerializer,
    CampaignSerializer,
    SamplePlanRequestSerializer,
)
from prb_annotate.api.serializers_qualification import (
    BonusRuleSerializer,
    PassRuleSerializer,
    QualificationSettingsSerializer,
)
from prb_annotate.campaigns.qualification.rules import PassRule
from prb_annotate.campaigns.setting_fields import (
    BONUS_RULE,
    CAMPAIGN,
    PASS_RULE,
    PLAN,
    SETTINGS_GROUPS,
    Kind,
    Setting,
    fixed_after_creation,
    group_settings,
)
from prb_annotate.models import Campaign
from prb_annotate.web.forms import PLAN_FIELDS, CampaignForm, CampaignSettingsForm
from prb_annotate.web.qualification_forms import BonusRuleForm, PassRuleForm

# A setting only the API takes: the plan's confidence level (the page plans at its default).
API_ONLY = {("plan", "confidence")}
PLAN_FORM_NAMES = {target: field for field, target in PLAN_FIELDS.items()}


def form_fields(family: str, name: str) -> Iterator[tuple[str, forms.Field, bool]]:
    """(where, field, creating) for each form field that carries the setting."""
    if family == "campaign":
        yield from _fields_named(name, [("creation", CampaignForm(), True)])
        settings_form = CampaignSettingsForm(instance=Campaign())
        yield from _fields_named(name, [("settings page", settings_form, False)])
    elif family == "plan":
        field = CampaignForm().fields.get(PLAN_FORM_NAMES.get(name, f"plan_{name}"))
        if field is not None:
            yield "creation", field, True
    elif family == "pass_rule":
        yield from _fields_named(f"qualification_{name}", [("creation", CampaignForm(), True)])
        yield from _fields_named(name, [("qualification page", PassRuleForm(), False)])
    else:
        yield from _fields_named(name, [("Prolific page", BonusRuleForm(), False)])


def _fields_named(
    name: str, forms_: list[tuple[str, forms.BaseForm, bool]]
) -> Iterator[tuple[str, forms.Field, bool]]:
    for where, form, creating in forms_:
        if name in form.fields:
            yield where, form.fields[name], creating


def api_fields(family: str, name: str) -> Iterator[tuple[str, serializers.Field, bool]]:
    """(where, field, creating) for each writable serializer field that carries the setting."""
    by_family: dict[str, list[tuple[serializers.Serializer, bool]]] = {
        "campaign": [(CampaignCreateSerializer(), True), (CampaignSerializer(), False)],
        "plan": [(SamplePlanRequestSerializer(), True)],
        "pass_rule": [(PassRuleSerializer(), False), (QualificationSettingsSerializer(), False)],
        "bonus_rule": [(BonusRuleSerializer(), False)],
    }
    for serializer, creating in by_family[family]:
        field = serializer.fields.get(name)
        if field is not None and not field.read_only:
            yield type(serializer).__name__, field, creating


DECLARED = [
    (family, setting)
    for family, settings in (
        ("campaign", CAMPAIGN),
        ("plan", PLAN),
        ("pass_rule", PASS_RULE),
        ("bonus_rule", BONUS_RULE),
    )
    for setting in settings.values()
]


@pytest.mark.parametrize(
    ("family", "setting"), DECLARED, ids=[f"{f}.{s.name}" for f, s in DECLARED]
)
def test_it_builds_the_form_and_the_serializer_from_one_declaration(
    db: None, family: str, setting: Setting
) -> None:
    on_pages = list(form_fields(family, setting.name))
    in_api = list(api_fields(family, setting.name))
    assert in_api, f"{setting.name} is in no serializer"
    if (family, setting.name) not in API_ONLY:
        assert on_pages, f"{setting.name} is on no page"
    label = setting.label or pretty_name(setting.name)
    for where, field, creating in on_pages:
        assert _bounds(field) == _declared_bounds(setting), where
        assert _below_minimum(field, setting), where
        # A page may prefix the label with its part ("Planned sample: ...").
        assert (field.label or pretty_name(setting.name)).lower().endswith(label.lower()), where
        assert field.help_text == setting.help, where
        assert field.initial == setting.default, where
        assert field.required == _page_requires(setting, creating), where
    for where, api_field, creating in in_api:
        assert _bounds(api_field) == _declared_bounds(setting), where
        assert _below_minimum(api_field, setting), where
        assert api_field.label == label, where
        assert (api_field.help_text or "") == setting.described, where
        default = None if api_field.default is empty else api_field.default
        assert default == (setting.default if creating else None), where
        # Required only where nothing could stand in for it (a new campaign's name).
        assert not api_field.required or not (setting.optional or setting.default is not None)


def _bounds(field: forms.Field | serializers.Field) -> tuple[Any, ...]:
    """The bounds, or the choices of a setting that is one of them or a subset of them (the
    page's empty choice apart)."""
    if isinstance(field, forms.ChoiceField):
        choices = cast(list[tuple[str, str]], field.choices)
        return tuple(code for code, _ in choices if code != "")
    if isinstance(field, serializers.ListField):
        return tuple(cast(serializers.ChoiceField, field.child).choices)
    if isinstance(field, serializers.ChoiceField):
        return tuple(field.choices)
    # Django's and DRF's fields name their bounds alike.
    return tuple(getattr(field, name, None) for name in ("min_value", "max_value", "max_length"))


def _declared_bounds(setting: Setting) -> tuple[Any, ...]:
    if setting.kind in (Kind.CHOICES, Kind.CHOICE):
        return tuple(code for code, _ in setting.choices)
    return (setting.minimum, setting.maximum, setting.max_length)


def _below_minimum(field: forms.Field | serializers.Field, setting: Setting) -> bool:
    """The field says the declared message below the minimum, where one is declared."""
    return not setting.below_minimum or field.error_messages["min_value"] == setting.below_minimum


def _page_requires(setting: Setting, creating: bool) -> bool:
    if setting.optional or setting.kind == Kind.BOOLEAN:
        return False
    return not (creating and setting.empty_takes_default)


NUMBERS = [(f, s) for f, s in DECLARED if s.kind in (Kind.INTEGER, Kind.FLOAT, Kind.DECIMAL)]


@pytest.mark.parametrize(("family", "setting"), NUMBERS, ids=[f"{f}.{s.name}" for f, s in NUMBERS])
def test_it_makes_the_page_and_the_api_accept_and_refuse_the_same_values(
    db: None, family: str, setting: Setting
) -> None:
    step = Decimal("0.01") if setting.kind == Kind.DECIMAL else 1
    values = []
    if setting.minimum is not None:
        values += [(setting.minimum, True), (setting.minimum - step, False)]
    if setting.maximum is not None:
        values += [(setting.maximum, True), (setting.maximum + step, False)]
    assert values
    for value, accepted in values:
        for where, field, _ in form_fields(family, setting.name):
            assert _form_accepts(field, value) == accepted, (where, value)
        for where, api_field, _ in api_fields(family, setting.name):
            assert _api_accepts(api_field, value) == accepted, (where, value)


def _form_accepts(field: forms.Field, value: Any) -> bool:
    try:
        field.clean(str(value))
    except forms.ValidationError:
        return False
    return True


def _api_accepts(field: serializers.Field, value: Any) -> bool:
    try:
        field.run_validation(str(value))
    except serializers.ValidationError:
        return False
    return True


def test_it_lays_the_settings_page_out_by_the_declared_groups(db: None) -> None:
    groups = CampaignSettingsForm(instance=Campaign()).groups()
    assert [group.key for group in groups] == [group.key for group in SETTINGS_GROUPS]
    for group in groups:
        assert tuple(field.name for field in group.fields) == group_settings(group.key)
    on_page = {field.name for group in groups for field in group.fields}
    assert on_page == {name for name, setting in CAMPAIGN.items() if setting.group}


def test_it_keeps_what_fixes_the_sample_read_only_once_created() -> None:
    fixed = set(fixed_after_creation())
    assert fixed == {"external", "sample", "seed", "gold_rate"}
    fields = CampaignSerializer().fields
    for name in fixed & set(fields):
        assert fields[name].read_only, name
    assert not fixed & {group.key for group in SETTINGS_GROUPS}
    assert not fixed & {name for name, setting in CAMPAIGN.items() if setting.group}


def test_it_takes_the_default_of_a_setting_left_empty_on_the_creation_form(
    db: None, dataset: Any
) -> None:
    data = {
        "dataset": dataset.pk,
        "name": "Empty thresholds",
        "annotations_per_pair": "3",
        "reservation_minutes": "30",
        "seed": "0",
        "gold_rate": "0",
        "majority_threshold": "",
        "fast_answer_seconds": "",
    }
    form = CampaignForm(data)
    assert form.is_valid(), form.errors
    for name in ("majority_threshold", "fast_answer_seconds"):
        assert form.cleaned_data[name] == CAMPAIGN[name].default
    assert form.cleaned_data["plan_expected_share"] == PLAN["expected_share"].default


def test_a_pass_rule_is_worded_in_the_readers_language() -> None:
    """The result page printed the rule in English on a Korean page."""
    rule = PassRule(min_correct=2, required_questions=("rubric_fit",))
    assert rule.describe(3) == "at least 2 of 3 items right, every better-fit answer right"
    assert PassRule(min_correct=None, required_questions=()).describe(1) == "all 1 item right"
    with translation.override("ko"):
        korean = rule.describe(3)
    assert korean == "3개 항목 중 2개 이상 맞힘, 더 적합한 답변 문항을 모두 맞힘"
