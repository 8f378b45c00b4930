"""``metrics.accuracy_difference`` gives the interval and test ``compare`` gives two independent
sets of pairs (Newcombe's hybrid score interval, Fisher's exact test), never a percentile
bootstrap that collapses to a point when both sets are all right."""

import pytest

from evaluation.metrics import accuracy_difference
from evaluation.significance import newcombe_difference_interval, two_proportions


def test_all_right_against_all_right_is_an_interval_not_a_point():
    """20 of 20 against 10 of 10: the bootstrap of the observed outcomes gave [0.0, 0.0];
    Newcombe's interval from the two Wilson intervals is -0.161 to 0.278, Fisher's p is 1."""
    difference = accuracy_difference(["correct"] * 20, ["correct"] * 10)
    assert difference.difference == 0.0
    assert difference.ci_low == pytest.approx(-0.1611, abs=1e-4)
    assert difference.ci_high == pytest.approx(0.2775, abs=1e-4)
    assert difference.p_value == 1.0
    assert (difference.interval, difference.test) == ("newcombe_hybrid", "fisher_exact")


def test_it_is_the_interval_compare_gives_on_the_decided_pairs():
    """Ties and unparsed replies are left out, as from accuracy; the figures are
    ``two_proportions``' (what compare reports for validated against excluded) on the rest,
    and Newcombe's worked example 56/70 - 48/80 gives 0.0524 to 0.3339."""
    first = ["correct"] * 56 + ["wrong"] * 14 + ["tie"] * 5 + ["unparsed"] * 2
    second = ["correct"] * 48 + ["wrong"] * 32 + ["tie"] * 3
    difference = accuracy_difference(first, second, confidence=0.9)
    expected = two_proportions(56, 70, 48, 80, 0.9)
    assert (difference.difference, difference.ci_low, difference.ci_high) == (
        expected.difference,
        expected.ci_low,
        expected.ci_high,
    )
    assert difference.p_value == expected.p_value
    assert difference.confidence == 0.9
    at_95 = accuracy_difference(first, second)
    assert (at_95.ci_low, at_95.ci_high) == newcombe_difference_interval(56, 70, 48, 80)
    assert at_95.ci_low == pytest.approx(0.0524, abs=5e-5)
    assert at_95.ci_high == pytest.approx(0.3339, abs=5e-5)


def test_a_set_without_a_decided_pair_has_no_figures():
    difference = accuracy_difference(["tie", "unparsed"], ["correct"])
    assert (difference.difference, difference.ci_low, difference.p_value) == (None, None, None)
