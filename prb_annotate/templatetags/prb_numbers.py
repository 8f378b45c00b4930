from django import template

from prb_annotate import formatting

register = template.Library()


@register.filter
def percent(value: float | str | None, digits: int = 1) -> str:
    """``0.7594`` → ``75.9%``; "-" for a missing value (accuracy with no decided pair)."""
    return formatting.percent(value, digits)
