"""DRF fields built from the settings' declarations (``campaigns/setting_fields.py``); the
pages build their form fields from the same ones (``web/setting_fields.py``)."""

from collections.abc import Callable
from typing import Any

from rest_framework import serializers

from prb_annotate.campaigns.setting_fields import Kind, Setting


def api_field(setting: Setting, *, creating: bool = False, **overrides: Any) -> serializers.Field:
    """The serializer field of ``setting``, never required: a change leaves an omitted setting
    as it is, and ``creating`` (a new campaign, a plan) gives it its default."""
    kwargs: dict[str, Any] = {"required": False, "help_text": setting.described or None}
    if setting.label is not None:
        kwargs["label"] = setting.label
    if creating and setting.default is not None:
        kwargs["default"] = setting.default
    if setting.optional:
        kwargs.update(_empty(setting))
    if setting.below_minimum:
        kwargs["error_messages"] = {"min_value": setting.below_minimum}
    kwargs.update(setting.bounds())
    kwargs.update(overrides)
    return _BUILDERS[setting.kind](setting, kwargs)


def model_field_kwargs(settings: dict[str, Setting], names: tuple[str, ...]) -> dict[str, Any]:
    """``Meta.extra_kwargs`` for settings whose field the model gives (a unique name, a text):
    their label and help from the declaration."""
    extra: dict[str, dict[str, Any]] = {}
    for name in names:
        setting = settings[name]
        extra[name] = {"help_text": setting.described or None}
        if setting.label is not None:
            extra[name]["label"] = setting.label
    return extra


def _empty(setting: Setting) -> dict[str, Any]:
    if setting.kind in (Kind.TEXT, Kind.URL, Kind.CHOICE):
        return {"allow_blank": True}
    if setting.kind in (Kind.CHOICES, Kind.JSON):
        return {}
    return {"allow_null": True}


def _text(setting: Setting, kwargs: dict[str, Any]) -> serializers.Field:
    if setting.pattern:
        return serializers.RegexField(setting.pattern, **kwargs)
    return serializers.CharField(**kwargs)


def _choices(setting: Setting, kwargs: dict[str, Any]) -> serializers.Field:
    codes = [code for code, _ in setting.choices]
    return serializers.ListField(
        child=serializers.ChoiceField(choices=codes), max_length=len(codes), **kwargs
    )


def _choice(setting: Setting, kwargs: dict[str, Any]) -> serializers.Field:
    return serializers.ChoiceField(choices=[code for code, _ in setting.choices], **kwargs)


_BUILDERS: dict[Kind, Callable[[Setting, dict[str, Any]], serializers.Field]] = {
    Kind.INTEGER: lambda _, kwargs: serializers.IntegerField(**kwargs),
    Kind.FLOAT: lambda _, kwargs: serializers.FloatField(**kwargs),
    Kind.DECIMAL: lambda setting, kwargs: serializers.DecimalField(
        **setting.digit_kwargs(), **kwargs
    ),
    Kind.BOOLEAN: lambda _, kwargs: serializers.BooleanField(**kwargs),
    Kind.TEXT: _text,
    Kind.URL: lambda _, kwargs: serializers.URLField(**kwargs),
    Kind.CHOICES: _choices,
    Kind.CHOICE: _choice,
    Kind.JSON: lambda _, kwargs: serializers.JSONField(**kwargs),
}
