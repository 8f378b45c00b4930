"""Agreement coefficients against published worked examples, and their general properties."""

import math
from typing import Any

import krippendorff
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from prb_annotate.audit import agreement, dawid_skene

nan = math.nan

# Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. Annenberg School for
# Communication, University of Pennsylvania, section C: 4 observers x 12 units, missing values.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
# Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed., p. 120: 4 raters x 12
# subjects, categories 1-5. Same ratings as above except that unit 12's single rating is
# rater 3's; results as printed there (and by the irrCAC package's raw-data functions).
GWET_2014_P120 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, nan],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, 3],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
FIVE = [1, 2, 3, 4, 5]


def test_it_matches_krippendorff_2011_for_every_level():
    """Krippendorff (2011) reliability data: nominal 0.743, ordinal 0.815, interval 0.849."""
    expected: dict[agreement.Level, float] = {
        "nominal": 0.743,
        "ordinal": 0.815,
        "interval": 0.849,
        "ratio": 0.797,
    }
    for level, value in expected.items():
        assert agreement.krippendorff_alpha(KRIPPENDORFF_2011, level, FIVE) == pytest.approx(
            value, abs=5e-4
        )


def test_it_computes_the_same_alpha_vectorised_as_the_package():
    """The bootstrap's matrix form of alpha equals the krippendorff package's result."""
    counts = agreement.value_counts(KRIPPENDORFF_2011, FIVE)
    levels: tuple[agreement.Level, ...] = ("nominal", "ordinal", "interval", "ratio")
    for level in levels:
        ours = agreement.alpha_from_counts(counts, FIVE, level)[0]
        package = krippendorff.alpha(
            KRIPPENDORFF_2011, value_domain=FIVE, level_of_measurement=level
        )
        assert ours == pytest.approx(package, abs=1e-12)


def test_it_matches_gwet_2014_for_ac1_and_ac2():
    """Gwet (2014), p. 120 data: AC1 0.775 (pa 0.818, pe 0.190); AC2 ordinal 0.899,
    quadratic 0.914, linear 0.859."""
    assert agreement.percent_agreement(GWET_2014_P120, FIVE) == pytest.approx(0.818, abs=5e-4)
    assert agreement.gwet_ac1(GWET_2014_P120, FIVE) == pytest.approx(0.775, abs=5e-4)
    assert agreement.gwet_ac2(GWET_2014_P120, FIVE, "ordinal") == pytest.approx(0.899, abs=5e-4)
    assert agreement.gwet_ac2(GWET_2014_P120, FIVE, "quadratic") == pytest.approx(0.914, abs=5e-4)
    assert agreement.gwet_ac2(GWET_2014_P120, FIVE, "linear") == pytest.approx(0.859, abs=5e-4)


def test_it_matches_the_textbook_fleiss_kappa_example():
    """The worked example of the Wikipedia article "Fleiss' kappa" (10 subjects, 14 raters,
    5 categories): P-bar 0.378, P_e 0.213, kappa 0.210. statsmodels tests the same table."""
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert agreement.fleiss_kappa_from_table(table) == pytest.approx(0.210, abs=5e-4)


def test_it_refuses_fleiss_kappa_on_unequal_raters_but_the_estimate_restricts_and_says_so():
    """Fleiss needs equal raters: the plain function raises; the estimate keeps the units with
    the most common count and notes it."""
    with pytest.raises(ValueError, match="same number of raters"):
        agreement.fleiss_kappa(KRIPPENDORFF_2011, FIVE)
    prepared = agreement.AgreementData.from_data(KRIPPENDORFF_2011, FIVE)
    estimate = prepared.estimate("fleiss_kappa")
    complete = np.array(KRIPPENDORFF_2011)[:, ~np.isnan(KRIPPENDORFF_2011).any(axis=0)]
    assert estimate.value == pytest.approx(agreement.fleiss_kappa(complete, FIVE))
    assert "8 of 12 rated units" in estimate.note


def test_it_matches_published_cohen_kappa_examples():
    """Wikipedia "Cohen's kappa" example (20/5/10/15 of 50): 0.4. Gwet (2014) 3x3 abstractors
    table (100 pregnancies): 0.796, linear weights 0.843, quadratic weights 0.892."""
    assert agreement.cohen_kappa_from_table([[20, 5], [10, 15]]) == pytest.approx(0.4)
    abstractors = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
    three = [1, 2, 3]
    assert agreement.cohen_kappa_from_table(abstractors) == pytest.approx(0.796, abs=5e-4)
    linear = agreement.weight_matrix(three, "linear")
    quadratic = agreement.weight_matrix(three, "quadratic")
    assert agreement.cohen_kappa_from_table(abstractors, linear) == pytest.approx(0.843, abs=5e-4)
    assert agreement.cohen_kappa_from_table(abstractors, quadratic) == pytest.approx(
        0.892, abs=5e-4
    )


def test_it_computes_cohen_kappa_from_two_annotators_ratings():
    """From raw answers (NaN = not rated) the kappa equals the contingency-table one."""
    a = [1] * 20 + [1] * 5 + [2] * 10 + [2] * 15 + [nan, 2]
    b = [1] * 20 + [2] * 5 + [1] * 10 + [2] * 15 + [1, nan]
    assert agreement.cohen_kappa(a, b, [1, 2]) == pytest.approx(0.4)
    pairwise = agreement.pairwise_cohen_kappa([a, b, a], [1, 2])
    assert pairwise.kappa[0, 1] == pytest.approx(0.4)
    assert pairwise.kappa[1, 0] == pairwise.kappa[0, 1]
    assert pairwise.kappa[0, 2] == pytest.approx(1.0)
    assert pairwise.common_units[0, 1] == 50


def test_it_matches_newcombe_1998_wilson_intervals():
    """Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (Wilson score)."""
    cases = {
        (81, 263): (0.2553, 0.3662),
        (15, 148): (0.0624, 0.1605),
        (0, 20): (0.0, 0.1611),
        (1, 29): (0.0061, 0.1718),
    }
    for (successes, total), (low, high) in cases.items():
        got = agreement.wilson_interval(successes, total)
        assert got == pytest.approx((low, high), abs=5e-5)
    assert all(math.isnan(x) for x in agreement.wilson_interval(0, 0))


def test_it_says_alpha_is_undefined_instead_of_crashing():
    """One value everywhere: alpha and kappa are undefined (noted), AC1 and % agreement are 1."""
    same = [[2, 2, 2, nan], [2, 2, nan, 2], [nan, 2, 2, 2]]
    assert math.isnan(agreement.krippendorff_alpha(same, "nominal", [1, 2, 3]))
    assert math.isnan(agreement.krippendorff_alpha(same, "ordinal"))  # domain of one value
    prepared = agreement.AgreementData.from_data(same, [1, 2, 3])
    bootstrap = agreement.Bootstrap(50, seed=1)
    alpha = prepared.estimate("alpha", bootstrap, level="nominal")
    assert alpha.value is None
    assert alpha.note == agreement.NO_VARIATION
    assert prepared.estimate("fleiss_kappa").value is None
    assert prepared.estimate("gwet", bootstrap).value == pytest.approx(1.0)
    assert prepared.estimate("percent_agreement").value == pytest.approx(1.0)

    lonely = [[1, nan], [nan, 2]]
    for coefficient in ("alpha", "gwet", "percent_agreement", "fleiss_kappa"):
        result = agreement.AgreementData.from_data(lonely, [1, 2]).estimate(coefficient)
        assert result.value is None
        assert result.note == agreement.NO_PAIRS


def test_it_uses_the_explicit_value_domain():
    """A category nobody used still counts for chance agreement (AC1's q), alpha is unchanged by
    an absent value, and a value outside the domain is an error, not a silent new category."""
    data = [[0, 0, 1, 0], [0, 0, 1, 1]]
    assert agreement.krippendorff_alpha(data, "nominal", [0, 1]) == pytest.approx(
        agreement.krippendorff_alpha(data, "nominal", [0, 1, 2, 3])
    )
    assert agreement.gwet_ac1(data, [0, 1]) != pytest.approx(agreement.gwet_ac1(data, [0, 1, 2]))
    ratings = [[5, 4, 4, 5], [5, 4, 5, 5]]
    assert agreement.krippendorff_alpha(ratings, "ordinal", FIVE) == pytest.approx(
        agreement.krippendorff_alpha(ratings, "ordinal", [4, 5])
    )
    with pytest.raises(ValueError, match="outside the value domain"):
        agreement.krippendorff_alpha(data, "nominal", [1, 2])


def test_it_measures_agreement_with_the_leave_one_out_majority():
    """Each answer is compared with the unique majority of the other annotators of the unit."""
    data = [
        [0, 0, 1, 0],
        [0, 1, 1, nan],
        [0, 1, 0, 1],
    ]
    share, counted = agreement.leave_one_out_agreement(np.array(data), [0, 1])
    # Annotator 0: unit 0 others (0,0) agree; unit 1 others (1,1) disagree; unit 2 others (1,0)
    # tie, not counted; unit 3 other (1) disagrees.
    assert counted[0] == 3
    assert share[0] == pytest.approx(1 / 3)
    # Annotator 2: unit 0 agrees; unit 1 others (0,1) tie, not counted; unit 2 others (1,1)
    # and unit 3 other (0) disagree.
    assert counted[2] == 3
    assert share[2] == pytest.approx(1 / 3)


def test_it_gives_binomial_p_values():
    """Exact two-sided binomial test: 7 of 10 against 0.5 gives 0.34375."""
    assert agreement.binomial_p_value(7, 10) == pytest.approx(0.34375)
    assert math.isnan(agreement.binomial_p_value(0, 0))


def test_it_aggregates_with_dawid_skene_better_than_the_majority():
    """With two careful annotators and two careless ones, Dawid-Skene weighs the careful ones
    more and recovers the truth more often than the majority; posteriors are distributions."""
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 3, 2000)
    accuracy = [0.92, 0.85, 0.45, 0.4]
    codes = np.empty((4, 2000))
    for annotator, p in enumerate(accuracy):
        wrong = (truth + rng.integers(1, 3, 2000)) % 3
        codes[annotator] = np.where(rng.random(2000) < p, truth, wrong)
    codes[rng.random(codes.shape) < 0.1] = nan
    model = dawid_skene.dawid_skene(codes, 3)
    majority = dawid_skene.majority_codes(codes, 3)
    assert (model.labels() == truth).mean() > np.nanmean(majority == truth) + 0.03
    assert np.allclose(model.posterior.sum(axis=1), 1.0)
    assert np.allclose(model.confusion.sum(axis=2), 1.0)
    assert model.annotator_accuracy() == pytest.approx(accuracy, abs=0.05)
    again = dawid_skene.dawid_skene(codes, 3)
    assert np.array_equal(again.posterior, model.posterior)


def test_it_gives_a_reproducible_bootstrap_interval_around_the_estimate():
    """Same seed, same interval; another seed, another interval; the estimate is inside."""
    first = agreement.bootstrap_estimate(
        KRIPPENDORFF_2011, "alpha", value_domain=FIVE, level="ordinal", seed=3
    )
    second = agreement.bootstrap_estimate(
        KRIPPENDORFF_2011, "alpha", value_domain=FIVE, level="ordinal", seed=3
    )
    other = agreement.bootstrap_estimate(
        KRIPPENDORFF_2011, "alpha", value_domain=FIVE, level="ordinal", seed=4
    )
    assert first == second
    assert (first.ci_low, first.ci_high) != (other.ci_low, other.ci_high)
    assert first.value == pytest.approx(0.815, abs=5e-4)
    assert first.value is not None
    assert first.ci_low is not None
    assert first.ci_high is not None
    assert first.ci_low <= first.value <= first.ci_high
    assert first.resamples <= agreement.DEFAULT_RESAMPLES


# --------------------------------------------------------------------------------------------
# Properties

COEFFICIENTS: list[tuple[agreement.Coefficient, dict[str, Any]]] = [
    ("alpha", {"level": "nominal"}),
    ("alpha", {"level": "ordinal"}),
    ("alpha", {"level": "interval"}),
    ("gwet", {"weights": "identity"}),
    ("gwet", {"weights": "ordinal"}),
    ("percent_agreement", {}),
]
DOMAIN = [0, 1, 2, 3]


@st.composite
def ratings(draw, max_annotators=5, max_units=12):
    """Annotators x units with values in DOMAIN and some missing, at least one unit rated twice."""
    annotators = draw(st.integers(2, max_annotators))
    units = draw(st.integers(2, max_units))
    cells = st.one_of(st.none(), st.integers(0, len(DOMAIN) - 1))
    rows = draw(
        st.lists(
            st.lists(cells, min_size=units, max_size=units),
            min_size=annotators,
            max_size=annotators,
        )
    )
    data = np.array([[nan if v is None else v for v in row] for row in rows], dtype=float)
    assume(((~np.isnan(data)).sum(axis=0) >= 2).any())
    return data


def estimates(data):
    prepared = agreement.AgreementData.from_data(data, DOMAIN)
    return [estimate.value for estimate in prepared.estimates(COEFFICIENTS)]


def same(a, b):
    return all(
        (x is None and y is None)
        or (x is not None and y is not None and math.isclose(x, y, abs_tol=1e-9))
        for x, y in zip(a, b, strict=True)
    )


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(0, 3), min_size=2, max_size=10),
    raters=st.integers(2, 5),
    data=st.data(),
)
def test_it_gives_one_for_perfect_agreement(values, raters, data):
    """Every annotator who rates a unit gives it the same value: every coefficient is 1."""
    assume(len(set(values)) >= 2)
    matrix = np.tile(np.array(values, dtype=float), (raters, 1))
    for unit in range(len(values)):
        missing = data.draw(st.lists(st.integers(0, raters - 1), max_size=raters - 2, unique=True))
        matrix[missing, unit] = nan
    for value in estimates(matrix):
        assert value == pytest.approx(1.0)
    assert agreement.krippendorff_alpha(matrix, "nominal", DOMAIN) == pytest.approx(1.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=ratings(), seed=st.integers(0, 2**16))
def test_it_does_not_depend_on_annotator_order(data, seed):
    """Shuffling the annotators (rows) changes no coefficient."""
    shuffled = data[np.random.default_rng(seed).permutation(len(data))]
    assert same(estimates(data), estimates(shuffled))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=ratings(), permutation=st.permutations(DOMAIN))
def test_it_does_not_depend_on_the_names_of_nominal_categories(data, permutation):
    """Renaming nominal categories changes no nominal coefficient."""
    relabelled = np.where(
        np.isnan(data), nan, np.take(permutation, np.nan_to_num(data).astype(int))
    )
    prepared, renamed = (agreement.AgreementData.from_data(d, DOMAIN) for d in (data, relabelled))
    nominal: list[tuple[agreement.Coefficient, dict[str, Any]]] = [
        ("alpha", {"level": "nominal"}),
        ("gwet", {}),
        ("percent_agreement", {}),
        ("fleiss_kappa", {}),
    ]
    assert same(
        [estimate.value for estimate in prepared.estimates(nominal)],
        [estimate.value for estimate in renamed.estimates(nominal)],
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=ratings(), seed=st.integers(0, 2**16))
def test_it_bootstraps_reproducibly_with_the_estimate_inside_the_interval(data, seed):
    """Same seed twice gives the same interval, and the interval holds the estimate."""
    prepared = agreement.AgreementData.from_data(data, DOMAIN)
    firsts = prepared.estimates(COEFFICIENTS, agreement.Bootstrap(200, seed))
    assert firsts == prepared.estimates(COEFFICIENTS, agreement.Bootstrap(200, seed))
    for first in firsts:
        if first.value is not None and first.ci_low is not None and first.ci_high is not None:
            assert first.ci_low <= first.value <= first.ci_high


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=ratings())
def test_it_agrees_with_the_krippendorff_package_on_any_data(data):
    """The vectorised alpha (used by the bootstrap) equals the package's, at every level."""
    prepared = agreement.AgreementData.from_data(data, DOMAIN)
    levels: tuple[agreement.Level, ...] = ("nominal", "ordinal", "interval")
    for level in levels:
        ours = prepared.estimate("alpha", level=level).value
        theirs = agreement.krippendorff_alpha(data, level, DOMAIN)
        if ours is None:
            assert math.isnan(theirs)
        else:
            assert ours == pytest.approx(theirs, abs=1e-9)


def test_the_grouped_bootstrap_resamples_like_drawing_units_one_by_one():
    """Drawing group counts from a multinomial is the unit-level bootstrap: its interval for
    alpha matches the one from resampling the units themselves and recomputing alpha with the
    krippendorff package (both with 2,000 resamples, so the percentiles agree closely)."""
    rng = np.random.default_rng(7)
    truth = rng.integers(1, 6, 40).astype(float)
    data = np.clip(truth + rng.integers(-1, 2, (3, 40)), 1, 5)
    data[rng.random(data.shape) < 0.1] = nan
    resamples = 2000

    prepared = agreement.AgreementData.from_data(data, FIVE)
    percentile = agreement.Bootstrap(resamples, seed=1, method="percentile")
    ours = prepared.estimate("alpha", percentile, level="ordinal")

    draws = rng.integers(0, data.shape[1], (resamples, data.shape[1]))
    direct = np.array([agreement.krippendorff_alpha(data[:, d], "ordinal", FIVE) for d in draws])
    low, high = np.percentile(direct[np.isfinite(direct)], [2.5, 97.5])

    assert ours.value == pytest.approx(agreement.krippendorff_alpha(data, "ordinal", FIVE))
    assert ours.ci_low == pytest.approx(low, abs=0.03)
    assert ours.ci_high == pytest.approx(high, abs=0.03)
    assert ours.ci_low is not None
    assert ours.ci_high is not None
    assert ours.ci_high - ours.ci_low > 0.1  # a real interval, not a point
