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


def test_it_counts_disagreeing_pairs_and_ratings_a_pair_by_hand() -> None:
    """Units (chosen, rejected, tie): (3,0,0) x 2, (2,1,0), (1,1,0), (0,0,2), (1,0,0) rated
    once. Two of the five pairs rated twice disagree; three ratings is the usual number."""
    counts = np.array([[3, 0, 0], [3, 0, 0], [2, 1, 0], [1, 1, 0], [0, 0, 2], [1, 0, 0]])
    patterns, sizes = agreement.count_patterns(counts)
    evidence = intervals.Evidence.of(patterns, sizes)
    assert evidence == intervals.Evidence(units=5, disagreeing=2, raters=3)


def test_an_audit_without_a_single_disagreement_says_so_in_words() -> None:
    """30 pairs, 3 annotators each, all "chosen": alpha is undefined, AC1 is 1 and its
    interval is marked unreliable with the plain reason, whatever the prior's draws show."""
    prepared = agreement.AgreementData.from_data(np.zeros((3, 30)), [0, 1, 2])
    ac1 = prepared.estimate("gwet", agreement.Bootstrap(300, 1))
    assert ac1.value == 1.0
    assert ac1.reliable is False
    assert ac1.reason == (
        "no two annotators disagreed on any of the 30 pairs rated twice or more: agreement may "
        "be perfect, but these pairs cannot show how much lower it could be"
    )
    assert prepared.estimate("alpha", agreement.Bootstrap(300, 1)).value is None


def test_it_says_which_need_an_interval_misses() -> None:
    """The reason names the pairs with a disagreement and what the coefficient needs, both
    rendered from ``intervals.NEEDS``."""
    split, units = intervals.NEEDS["gwet", 3]
    reliable, reason = intervals.reliability(
        "gwet", intervals.Evidence(units=max(units, 10) - 1, disagreeing=split, raters=3)
    )
    assert not reliable
    assert reason.startswith("too few pairs rated twice to trust the interval: ")
    assert f"{split} of the {max(units, 10) - 1} pairs rated twice or more" in reason
    such = "pair" if split == 1 else "pairs"
    needs = f"at least {split} {such} with a disagreement and {units} pairs with 3 ratings a pair"
    assert needs in reason
    reliable, reason = intervals.reliability(
        "gwet", intervals.Evidence(units=units, disagreeing=split, raters=4)
    )
    assert reliable
    assert reason == (
        f"{split} of the {units} pairs rated twice or more hold a disagreement; AC1, AC2 and "
        f"% agreement need {needs}"
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
    assert new.reason.startswith("no two annotators disagreed on any of the 20 pairs")

    shown = new.as_dict()
    assert report.estimate(shown) == "1.000 (unreliable)"
    assert report.interval_note(shown) == f"unreliable: {new.reason}"


def mixed_audit(pairs: int, seed: int) -> agreement.AgreementData:
    rng = np.random.default_rng(seed)
    data = agreement_coverage.simulate(pairs, 0.85, agreement_coverage.POOLS["mixed"], 3, rng)
    return agreement.AgreementData.from_data(data, agreement_coverage.DOMAIN)


def test_a_large_clean_sample_gives_a_reliable_interval_with_every_method() -> None:
    prepared = mixed_audit(200, 3)
    for method in intervals.METHODS:
        estimate = prepared.estimate("gwet", agreement.Bootstrap(400, 0, method))
        assert estimate.reliable is True, method
        assert estimate.method == method
        assert estimate.value is not None
        assert estimate.ci_low is not None
        assert estimate.ci_high is not None
        assert estimate.ci_low < estimate.value < estimate.ci_high


def test_a_reliable_ac1_interval_is_the_draws_shifted_onto_the_estimate() -> None:
    """The same Dirichlet draws as the uncentred interval, moved by the estimate minus their
    median and capped at 1: worked out here from ``intervals``' own pieces."""
    prepared = mixed_audit(100, 5)
    patterns, sizes = agreement.count_patterns(prepared.counts)
    statistic = prepared.statistic("gwet", {"weights": "identity"})
    drawn, shapes = intervals.with_prior_patterns(patterns, sizes)
    weights = intervals.dirichlet_weights(shapes, float(sizes.sum()), 400, np.random.default_rng(7))
    samples = statistic(drawn, weights)
    point = float(statistic(patterns, sizes[None, :].astype(np.float64))[0])
    shifted = np.minimum(samples + point - np.median(samples), 1.0)

    centred = prepared.estimate("gwet", agreement.Bootstrap(400, 7))
    before = prepared.estimate("gwet", agreement.Bootstrap(400, 7, centring=False))
    assert centred.reliable is True
    assert centred.centred is True
    assert (centred.ci_low, centred.ci_high) == pytest.approx(
        tuple(np.quantile(shifted, [0.025, 0.975]))
    )
    assert before.centred is False
    assert (before.ci_low, before.ci_high) == pytest.approx(
        (min(np.quantile(samples, 0.025), point), max(np.quantile(samples, 0.975), point))
    )
    # Alpha's interval keeps the prior's pull (docs/statistics.md says why).
    alpha = prepared.estimate("alpha", agreement.Bootstrap(400, 7), level="nominal")
    assert alpha.centred is False


def test_dirichlet_weights_keep_the_number_of_units() -> None:
    rng = np.random.default_rng(0)
    weights = intervals.dirichlet_weights(np.array([3.0, 0.0, 2.5]), 5.0, 100, rng)
    assert weights.sum(axis=1) == pytest.approx(np.full(100, 5.0))
    assert (weights[:, 1] == 0).all()


def coverage(bootstrap: agreement.Bootstrap, replicates: int, truth: float) -> float:
    rng = np.random.default_rng(99)
    errors = agreement_coverage.POOLS["mixed"]
    hits = 0
    for replicate in range(replicates):
        data = agreement_coverage.simulate(30, 0.95, errors, 3, rng)
        prepared = agreement.AgreementData.from_data(data, agreement_coverage.DOMAIN)
        found = prepared.estimate(
            "alpha",
            agreement.Bootstrap(300, replicate, bootstrap.method),
            level="nominal",
        )
        hits += agreement_coverage.holds(found, truth)
    return hits / replicates


def test_the_default_interval_covers_alpha_at_30_pairs_and_prevalence_095() -> None:
    """Eight careful annotators and two noisy ones, 30 pairs, 95 % of them "chosen": the unit
    bootstrap's percentile interval covers the true alpha about 75 % of the time, the
    default one about 94 % (docs/statistics.md). With 150 replicates the standard error of a
    coverage near 0.94 is 0.02: the bound 0.88 is three of them below, and the percentile
    interval, measured on the same audits, stays well under it."""
    truth = agreement_coverage.true_values(0.95, agreement_coverage.POOLS["mixed"], 3)["alpha"]
    default = coverage(agreement.Bootstrap(), 150, truth)
    percentile = coverage(agreement.Bootstrap(method="percentile"), 150, truth)
    assert default >= 0.88
    assert percentile <= default - 0.08


def test_it_explains_a_strong_disagreement_of_alpha_and_ac1_in_one_sentence() -> None:
    from prb_annotate.audit.questions import prevalence_paradox

    apart = [{"key": "alpha_nominal", "value": 0.21}, {"key": "ac1", "value": 0.86}]
    sentence = prevalence_paradox(apart, "nominal", 0.93, values=3)
    assert sentence is not None
    assert sentence.startswith("Alpha (0.21) and AC1 (0.86) disagree because one answer makes")
    assert "93% of the ratings" in sentence
    assert sentence.endswith("(the prevalence paradox).")
    assert sentence.count(". ") == 0  # one sentence
    close = [{"key": "alpha_ordinal", "value": 0.6}, {"key": "ac2_ordinal", "value": 0.8}]
    assert prevalence_paradox(close, "ordinal", 0.7, values=5) is None
    assert prevalence_paradox([{"key": "ac1", "value": 1.0}], "nominal", 1.0, values=3) is None
