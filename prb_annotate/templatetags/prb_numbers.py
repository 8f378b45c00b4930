from django import template

from prb_annotate.formats import numbers

register = template.Library()


@register.filter
def percent(value: float | str | None, digits: int = 1) -> str:
    """``0.7594`` → ``75.9%``; "-" for a missing value (accuracy with no decided pair)."""
    return numbers.percent(value, digits)


@register.filter
def level(value: float | str | None) -> str:
    """``0.975`` → ``97.5%``: a confidence level, written as exactly as it was set."""
    return numbers.level(value)


@register.filter
def points(value: float | str | None, digits: int = 1) -> str:
    """``-0.034`` → ``-3.4 pts``: a difference of accuracies."""
    return numbers.points(value, digits)


@register.filter
def significant(value: float | str | None, digits: int = 3) -> str:
    """``1.234e-07`` → ``1.23e-07``: a figure that may be tiny (a self-check's largest gap)."""
    return numbers.significant(value, digits)
