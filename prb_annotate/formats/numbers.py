"""Number formats shared by the pages (through template filters) and the commands' output."""

from collections.abc import Mapping
from typing import Any

from evaluation.levels import level_percent


def percent(value: float | str | None, digits: int = 1) -> str:
    """``0.7594`` → ``75.9%``; "-" for a missing value (accuracy with no decided pair)."""
    if value is None or value == "":
        return "-"
    return f"{100 * float(value):.{digits}f}%"


def level(confidence: float | str | None) -> str:
    """A confidence level as given: ``0.975`` → ``97.5%``, ``0.999`` → ``99.9%`` (never rounded
    to "100%"), as the commands write it."""
    if confidence is None or confidence == "":
        return "-"
    return level_percent(float(confidence))


def share(entry: Mapping[str, Any]) -> str:
    """A share with its interval and its counts, ``78.2% [74.1%, 81.9%] (412/527)``; a share
    of nothing (no interval either) as ``— (0/0)``."""
    if entry.get("share") is None:
        return "— (0/0)"
    return (
        f"{percent(entry['share'])} [{percent(entry['ci_low'])}, {percent(entry['ci_high'])}] "
        f"({entry['count']}/{entry['total']})"
    )


def points(value: float | str | None, digits: int = 1) -> str:
    """A difference of two shares in percentage points, signed: ``-0.034`` → ``-3.4 pts``."""
    if value is None or value == "":
        return "-"
    return f"{100 * float(value):+.{digits}f} pts"


def significant(value: float | str | None, digits: int = 3) -> str:
    """A number to ``digits`` significant digits, however small: ``1.2e-07``, ``0.0735``."""
    if value is None or value == "":
        return "-"
    return f"{float(value):.{digits}g}"


def byte_size(size: int) -> str:
    """``52428800`` → ``50 MiB``; sizes under a KiB in bytes."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"
