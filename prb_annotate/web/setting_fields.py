"""Django form fields built from the settings' declarations (``campaigns/setting_fields.py``);
the API builds its fields from the same ones (``api/setting_fields.py``)."""

from collections.abc import Callable
from typing import Any

from django import forms
from django.core.validators import RegexValidator
from django.utils.functional import lazy

from prb_annotate.campaigns.setting_fields import Kind, Setting, StrOrPromise


def form_field(setting: Setting, *, creating: bool = True, **overrides: Any) -> forms.Field:
    """The form field of ``setting``: on the creation form (``creating``) a setting that
    ``empty_takes_default`` may be left empty; a page that changes it asks for a value.
    ``overrides`` are the page's own (a widget, a label with a prefix)."""
    kwargs: dict[str, Any] = {
        "label": setting.label,
        "help_text": setting.help,
        "required": _required(setting, creating),
    }
    if setting.default is not None:
        kwargs["initial"] = setting.default
    if setting.below_minimum:
        kwargs["error_messages"] = {"min_value": setting.below_minimum}
    kwargs.update(setting.bounds())
    kwargs.update(overrides)
    return _BUILDERS[setting.kind](setting, kwargs)


def prefixed_label(prefix: StrOrPromise, setting: Setting) -> StrOrPromise:
    """``setting``'s label after ``prefix`` ("Planned sample: target half-width overall"), put
    together when the page is drawn, in the language of its request."""
    return _prefixed_label(prefix, setting)


def _joined_label(prefix: StrOrPromise, setting: Setting) -> str:
    label = str(setting.label or setting.name.replace("_", " ").capitalize())
    return f"{prefix}: {label[0].lower()}{label[1:]}"


_prefixed_label = lazy(_joined_label, str)


def fill_defaults(cleaned: dict[str, Any], settings: dict[str, Setting], prefix: str = "") -> None:
    """An empty field of a setting that ``empty_takes_default`` takes its default."""
    for name, setting in settings.items():
        if setting.empty_takes_default and cleaned.get(prefix + name, 0) is None:
            cleaned[prefix + name] = setting.default


def _required(setting: Setting, creating: bool) -> bool:
    if setting.optional or setting.kind == Kind.BOOLEAN:
        return False
    return not (creating and setting.empty_takes_default)


def _text(setting: Setting, kwargs: dict[str, Any]) -> forms.Field:
    if setting.pattern:
        kwargs["validators"] = [RegexValidator(setting.pattern, setting.pattern_message)]
    return forms.CharField(**kwargs)


class JSONObjectField(forms.JSONField):
    """A JSON object in a text box; an empty box is the empty object (the model's default)."""

    def to_python(self, value: Any) -> Any:
        parsed = super().to_python(value)
        return {} if parsed in (None, "") else parsed


def _choices(setting: Setting, kwargs: dict[str, Any]) -> forms.Field:
    kwargs.setdefault("widget", forms.CheckboxSelectMultiple)
    return forms.MultipleChoiceField(choices=list(setting.choices), **kwargs)


def _choice(setting: Setting, kwargs: dict[str, Any]) -> forms.Field:
    empty = [("", "—")] if setting.optional else []
    return forms.ChoiceField(choices=[*empty, *setting.choices], **kwargs)


_BUILDERS: dict[Kind, Callable[[Setting, dict[str, Any]], forms.Field]] = {
    Kind.INTEGER: lambda _, kwargs: forms.IntegerField(**kwargs),
    Kind.FLOAT: lambda _, kwargs: forms.FloatField(**kwargs),
    Kind.DECIMAL: lambda setting, kwargs: forms.DecimalField(**setting.digit_kwargs(), **kwargs),
    Kind.BOOLEAN: lambda _, kwargs: forms.BooleanField(**kwargs),
    Kind.TEXT: _text,
    Kind.URL: lambda _, kwargs: forms.URLField(assume_scheme="https", **kwargs),
    Kind.CHOICES: _choices,
    Kind.CHOICE: _choice,
    Kind.JSON: lambda _, kwargs: JSONObjectField(
        **{"widget": forms.Textarea(attrs={"rows": 5}), **kwargs}
    ),
}
