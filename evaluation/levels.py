"""How a confidence level is written, by the commands and the app alike: as it was set, so that
the level named is the level computed (97.5%, never "98%"; 99.9%, never "100%")."""

from decimal import Decimal


def level_percent(confidence: float) -> str:
    """A confidence level as a percentage, written as exactly as it was given: every table,
    headline and caption that names a level writes it with this.

    >>> [level_percent(value) for value in (0.95, 0.975, 0.999, 0.5)]
    ['95%', '97.5%', '99.9%', '50%']
    """
    # The shortest text of the float, scaled in decimal: 100 * 0.999 in binary is 99.89999...
    percent = Decimal(str(float(confidence))) * 100
    return f"{percent.normalize():f}%"
