"""The quality marks on simulated campaigns: honest annotators are rarely marked (at most 5 %
of campaigns mark anyone), and the annotator the mark is for is still found.

Every campaign goes through the audit's own functions: ``agreement.leave_one_out_counts`` on
an annotators x pairs matrix, then ``quality.agreement_tests`` and ``quality.biased_annotators``,
through the bench's own simulation where the bench measures the same thing
(``bench/agreement_coverage.py``). The position mark's test is in ``test_position_test.py``.
"""

import numpy as np

from bench import agreement_coverage
from prb_annotate.audit import agreement, quality

CAMPAIGNS = 400
RATERS = 3


def campaign(rng: np.random.Generator, errors: np.ndarray, pairs: int) -> np.ndarray:
    """Annotators x pairs rubric-fit codes: 3 annotators a pair, the expected answer "chosen"
    on 90 % of pairs, each annotator giving another answer with their own error rate."""
    pool = len(errors)
    expected = np.where(rng.random(pairs) < 0.9, 0, rng.integers(1, 3, pairs))
    data = np.full((pool, pairs), np.nan)
    chosen = np.argsort(rng.random((pairs, pool)), axis=1)[:, :RATERS]
    for column in range(RATERS):
        who = chosen[:, column]
        wrong = rng.random(pairs) < errors[who]
        data[who, np.arange(pairs)] = np.where(
            wrong, (expected + rng.integers(1, 3, pairs)) % 3, expected
        )
    return data


def marked(data: np.ndarray) -> set[int]:
    agreeing, counted = agreement.leave_one_out_counts(data, [0.0, 1.0, 2.0])
    tests = quality.agreement_tests(agreeing.tolist(), counted.tolist())
    return {
        index
        for index, (_, p_holm) in enumerate(tests)
        if p_holm is not None and p_holm < quality.AGREEMENT_MARK_P
    }


def test_honest_campaigns_mark_an_annotator_at_most_5_percent_of_the_time() -> None:
    """4 to 12 annotators, 20 to 200 pairs, every annotator with the same small error rate (0,
    2 % or 5 %): most annotators agree perfectly on small campaigns, which gave a z-score of
    minus infinity to the one who did not."""
    rng = np.random.default_rng(20260)
    with_mark = 0
    for _ in range(CAMPAIGNS):
        pool = int(rng.integers(4, 13))
        error = float(rng.choice([0.0, 0.02, 0.05]))
        data = campaign(rng, np.full(pool, error), int(rng.integers(20, 201)))
        with_mark += bool(marked(data))
    assert with_mark / CAMPAIGNS <= 0.05


def test_an_annotator_answering_at_random_is_marked_in_most_campaigns() -> None:
    """Six careful annotators (2 % errors) and one at random (2 in 3 answers wrong), 150 pairs:
    the random one is marked in at least 90 % of campaigns, the careful ones in very few."""
    rng = np.random.default_rng(7)
    errors = np.array([0.02] * 6 + [2 / 3])
    found = careful_marked = 0
    for _ in range(200):
        marks = marked(campaign(rng, errors, 150))
        found += 6 in marks
        careful_marked += bool(marks - {6})
    assert found / 200 >= 0.9
    assert careful_marked / 200 <= 0.05


def test_holm_keeps_thirty_honest_annotators_in_the_audit() -> None:
    """30 annotators answering A or B at random on 40 pairs each. Tested one by one at 0.05
    (the old rule), about two campaigns of three leave someone out (the exact test's size at
    40 answers is 0.0385, and 1 - 0.9615^30 = 0.69); with Holm, at most 5 %."""
    rng = np.random.default_rng(11)
    one_by_one = holm = 0
    for _ in range(CAMPAIGNS):
        a_answers = rng.binomial(40, 0.5, 30)
        counts = {f"a{n}": (int(a), 40 - int(a)) for n, a in enumerate(a_answers)}
        holm += bool(quality.biased_annotators(counts, 0.05))
        one_by_one += any(
            (p := quality.a_share_test(*pair)[1]) is not None and p < 0.05
            for pair in counts.values()
        )
    assert one_by_one / CAMPAIGNS > 0.55
    assert holm / CAMPAIGNS <= 0.05


def test_the_agreement_mark_falls_on_honest_annotators_whose_error_rates_differ() -> None:
    """Seven honest annotators with error rates from 1 to 10 %, 400 pairs: the mark falls in
    far more than 5 % of campaigns, and on the less careful half of the pool, which is what the
    note beside the mark says (``quality.HONEST_SPREAD``)."""
    rng = np.random.default_rng(5)
    with_mark = on_less_careful = marks = 0
    for _ in range(100):
        errors = rng.uniform(0.01, 0.10, 7)
        codes, _ = agreement_coverage.campaign(errors, round(400 * 3 / 7), None, rng)
        found = marked(codes)
        with_mark += bool(found)
        marks += len(found)
        on_less_careful += sum(errors[index] > np.median(errors) for index in found)
    assert with_mark / 100 >= quality.HONEST_SPREAD.marked[0]
    assert on_less_careful / marks >= 0.9
    assert "may simply be the least careful honest one" in quality.OUTLIER_RULES["agreement"]
