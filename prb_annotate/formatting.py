"""Number formats shared by the pages (through template filters) and the commands' output."""


def percent(value: float | str | None, digits: int = 1) -> str:
    """``0.7594`` → ``75.9%``; "-" for a missing value (accuracy with no decided pair)."""
    if value is None or value == "":
        return "-"
    return f"{100 * float(value):.{digits}f}%"
