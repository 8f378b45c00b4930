"""The one rounding rule of the paper's files, and the accessors that read intervals.

Every number a table, a caption or the methods paragraph prints goes through this module:

- shares and accuracies as percentages with one decimal (``0.7594`` -> ``75.9``);
- every other real number (coefficients, ratios, p-values) with three decimals, a p-value
  under 0.001 as ``<0.001``;
- durations in seconds with one decimal; counts, and settings that are whole numbers, as
  integers.

Rounding is half away from zero on the number's shortest decimal form (``0.0745`` -> ``0.075``,
as a reader rounding the printed JSON by hand would get), never on its binary expansion.

Intervals are read through :func:`interval_of` alone, so that a new field on an interval (how
it was computed, whether it is reliable) changes one function: an interval whose ``reliable``
is false prints as ``unreliable``.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from evaluation.levels import level_percent

DASH = "--"
UNRELIABLE = "unreliable"
REAL_DIGITS = 3
PERCENT_DIGITS = 1
SECONDS_DIGITS = 1
P_FLOOR = 0.001


def fixed(value: float, digits: int) -> str:
    """``value`` rounded half away from zero to ``digits`` decimals; never ``-0.000``."""
    quantum = Decimal(1).scaleb(-digits)
    rounded = Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP)
    if rounded == 0:
        rounded = abs(rounded)
    return f"{rounded:.{digits}f}"


def real(value: float | None) -> str:
    """A coefficient or a ratio: ``0.743``."""
    return DASH if value is None else fixed(value, REAL_DIGITS)


def percent(value: float | None) -> str:
    """A share as a percentage, without the sign (the column or the sentence says %)."""
    if value is None:
        return DASH
    return fixed(float(Decimal(repr(float(value))) * 100), PERCENT_DIGITS)


def p_value(value: float | None) -> str:
    if value is None:
        return DASH
    return f"<{fixed(P_FLOOR, REAL_DIGITS)}" if value < P_FLOOR else fixed(value, REAL_DIGITS)


def seconds(milliseconds: float | None) -> str:
    return DASH if milliseconds is None else fixed(milliseconds / 1000, SECONDS_DIGITS)


def count(value: int | None) -> str:
    return DASH if value is None else str(int(value))


def setting(value: float) -> str:
    """A campaign setting as it was set (a threshold of 4 is "4"); measured numbers use
    :func:`real`."""
    return str(int(value)) if float(value).is_integer() else real(value)


def confidence_level(confidence: float) -> str:
    """``0.95`` -> ``95``, ``0.975`` -> ``97.5``: the level names the intervals, as it was set
    (never rounded); it is not a measured share."""
    return level_percent(confidence).removesuffix("%")


@dataclass(frozen=True)
class Interval:
    """An interval as the tables need it: both bounds, or why there is none to print."""

    low: float | None
    high: float | None
    reliable: bool = True
    reason: str = ""

    @property
    def printable(self) -> bool:
        return self.reliable and self.low is not None and self.high is not None


def interval_of(entry: Mapping[str, Any]) -> Interval:
    """The interval of a coefficient, a share or an accuracy (``ci_low`` / ``ci_high``).

    ``reliable`` false (when the entry carries it) means the bounds are not to be trusted:
    they are kept out of print. A missing ``reliable`` reads as reliable.
    """
    reliable = entry.get("reliable")
    return Interval(
        low=entry.get("ci_low"),
        high=entry.get("ci_high"),
        reliable=reliable is not False,
        reason=str(entry.get("reason") or entry.get("note") or ""),
    )


def method_of(entry: Mapping[str, Any]) -> str | None:
    """How an entry's interval was computed: an accuracy's or a correlation's ``interval``
    (a correlation's ``method`` names its coefficient), else the interval's ``method``."""
    for key in ("interval", "method"):
        found = entry.get(key)
        if isinstance(found, str) and found:
            return found
    return None


def printed_interval(entry: Mapping[str, Any]) -> bool:
    """Whether :func:`estimate` prints ``entry`` with its bounds."""
    return value_of(entry) is not None and interval_of(entry).printable


def value_of(entry: Mapping[str, Any]) -> float | None:
    """The point estimate of a coefficient (``value``), a share (``share``) or a correlation
    (``coefficient``)."""
    for key in ("value", "share", "coefficient"):
        if key in entry:
            found = entry[key]
            return None if found is None else float(found)
    return None


def bounds(entry: Mapping[str, Any], show: Any = real) -> str:
    """``[0.612, 0.851]``, ``unreliable``, or a dash when there is no interval."""
    interval = interval_of(entry)
    if not interval.reliable:
        return UNRELIABLE
    if not interval.printable:
        return DASH
    return f"[{show(interval.low)}, {show(interval.high)}]"


def estimate(entry: Mapping[str, Any], show: Any = real) -> str:
    """A point estimate with its interval: ``0.743 [0.612, 0.851]``."""
    value = value_of(entry)
    if value is None:
        return DASH
    interval = bounds(entry, show)
    return show(value) if interval == DASH else f"{show(value)} {interval}"
