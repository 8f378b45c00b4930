"""Dawid & Skene (1979): each annotator's confusion matrix and each unit's true class by EM.

Pure functions over annotators x units code arrays (the shapes of ``agreement``); the audit
compares its labels with the plain majority (``annotators.dawid_skene_summary``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse

from prb_annotate.audit.agreement import FloatArray, IntArray, as_data, value_counts


@dataclass(frozen=True)
class DawidSkene:
    """Result of the Dawid-Skene EM.

    ``posterior``: units x classes, P(true class | answers). ``confusion``: annotators x true
    class x answered class. ``priors``: class prevalence.
    """

    posterior: FloatArray
    confusion: FloatArray
    priors: FloatArray
    log_likelihood: float
    iterations: int
    converged: bool

    def labels(self) -> IntArray:
        """Most probable class per unit (ties go to the lower code)."""
        return self.posterior.argmax(axis=1).astype(np.int64)

    def annotator_accuracy(self) -> FloatArray:
        """Each annotator's expected accuracy: sum over classes of prior x P(correct)."""
        diagonal = np.diagonal(self.confusion, axis1=1, axis2=2)
        return diagonal @ self.priors


def dawid_skene(
    codes: npt.ArrayLike,
    n_classes: int,
    *,
    max_iterations: int = 100,
    tolerance: float = 1e-6,
    smoothing: float = 0.01,
) -> DawidSkene:
    """Dawid & Skene (1979) EM for categorical answers; ``codes`` is annotators x units.

    No maintained library fits our pins, so this is the small textbook EM: start from the vote
    shares, alternate confusion matrices (M step, with a little additive smoothing so that an
    answer never seen is not impossible) and class posteriors (E step) until the
    log-likelihood stops improving. Deterministic: no random start.
    """
    array = as_data(codes)
    n_annotators, n_units = array.shape
    annotators, units = np.nonzero(~np.isnan(array))
    answers = array[annotators, units].astype(np.int64)
    if len(answers) and (answers.min() < 0 or answers.max() >= n_classes):
        raise ValueError("codes must be integers in [0, n_classes)")
    votes = np.zeros((n_units, n_classes))
    np.add.at(votes, (units, answers), 1.0)
    rated = votes.sum(axis=1) > 0
    posterior = np.full((n_units, n_classes), 1.0 / n_classes)
    posterior[rated] = votes[rated] / votes[rated].sum(axis=1, keepdims=True)

    # Sparse sums over ratings: per (annotator, answer) for the M step, per unit for the E step.
    ones = np.ones(len(answers))
    by_annotator_answer = sparse.csr_matrix(
        (ones, (annotators * n_classes + answers, np.arange(len(answers)))),
        shape=(n_annotators * n_classes, len(answers)),
    )
    by_unit = sparse.csr_matrix(
        (ones, (units, np.arange(len(answers)))), shape=(n_units, len(answers))
    )

    previous = -math.inf
    log_likelihood = -math.inf
    confusion = np.full((n_annotators, n_classes, n_classes), 1.0 / n_classes)
    priors = np.full(n_classes, 1.0 / n_classes)
    converged = False
    iteration = 0
    for iteration in range(1, max_iterations + 1):  # noqa: B007 - reported afterwards
        # M step: priors and confusion matrices from the current posteriors.
        if rated.any():
            priors = posterior[rated].mean(axis=0)
        priors = np.clip(priors, 1e-12, None)
        priors = priors / priors.sum()
        counts = (by_annotator_answer @ posterior[units]).reshape(
            n_annotators, n_classes, n_classes
        )  # annotator x answer x true class
        confusion = counts.transpose(0, 2, 1) + smoothing
        confusion /= confusion.sum(axis=2, keepdims=True)
        # E step: log P(true class) + sum of log P(answer | true class) over each unit's answers.
        contributions = np.log(confusion)[annotators, :, answers]  # ratings x classes
        log_joint = np.log(priors) + by_unit @ contributions
        top = log_joint.max(axis=1, keepdims=True)
        normaliser = top[:, 0] + np.log(np.exp(log_joint - top).sum(axis=1))
        posterior = np.exp(log_joint - normaliser[:, None])
        log_likelihood = float(normaliser[rated].sum())
        if abs(log_likelihood - previous) <= tolerance * max(1.0, abs(log_likelihood)):
            converged = True
            break
        previous = log_likelihood
    return DawidSkene(posterior, confusion, priors, log_likelihood, iteration, converged)


def majority_codes(codes: npt.ArrayLike, n_classes: int) -> FloatArray:
    """Per unit, the unique most frequent code; NaN for ties and unrated units."""
    array = as_data(codes)
    counts = value_counts(array, np.arange(n_classes))
    top = counts.max(axis=1)
    unique = (counts == top[:, None]).sum(axis=1) == 1
    return np.where(unique & (top > 0), counts.argmax(axis=1), np.nan)


def encode(labels: Sequence[Sequence[Any]], domain: Sequence[Any]) -> FloatArray:
    """Annotators x units of labels (None for missing) as float codes into ``domain``."""
    index = {value: code for code, value in enumerate(domain)}
    return np.array(
        [[np.nan if label is None else index[label] for label in row] for row in labels],
        dtype=np.float64,
    )
