"""The position mark's test (``prb_annotate/audit/position_test.py``): its counts on a worked
campaign, its p-values by hand and by enumerating every way of showing the sides, its family,
and its power and false marks through the bench's own simulation
(``bench/agreement_coverage.py``, whose tables docs/statistics.md quotes)."""

import itertools

import numpy as np
import pandas as pd
import pytest

from bench import agreement_coverage
from prb_annotate.audit import position_test, quality
from prb_annotate.audit.position_test import POSITION_TEST, lean_p_value, side_counts


@pytest.mark.parametrize(
    ("pair_2_side", "r2_counts"),
    [
        # Shown with the chosen answer as A: counted against a majority shown on B.
        (1.0, [1, 1, 1, 0, 2, 1, 1, 1]),
        # An imported answer whose file did not say (NaN): it leaves r2's columns, while the
        # others' majorities, which do not depend on sides, stay as they were.
        (np.nan, [1, 0, 1, 0, 2, 1, 0, 1]),
    ],
)
def test_it_counts_answers_against_and_with_the_others_majority_by_side(
    pair_2_side: float, r2_counts: list[int]
) -> None:
    """Annotator r2 beside r0 and r1, who always agree. Pair 0: chosen shown as A, the others
    say chosen (so on A), r2 rejected: against. Pair 1: chosen shown as B, all say chosen: with,
    the majority on B. Pair 2: the others say rejected, r2 chosen: against. Pair 3: r2 says
    tie, pair 4: the others say tie: not counted. r0 has a unique majority among r1 and r2
    only on pair 1. Columns: ``SIDE_COLUMNS``."""
    codes = np.array([[0, 0, 1, 0, 2], [0, 0, 1, 0, 2], [1, 0, 0, 2, 0]], dtype=float)
    shown_a = np.array([[0.0] * 5, [0.0] * 5, [1.0, 0.0, pair_2_side, 1.0, 1.0]])
    counts = side_counts(codes, shown_a)
    assert position_test.SIDE_COLUMNS[:2] == ("against_chosen", "against_rejected")
    assert counts[2].tolist() == r2_counts
    assert counts[0].tolist() == [0, 0, 1, 0, 4, 5, 0, 1]


def test_the_audit_reads_an_empty_side_as_not_known() -> None:
    """``chosen_position`` is empty for an imported answer whose file did not say; without that
    column, a tie does not say which side the chosen answer was on."""
    names, units = pd.Index(["r0", "r1"]), pd.Index([10, 11])
    rows = pd.DataFrame(
        {
            "annotator": ["r0", "r0", "r1"],
            "pair_id": [10, 11, 10],
            "chosen_position": ["A", "", "B"],
        }
    )
    shown = quality.shown_chosen_at_a(rows, names, units)
    np.testing.assert_array_equal(shown, [[1.0, np.nan], [0.0, np.nan]])
    rows = pd.DataFrame(
        {
            "annotator": ["r0", "r0", "r1"],
            "pair_id": [10, 11, 10],
            "rubric_fit": ["rejected", "tie", "chosen"],
            "rubric_fit_position": ["A", "tie", "A"],
        }
    )
    shown = quality.shown_chosen_at_a(rows, names, units)
    np.testing.assert_array_equal(shown, [[0.0, np.nan], [1.0, np.nan]])


def test_three_against_all_met_on_b_is_one_in_ten() -> None:
    """Six counted answers, three against and three with a majority for the chosen answer, three
    shown as B. The 20 ways of showing three of six as B are equally likely; the statistic is
    (2x - 3) / 3 for x answers against met on B, so |statistic| = 1 only when x is 0 or 3: 2/20."""
    assert lean_p_value((3, 0, 3, 0, 0, 3, 3, 0)) == pytest.approx(0.1, rel=1e-12)
    assert lean_p_value((3, 0, 3, 0, 0, 3, 0, 3)) == pytest.approx(0.1, rel=1e-12)
    assert lean_p_value((3, 0, 3, 0, 0, 3, 2, 1)) == pytest.approx(1.0, rel=1e-12)


def enumerated_p_value(kinds: list[str], shown_b: int, observed_b: set[int]) -> float:
    """The permutation p-value by brute force: every set of ``shown_b`` answers shown as B.
    ``kinds`` per answer: "ac", "ar" (against a majority for the chosen / rejected answer), "wc",
    "wr" (with it), "u" (not counted)."""

    def statistic(shown: set[int]) -> float:
        met_b = [(index in shown) == kind.endswith("c") for index, kind in enumerate(kinds)]
        against = [met for met, kind in zip(met_b, kinds, strict=True) if kind[0] == "a"]
        with_it = [met for met, kind in zip(met_b, kinds, strict=True) if kind[0] == "w"]
        return float(np.mean(against) - np.mean(with_it))

    values = [statistic(set(shown)) for shown in itertools.combinations(range(len(kinds)), shown_b)]
    centre = float(np.mean(values))
    observed = abs(statistic(observed_b) - centre)
    return sum(abs(value - centre) >= observed - 1e-12 for value in values) / len(values)


def test_the_p_values_are_those_of_every_way_of_showing_the_sides() -> None:
    rng = np.random.default_rng(3)
    for _ in range(40):
        kinds = list(rng.choice(["ac", "ar", "wc", "wr", "u"], size=int(rng.integers(4, 11))))
        kinds += ["ac", "wc"]  # at least one answer against and one with the majority
        shown_b = int(rng.integers(0, len(kinds) + 1))
        observed = set(rng.choice(len(kinds), size=shown_b, replace=False).tolist())
        ac, ar, wc, wr, u = (kinds.count(kind) for kind in ("ac", "ar", "wc", "wr", "u"))
        met_b = [(index in observed) == kind.endswith("c") for index, kind in enumerate(kinds)]
        against_b = sum(m for m, kind in zip(met_b, kinds, strict=True) if kind[0] == "a")
        with_b = sum(m for m, kind in zip(met_b, kinds, strict=True) if kind[0] == "w")
        expected = enumerated_p_value(kinds, shown_b, observed)
        p_value = lean_p_value((ac, ar, wc, wr, u, shown_b, against_b, with_b))
        assert p_value == pytest.approx(expected, abs=1e-12)


def test_the_family_holds_who_could_show_a_lean_and_bonferroni_spans_it() -> None:
    """Annotators 0 and 1 have three or more answers against the majority and some with it
    (annotator 1's five against all met it on B); annotator 2 has two against, annotator 3 none
    with it: outside, unmarkable (None). The family is 2: each adjusted p-value is twice its
    own."""
    counts = np.array(
        [
            [3, 0, 3, 0, 0, 3, 3, 0],
            [5, 0, 20, 0, 0, 12, 5, 7],
            [2, 0, 30, 0, 0, 16, 2, 14],
            [5, 0, 0, 0, 2, 3, 3, 0],
        ]
    )
    tests = POSITION_TEST.tests(counts)
    assert tests[0] == pytest.approx((0.1, 0.2))
    p_value, adjusted = tests[1]
    assert p_value is not None
    assert p_value < 0.05
    assert adjusted == pytest.approx(2 * p_value)
    assert tests[2] == (None, None)
    assert tests[3] == (None, None)
    assert POSITION_TEST.least_against == 3
    assert "at least 3 answers against" in POSITION_TEST.words()


def position_campaigns(answers: int, biased: int | None, errors: np.ndarray, seed: int) -> float:
    """The share of 200 campaigns whose position mark fell on annotator 0 (biased) or on anyone
    (honest), through the bench's simulation and the audit's tests."""
    rng = np.random.default_rng(seed)
    found = 0
    for _ in range(200):
        marks, _ = agreement_coverage.position_marks(
            *agreement_coverage.campaign(errors, answers, biased, rng)
        )
        found += 0 in marks if biased is not None else bool(marks)
    return found / 200


def test_it_finds_a_35_percent_biased_annotator_by_40_answers() -> None:
    """An annotator who names A on 35 % of pairs whatever they show, beside six careful ones: the
    bench's 40-answer row (82 % over 1,000 campaigns), at least 80 % here."""
    careful = np.full(7, agreement_coverage.CAREFUL_ERROR)
    assert position_campaigns(40, 0, careful, 40) >= 0.80
    assert position_campaigns(80, 0, careful, 80) >= 0.95


def test_it_marks_honest_pools_in_at_most_5_percent_of_campaigns() -> None:
    """Careful pools of 7, and 30 annotators whose error rates range from 1 to 10 %: the
    permutation test holds its level whatever the error rates, and with the A-share test's
    default mark the two share 0.05."""
    assert POSITION_TEST.level + quality.POSITION_P_MARK == pytest.approx(0.05)
    careful = np.full(7, agreement_coverage.CAREFUL_ERROR)
    assert position_campaigns(40, None, careful, 2) <= 0.05
    # Exact tests whose levels add up to 0.05 can mark near it (3.2 % of the bench's 1,000
    # campaigns of 30 at 40 answers, up to 5.5 % of 200 here): two standard errors of 5 %.
    spread = np.random.default_rng(30).uniform(0.01, 0.10, 30)
    assert position_campaigns(40, None, spread, 3) <= 0.05 + 2 * (0.05 * 0.95 / 200) ** 0.5
