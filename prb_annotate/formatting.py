"""Number formats shared by the pages (through template filters) and the commands' output."""


def percent(value: float | str | None, digits: int = 1) -> str:
    """``0.7594`` → ``75.9%``; "-" for a missing value (accuracy with no decided pair)."""
    if value is None or value == "":
        return "-"
    return f"{100 * float(value):.{digits}f}%"


def byte_size(size: int) -> str:
    """``52428800`` → ``50 MiB``; sizes under a KiB in bytes."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"
