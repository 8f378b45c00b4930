"""The question set, and agreement per question.

The two choices (rubric fit, main difference) are nominal questions and every quality rating
an ordinal one; each gets Krippendorff's alpha, Gwet's AC1/AC2, Fleiss' kappa and percent
agreement with unit-level bootstrap intervals (``agreement``), and Cohen's kappa between every
two annotators.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from prb_annotate.audit import agreement, intervals
from prb_annotate.audit.phrases import Phrase
from prb_annotate.audit.rule import DIFFERENTIATOR, RUBRIC_FIT, SIDES, Thresholds, quality_column
from prb_annotate.audit.words import gettext_noop


@dataclass(frozen=True)
class Question:
    name: str
    label: str
    column: str
    kind: str  # "nominal" or "ordinal"
    domain: tuple[Any, ...]


NOMINAL_QUESTIONS = (
    Question(
        "rubric_fit",
        gettext_noop("Rubric fit (chosen / rejected / tie)"),
        "rubric_fit",
        "nominal",
        RUBRIC_FIT,
    ),
    Question(
        "differentiator",
        gettext_noop("Main difference"),
        "differentiator",
        "nominal",
        DIFFERENTIATOR,
    ),
)
# A quality rating's question, per side (the criterion is the campaign's own word).
RATING_LABELS = {
    "chosen": Phrase(gettext_noop("Chosen answer: %(criterion)s")),
    "rejected": Phrase(gettext_noop("Rejected answer: %(criterion)s")),
}


def questions(thresholds: Thresholds) -> list[Question]:
    """The two choices (nominal), then every quality rating (ordinal), in page order."""
    found = list(NOMINAL_QUESTIONS)
    for side in SIDES:
        for criterion in thresholds.quality_criteria:
            column = quality_column(side, criterion)
            found.append(
                Question(
                    column,
                    RATING_LABELS[side](criterion=criterion),
                    column,
                    "ordinal",
                    tuple(thresholds.rating_domain()),
                )
            )
    return found


# (key, label, coefficient, options) for each kind of question.
COEFFICIENTS: dict[str, list[tuple[str, str, agreement.Coefficient, dict[str, Any]]]] = {
    "nominal": [
        (
            "alpha_nominal",
            gettext_noop("Krippendorff's alpha (nominal)"),
            "alpha",
            {"level": "nominal"},
        ),
        ("ac1", gettext_noop("Gwet's AC1"), "gwet", {"weights": "identity"}),
        ("fleiss_kappa", gettext_noop("Fleiss' kappa"), "fleiss_kappa", {}),
        ("percent_agreement", gettext_noop("Percent agreement"), "percent_agreement", {}),
    ],
    "ordinal": [
        (
            "alpha_ordinal",
            gettext_noop("Krippendorff's alpha (ordinal)"),
            "alpha",
            {"level": "ordinal"},
        ),
        (
            "alpha_interval",
            gettext_noop("Krippendorff's alpha (interval)"),
            "alpha",
            {"level": "interval"},
        ),
        (
            "ac2_ordinal",
            gettext_noop("Gwet's AC2 (ordinal weights)"),
            "gwet",
            {"weights": "ordinal"},
        ),
        ("fleiss_kappa", gettext_noop("Fleiss' kappa (unweighted)"), "fleiss_kappa", {}),
        ("percent_agreement", gettext_noop("Percent agreement (exact)"), "percent_agreement", {}),
    ],
}
# Cohen's kappa between annotators: unweighted for choices, quadratic weights for ratings.
PAIRWISE_WEIGHTS: dict[str, agreement.WeightKind] = {"nominal": "identity", "ordinal": "quadratic"}


# (alpha key, Gwet key) compared per kind of question, and how far apart they must be for the
# page to explain it: a gap of 0.3 on a scale whose useful range is 0 to 1 changes the reading
# of the coefficient (Krippendorff's 0.667 and 0.800 marks are 0.13 apart).
PARADOX_PAIRS = {"nominal": ("alpha_nominal", "ac1"), "ordinal": ("alpha_ordinal", "ac2_ordinal")}
PARADOX_GAP = 0.3
PARADOX = Phrase(
    gettext_noop(
        "Alpha (%(alpha)s) and %(name)s (%(gwet)s) disagree because one answer makes up "
        "%(share)s of the ratings: the more one answer dominates, the more agreement alpha "
        "expects by chance and the less %(name)s does, so the same disagreements cost alpha far "
        "more (the prevalence paradox)."
    )
)
# A gap between alpha and AC2 where no answer dominates: AC2's ordinal weights, not
# prevalence. Nominal questions have no such weights, and a gap there without a dominant
# answer gets no sentence (none that the figures would prove).
NEAR_MISSES = Phrase(
    gettext_noop(
        "Alpha (%(alpha)s) and AC2 (%(gwet)s) disagree although no answer dominates (the most "
        "common makes up %(share)s of the ratings): AC2's ordinal weights count a near miss, "
        "such as a 4 against a 5, as nearly an agreement and measure chance over the whole "
        "scale, while alpha compares the disagreements with those the ratings given would show "
        "by chance, and ratings that crowd into neighbouring values make near misses what "
        "chance predicts."
    )
)


def dominant_share(values: int) -> float:
    """The share from which one answer dominates the ``values`` a question can take: halfway
    from the uniform share 1/K to all ratings on one answer, (K + 1) / (2K) (0.75 of two
    answers, 0.67 of three, 0.6 of five).

    Why halfway: at the uniform share the chance agreement alpha expects (about the sum of
    the shares squared) and Gwet's (the shares' spread, sum p (1 - p) / (K - 1)) are equal,
    1/K, so prevalence cannot be what sets the coefficients apart; they part as one answer
    grows. With the most common answer halfway to all the ratings and the rest even, alpha's
    is (K + 3) / 4K and Gwet's 3 / 4K: a quarter apart whatever K, the same distance for a
    choice of two answers as for a five-point scale, where "well above the uniform share"
    would otherwise mean a different thing per question (Feinstein & Cicchetti 1990; Gwet
    2008). Below it the answers are too evenly spread to call the gap a prevalence effect.
    """
    return (values + 1) / (2 * values)


def prevalence_paradox(
    coefficients: list[dict[str, Any]], kind: str, share: float | None, *, values: int
) -> str | None:
    """One sentence when alpha and Gwet's coefficient disagree strongly, or None.

    When one answer dominates (``share`` of the ratings, at least :func:`dominant_share` of
    the question's ``values`` answers), chance agreement as alpha computes it (from the
    answers' shares) is close to 1, so the few disagreements weigh heavily; Gwet's chance
    agreement shrinks as one answer dominates, so AC1/AC2 stays high: the prevalence paradox
    (Feinstein & Cicchetti 1990; Gwet 2008). Without a dominant answer the gap on a rating is
    AC2's ordinal weights crediting near misses (:data:`NEAR_MISSES`); on a choice, no
    sentence.
    """
    alpha_key, gwet_key = PARADOX_PAIRS[kind]
    by_key = {coefficient["key"]: coefficient.get("value") for coefficient in coefficients}
    alpha, gwet = by_key.get(alpha_key), by_key.get(gwet_key)
    if alpha is None or gwet is None or share is None or abs(gwet - alpha) < PARADOX_GAP:
        return None
    figures = {"alpha": f"{alpha:.2f}", "gwet": f"{gwet:.2f}", "share": f"{share:.0%}"}
    if share >= dominant_share(values):
        return PARADOX(name="AC1" if kind == "nominal" else "AC2", **figures)
    if kind == "ordinal":
        return NEAR_MISSES(**figures)
    return None


def ratings_matrix(
    rows: pd.DataFrame,
    question: Question,
    annotators: pd.Index,
    units: pd.Index,
) -> np.ndarray:
    """Annotators x units: codes into the question's domain (nominal) or the ratings."""
    matrix = np.full((len(annotators), len(units)), np.nan)
    if rows.empty:
        return matrix
    values = rows[question.column]
    if question.kind == "nominal":
        codes = pd.Categorical(values, categories=list(question.domain)).codes.astype(float)
        codes[codes < 0] = np.nan
        numbers = codes
    else:
        numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    matrix[annotators.get_indexer(rows["annotator"]), units.get_indexer(rows["pair_id"])] = numbers
    return matrix


def question_domain(question: Question) -> list[float]:
    if question.kind == "nominal":
        return [float(code) for code in range(len(question.domain))]
    return [float(value) for value in question.domain]


def agreement_by_question(
    counted: pd.DataFrame,
    thresholds: Thresholds,
    *,
    resamples: int = agreement.DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> list[dict[str, Any]]:
    """Every coefficient for every question, with unit-level bootstrap intervals.

    Units are the pairs with at least one counted annotation. Every question is bootstrapped
    over those units with the same seed; a question's coefficients share its resamples.
    """
    annotators = pd.Index(sorted(counted["annotator"].unique()))
    units = pd.Index(sorted(counted["pair_id"].unique()))
    bootstrap = agreement.Bootstrap(resamples, seed) if resamples else None
    results = []
    for question in questions(thresholds):
        matrix = ratings_matrix(counted, question, annotators, units)
        domain = question_domain(question)
        prepared = agreement.AgreementData.from_data(matrix, domain)
        wanted = COEFFICIENTS[question.kind]
        found = prepared.estimates(
            [(coefficient, options) for _, _, coefficient, options in wanted],
            bootstrap,
            confidence=confidence,
        )
        coefficients = [
            {"key": key, "label": label, **estimate.as_dict()}
            for (key, label, _, _), estimate in zip(wanted, found, strict=True)
        ]
        pairwise = agreement.pairwise_cohen_kappa(matrix, domain, PAIRWISE_WEIGHTS[question.kind])
        patterns, sizes = agreement.count_patterns(prepared.counts)
        share = intervals.prevalence(patterns, sizes)
        results.append(
            {
                "question": question.name,
                "label": question.label,
                "kind": question.kind,
                "units": int((~np.isnan(matrix)).any(axis=0).sum()),
                "units_rated_twice": int(((~np.isnan(matrix)).sum(axis=0) >= 2).sum()),
                "ratings": int((~np.isnan(matrix)).sum()),
                "coefficients": coefficients,
                "pairwise_kappa": _pairwise_rows(pairwise, annotators),
                "pairwise_weights": PAIRWISE_WEIGHTS[question.kind],
                "prevalence": share,
                "paradox": prevalence_paradox(
                    coefficients, question.kind, share, values=len(question.domain)
                ),
            }
        )
    return results


def _pairwise_rows(pairwise: agreement.PairwiseKappa, annotators: pd.Index) -> list[dict]:
    rows = []
    for a, b in zip(*np.triu_indices(len(annotators), k=1), strict=True):
        if pairwise.common_units[a, b] == 0:
            continue
        kappa = pairwise.kappa[a, b]
        rows.append(
            {
                "a": annotators[a],
                "b": annotators[b],
                "kappa": float(kappa) if math.isfinite(kappa) else None,
                "common_units": int(pairwise.common_units[a, b]),
            }
        )
    return rows
