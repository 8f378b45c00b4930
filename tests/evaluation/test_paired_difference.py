"""The interval for the difference of two models' accuracies on the same pairs
(evaluation/paired.py): Tango's score interval, checked against the statistic solved
independently, exact coverage by enumerating every table, and the power line."""

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import gammaln, xlogy

from evaluation.paired import (
    TANGO_CC,
    IntervalMethod,
    detectable_difference,
    mcnemar_power,
    paired_difference,
    paired_difference_interval,
    tango_bounds,
)
from evaluation.significance import exact_mcnemar

PLAIN = IntervalMethod("tango", "Tango's score interval", "Tango", "tango1998", correction=0.0)


def tango_root(b: int, c: int, n: int, target: float) -> float:
    """Tango's statistic (Tango 1998, eq. 4, with the constrained p21 of eq. 5) equal to
    ``target``, solved with brentq on the formula written out here, not the project's code."""

    def statistic(delta: float) -> float:
        w = -b - c + (2 * n - b + c) * delta
        p21 = (np.sqrt(w * w + 8 * n * c * delta * (1 - delta)) - w) / (4 * n)
        return (b - c - n * delta) / np.sqrt(n * (2 * p21 + delta * (1 - delta))) - target

    return float(optimize.brentq(statistic, -1 + 1e-9, 1 - 1e-9, xtol=1e-12))


@pytest.mark.parametrize(("b", "c", "n"), [(1, 7, 21), (6, 16, 161), (40, 20, 160), (3, 0, 30)])
def test_it_solves_tangos_score_equation(b: int, c: int, n: int) -> None:
    z = stats.norm.ppf(0.975)
    low, high = tango_bounds(b, c, n, method=PLAIN)
    assert float(low) == pytest.approx(tango_root(b, c, n, z), abs=1e-9)
    assert float(high) == pytest.approx(tango_root(b, c, n, -z), abs=1e-9)


def test_it_is_never_a_point_and_carries_its_method() -> None:
    """No discordant pair of 20: the bootstrap gave [0, 0]; the score interval does not."""
    low, high = paired_difference_interval(0, 0, 20) or (0.0, 0.0)
    assert low < -0.1
    assert high > 0.1
    result = paired_difference([1] * 20, [1] * 20)
    assert result.method == TANGO_CC.key
    assert (result.difference, result.pairs) == (0.0, 20)
    assert result.ci_low is not None
    assert result.ci_low < 0 < (result.ci_high or 0)
    assert paired_difference([None, 1], [1, None]).difference is None


def test_it_refuses_an_impossible_table() -> None:
    with pytest.raises(ValueError, match="between 0 and n"):
        paired_difference_interval(15, 10, 20)


def exact_coverage(n: int, discordance: float, share: float) -> float:
    """P(interval covers p10 - p01) over every table (b, c) of n pairs, each weighted by its
    multinomial probability, with the interval the leaderboard reports for it."""
    b_grid, c_grid = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    inside = b_grid + c_grid <= n
    b, c = b_grid[inside].astype(float), c_grid[inside].astype(float)
    low, high = tango_bounds(b, c, n)
    p10, p01 = discordance * share, discordance * (1 - share)
    log_p = (
        gammaln(n + 1)
        - gammaln(b + 1)
        - gammaln(c + 1)
        - gammaln(n - b - c + 1)
        + xlogy(b, p10)
        + xlogy(c, p01)
        + xlogy(n - b - c, 1 - discordance)
    )
    truth = p10 - p01
    return float(np.exp(log_p)[(low <= truth + 1e-12) & (high >= truth - 1e-12)].sum())


@pytest.mark.parametrize("n", [20, 50])
def test_it_covers_at_least_94_percent_over_every_table(n: int) -> None:
    """Discordance 1 % to 90 % of the pairs, every split of it from even to one-sided."""
    worst = min(
        (exact_coverage(n, discordance, share), discordance, share)
        for discordance in (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)
        for share in np.linspace(0.5, 1.0, 11)
    )
    assert worst[0] >= 0.94, worst


def test_it_finds_the_power_of_the_exact_mcnemar_test_by_enumeration() -> None:
    """10 discordant pairs at 0.05: the test rejects at 0, 1, 9 or 10 one way (p 0.021);
    power at share 0.9 is P(X >= 9) + P(X <= 1) for X ~ Binomial(10, 0.9)."""
    assert exact_mcnemar(1, 9) < 0.05 < exact_mcnemar(2, 8)
    expected = stats.binom.sf(8, 10, 0.9) + stats.binom.cdf(1, 10, 0.9)
    assert mcnemar_power(10, 0.9, 0.05) == pytest.approx(expected)
    detectable = detectable_difference(40, 200, 0.05)
    assert detectable is not None
    share = (1 + detectable * 200 / 40) / 2
    assert mcnemar_power(40, share, 0.05) == pytest.approx(0.8, abs=1e-6)
    # Five discordant pairs: even all five one way gives p = 0.0625, never below 0.05.
    assert detectable_difference(5, 20, 0.05) is None
