"""Command-line options built from the settings' declarations (``campaigns/setting_fields.py``),
as the pages build their form fields and the API its serializer fields: a command takes a
setting with the same bounds, pattern, default and help, so the three cannot drift apart.

A value out of bounds is refused while the options are read, naming the option (``Error:
argument --k: 0 is below 1, the least allowed``), before the command touches the database.
"""

import re
from argparse import ArgumentParser, ArgumentTypeError, _ArgumentGroup
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from prb_annotate.campaigns.setting_fields import Kind, Setting

# What a value given on the command line is read as, by kind.
READERS: dict[Kind, Callable[[str], Any]] = {
    Kind.INTEGER: int,
    Kind.FLOAT: float,
    Kind.DECIMAL: Decimal,
    Kind.TEXT: str,
    Kind.URL: str,
}


def add_setting_option(
    parser: ArgumentParser | _ArgumentGroup,
    setting: Setting,
    flag: str | None = None,
    *,
    help_text: str | None = None,
) -> None:
    """Add ``setting`` as the option ``flag`` (``--`` and its name with hyphens by default).

    ``help_text`` replaces the declared words where a command must say something else (what
    leaving the option out does, where the API says ``null``)."""
    words = str(help_text if help_text is not None else setting.described or setting.label or "")
    if setting.kind == Kind.BOOLEAN:
        parser.add_argument(flag or _flag(setting), action="store_true", help=_escaped(words))
        return
    if setting.default is not None:
        words = _with_default(words, setting.default)
    parser.add_argument(
        flag or _flag(setting),
        type=setting_reader(setting),
        default=setting.default,
        help=_escaped(words),
    )


def setting_reader(setting: Setting) -> Callable[[str], Any]:
    """argparse's ``type`` for ``setting``: the text read as its kind, then checked against its
    bounds, length and pattern."""
    read = READERS[setting.kind]

    def reader(text: str) -> Any:
        try:
            value = read(text)
        except (ValueError, InvalidOperation) as error:
            raise ArgumentTypeError(f"{text!r} is not {_a(setting.kind)}") from error
        _check(setting, value)
        return value

    reader.__name__ = str(setting.kind)
    return reader


def _check(setting: Setting, value: Any) -> None:
    if setting.minimum is not None and value < setting.minimum:
        raise ArgumentTypeError(f"{value} is below {setting.minimum}, the least allowed")
    if setting.maximum is not None and value > setting.maximum:
        raise ArgumentTypeError(f"{value} is above {setting.maximum}, the most allowed")
    if setting.max_length is not None and len(value) > setting.max_length:
        raise ArgumentTypeError(f"longer than {setting.max_length} characters")
    if setting.pattern and not re.match(setting.pattern, value):
        raise ArgumentTypeError(f"{value!r}: {setting.pattern_message}")
    if setting.kind == Kind.URL and value:
        # The check the page's URLField and the API's make.
        try:
            URLValidator()(value)
        except ValidationError as error:
            raise ArgumentTypeError(f"{value!r} is not a URL") from error


def _with_default(words: str, default: Any) -> str:
    """ "Makes it reproducible (default: 0)." from "Makes it reproducible." """
    stop = "." if words.endswith(".") else ""
    return f"{words.removesuffix('.')} (default: {default}){stop}".strip()


def _flag(setting: Setting) -> str:
    return "--" + setting.name.replace("_", "-")


def _a(kind: Kind) -> str:
    return {Kind.INTEGER: "a whole number", Kind.DECIMAL: "an amount"}.get(kind, "a number")


def _escaped(words: str) -> str:
    """argparse formats help with ``%``: a share such as "95%" must not read as a directive."""
    return words.replace("%", "%%")
