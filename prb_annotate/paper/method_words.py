"""How the paper names each statistical method, and the works it cites for it.

Every interval and test the paper prints carries the name of the method that computed it (an
interval's ``method``, an accuracy's or a correlation's ``interval``, a table's tests); the
methods paragraph words exactly those, through :data:`METHODS`, so that a reader who does what
the text says gets the printed numbers. A new method needs one entry here; a method without one
stops the paper with an error naming it, rather than being described as something else.

The phrases are distinct enough to be found again in the paragraph (:func:`named_in`): plain
Wilson and the continuity-corrected Wilson interval are named apart.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from prb_annotate.audit.intervals import METHOD_PHRASES


@dataclass(frozen=True)
class MethodWords:
    """``phrase`` fits after "a 95%" for an interval ("Wilson score interval ...") and stands
    alone for a test; ``cites`` are keys of ``references.ENTRIES``."""

    phrase: str
    cites: tuple[str, ...]
    kind: str = "interval"  # or "test"


METHODS: Mapping[str, MethodWords] = {
    # Agreement coefficients (audit/intervals.py).
    "bayesian_prior": MethodWords(METHOD_PHRASES["bayesian_prior"], ("rubin1981",)),
    "bayesian": MethodWords(METHOD_PHRASES["bayesian"], ("rubin1981",)),
    "percentile": MethodWords(METHOD_PHRASES["percentile"], ("efron1979",)),
    "bca": MethodWords(METHOD_PHRASES["bca"], ("efron1987",)),
    # Shares and accuracies.
    "wilson": MethodWords("plain Wilson score interval", ("wilson1927",)),
    "wilson_cc": MethodWords(
        "continuity-corrected Wilson score interval", ("wilson1927", "newcombe1998")
    ),
    "wilson_fpc": MethodWords(
        "plain Wilson score interval at the sample's effective size under the "
        "finite-population correction",
        ("wilson1927", "cochran1977"),
    ),
    "wilson_cc_fpc": MethodWords(
        "continuity-corrected Wilson score interval at the sample's effective size under the "
        "finite-population correction",
        ("wilson1927", "newcombe1998", "cochran1977"),
    ),
    "ppi_wilson_cc": MethodWords(
        "prediction-powered interval (PPI++ with a power-tuned weight, read as a "
        "continuity-corrected Wilson interval at its effective size)",
        ("angelopoulos2023", "angelopoulos2024"),
    ),
    "recalibrated_ppi_wilson_cc": MethodWords(
        "prediction-powered interval on the model's probabilities, recalibrated on the sample "
        "by a weighted logistic fit (a difference estimator, read as a continuity-corrected "
        "Wilson interval at its effective size)",
        ("angelopoulos2024", "ji2025", "platt1999"),
    ),
    "active_ppi_wilson_cc": MethodWords(
        "active prediction-powered interval (humans drawn with probabilities rising with the "
        "model's uncertainty, inverse-probability weighted, on its recalibrated probabilities)",
        ("zrnic2024", "ji2025", "platt1999"),
    ),
    # A share over every pair (audit/sampling.census): exact, so no interval is printed.
    "census": MethodWords("a census of every pair, exact and without an interval", (), "census"),
    # Mean ratings (paper/human.py).
    "t_mean": MethodWords("Student's t interval for a mean over answers", ("student1908",)),
    # Correlations (evaluation/correlation.py).
    "fisher": MethodWords("Fisher z-transformation interval", ("fisher1921",)),
    "bootstrap": MethodWords("percentile bootstrap interval over models", ("efron1979",)),
    # Tests.
    "binomial": MethodWords("two-sided exact binomial test against one half", (), "test"),
    "mcnemar_exact": MethodWords("exact McNemar test", ("mcnemar1947",), "test"),
    "holm": MethodWords("Holm's step-down adjustment", ("holm1979",), "test"),
}


class UnknownMethod(KeyError):
    """A printed number computed by a method the paper has no words for."""


def words(method: str) -> MethodWords:
    try:
        return METHODS[method]
    except KeyError:
        raise UnknownMethod(
            f"no words for the method {method!r}: add it to paper/method_words.METHODS"
        ) from None


def named_in(text: str) -> list[str]:
    """The methods whose phrase ``text`` contains, longest phrase first so that a phrase
    inside a longer one ("plain Wilson score interval" in "... under the finite-population
    correction") is not counted twice."""
    found = []
    for method, entry in sorted(METHODS.items(), key=lambda item: -len(item[1].phrase)):
        if entry.phrase in text:
            found.append(method)
            text = text.replace(entry.phrase, " ")
    return sorted(found)


def ordered(methods: Iterable[str]) -> list[str]:
    """``methods`` without repeats, in first-seen order."""
    return list(dict.fromkeys(methods))
