"""Agreement intervals: when they can be trusted, worked examples, and a cheap coverage check
(``bench/agreement_coverage.py`` prints the full table that docs/statistics.md quotes)."""

import numpy as np
import pytest

from bench import agreement_coverage
from prb_annotate.audit import agreement, intervals, report

nan = np.nan


def unanimous_audit() -> np.ndarray:
    """20 pairs, 3 annotators each: 19 all "chosen" (code 0), one all "tie" (code 2)."""
    data = np.zeros((3, 20))
    data[:, 19] = 2
    return data


def test_it_counts_patterns_prevalence_and_pairable_units_by_hand() -> None:
    """Units (counts of chosen, rejected, tie): (3,0,0) x 2, (2,1,0), (1,0,0) rated once. The
    pairable ratings are 3 + 3 + 3 = 9, of which 8 are "chosen": prevalence 8/9."""
    counts = np.array([[3, 0, 0], [3, 0, 0], [2, 1, 0], [1, 0, 0]])
    patterns, sizes = agreement.count_patterns(counts)
    assert sorted(zip(map(tuple, patterns), sizes, strict=True)) == [
        ((1, 0, 0), 1),
        ((2, 1, 0), 1),
        ((3, 0, 0), 2),
    ]
    assert intervals.pairable_units(patterns, sizes) == 3
    assert intervals.prevalence(patterns, sizes) == pytest.approx(8 / 9)


def test_every_pattern_of_three_ratings_over_three_values() -> None:
    """C(3 + 3 - 1, 3) = 10 ways, each summing to 3."""
    patterns = intervals.all_patterns(3, 3)
    assert len(patterns) == 10
    assert len({tuple(row) for row in patterns}) == 10
    assert (patterns.sum(axis=1) == 3).all()


def test_it_says_why_an_interval_is_unreliable() -> None:
    reliable, reason = intervals.reliability(24, 0.97, 0.38)
    assert not reliable
    assert reason == (
        "fewer than 30 pairs; prevalence above 0.95; more than 20% of resamples without "
        "disagreement or undefined (n = 24 pairs rated twice, prevalence 0.97, 38% of "
        "resamples degenerate)"
    )
    assert intervals.reliability(30, 0.95, 0.2) == (
        True,
        "n = 30 pairs rated twice, prevalence 0.95, 20% of resamples degenerate",
    )


def test_unanimous_pairs_no_longer_give_the_interval_one_to_one() -> None:
    """The audit that printed alpha 1.0 [1.0, 1.0]: every resample of the unit bootstrap is 1 or
    undefined. The default interval has resamples with disagreement (the prior), reaches
    below 1, and is marked unreliable with its reason; the page shows that reason."""
    prepared = agreement.AgreementData.from_data(unanimous_audit(), [0, 1, 2])
    old = prepared.estimate("alpha", agreement.Bootstrap(500, 1, "percentile"), level="nominal")
    assert (old.value, old.ci_low, old.ci_high) == (1.0, 1.0, 1.0)
    assert old.reliable is False  # even the old method now says so

    new = prepared.estimate("alpha", agreement.Bootstrap(500, 1), level="nominal")
    assert new.value == 1.0
    assert new.method == "bayesian_prior"
    assert new.ci_low is not None
    assert new.ci_low < 0.9
    assert new.reliable is False
    assert new.reason.startswith("fewer than 30 pairs")
    assert "n = 20 pairs rated twice, prevalence 0.95" in new.reason

    shown = new.as_dict()
    assert report.estimate(shown) == "1.000 (unreliable)"
    assert report.interval_note(shown) == f"unreliable: {new.reason}"


def test_a_large_clean_sample_gives_a_reliable_interval_with_every_method() -> None:
    rng = np.random.default_rng(3)
    data = agreement_coverage.simulate(200, 0.85, 2, rng)
    prepared = agreement.AgreementData.from_data(data, agreement_coverage.DOMAIN)
    for method in intervals.METHODS:
        estimate = prepared.estimate("gwet", agreement.Bootstrap(400, 0, method))
        assert estimate.reliable is True, method
        assert estimate.method == method
        assert estimate.value is not None
        assert estimate.ci_low is not None
        assert estimate.ci_high is not None
        assert estimate.ci_low < estimate.value < estimate.ci_high


def test_dirichlet_weights_keep_the_number_of_units() -> None:
    rng = np.random.default_rng(0)
    weights = intervals.dirichlet_weights(np.array([3.0, 0.0, 2.5]), 5.0, 100, rng)
    assert weights.sum(axis=1) == pytest.approx(np.full(100, 5.0))
    assert (weights[:, 1] == 0).all()


def coverage(method: intervals.Method, replicates: int, truth: float) -> float:
    rng = np.random.default_rng(99)
    hits = 0
    for replicate in range(replicates):
        data = agreement_coverage.simulate(30, 0.95, 2, rng)
        prepared = agreement.AgreementData.from_data(data, agreement_coverage.DOMAIN)
        found = prepared.estimate(
            "alpha", agreement.Bootstrap(300, replicate, method), level="nominal"
        )
        hits += (
            found.ci_low is not None
            and found.ci_high is not None
            and (found.ci_low <= truth <= found.ci_high)
        )
    return hits / replicates


def test_the_default_interval_covers_alpha_at_30_pairs_and_prevalence_095() -> None:
    """Eight careful annotators and two noisy ones, 30 pairs, 95 % of them "chosen": the unit
    bootstrap's percentile interval covers the true alpha about 75 % of the time, the
    default one about 94 % (docs/statistics.md). With 150 replicates the standard error of a
    coverage near 0.94 is 0.02: the bound 0.88 is three of them below, and the percentile
    interval, measured on the same audits, stays well under it."""
    truth = agreement_coverage.true_values(0.95, 2)["alpha"]
    default = coverage(intervals.DEFAULT_METHOD, 150, truth)
    percentile = coverage("percentile", 150, truth)
    assert default >= 0.88
    assert percentile <= default - 0.08


def test_it_explains_a_strong_disagreement_of_alpha_and_ac1_in_one_sentence() -> None:
    from prb_annotate.audit.questions import prevalence_paradox

    apart = [{"key": "alpha_nominal", "value": 0.21}, {"key": "ac1", "value": 0.86}]
    sentence = prevalence_paradox(apart, "nominal", 0.93)
    assert sentence is not None
    assert sentence.startswith("Alpha (0.21) and AC1 (0.86) disagree because one answer makes")
    assert "93% of the ratings" in sentence
    assert sentence.endswith("(the prevalence paradox).")
    assert sentence.count(". ") == 0  # one sentence
    close = [{"key": "alpha_ordinal", "value": 0.6}, {"key": "ac2_ordinal", "value": 0.8}]
    assert prevalence_paradox(close, "ordinal", 0.7) is None
    assert prevalence_paradox([{"key": "ac1", "value": 1.0}], "nominal", 1.0) is None
