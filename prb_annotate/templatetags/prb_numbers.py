from django import template

register = template.Library()


@register.filter
def percent(value: float | None, digits: int = 1) -> str:
    """``0.7594`` → ``75.9%``; "-" for a missing value (accuracy with no decided pair)."""
    if value is None or value == "":
        return "-"
    return f"{100 * float(value):.{digits}f}%"
