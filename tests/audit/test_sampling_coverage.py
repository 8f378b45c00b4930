"""The per-category interval of a planned sample keeps its promise in every design, large
sampling fractions of small categories included: exact enumeration of every sample outcome.

A category of N pairs, K of them validated, sampled n without replacement: the number of
validated pairs in the sample is hypergeometric, so the interval's coverage of K / N is the
sum of the probabilities of the outcomes whose interval (the estimate's own function) holds
it. No replicates and no Monte Carlo error: the figures are exact.
"""

import pytest
from scipy import stats

from prb_annotate.audit import sampling

FLOOR = 0.93
POPULATIONS = (10, 20, 30, 50, 80, 120, 300)
FRACTIONS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


def exact_coverage(population: int, sample: int, validated: int) -> float:
    truth = validated / population
    covered = 0.0
    low_count = max(0, sample - (population - validated))
    for hits in range(low_count, min(sample, validated) + 1):
        estimate = sampling.category_estimate(hits, sample, population)
        if estimate["ci_low"] - 1e-12 <= truth <= estimate["ci_high"] + 1e-12:
            covered += float(stats.hypergeom.pmf(hits, population, validated, sample))
    return covered


def designs() -> list[tuple[int, int]]:
    sizes = {(n, max(2, round(f * n))) for n in POPULATIONS for f in FRACTIONS}
    return sorted((population, sample) for population, sample in sizes if sample < population)


@pytest.mark.parametrize(("population", "sample"), designs())
def test_it_covers_at_least_93_percent_at_every_share(population: int, sample: int) -> None:
    """Every validated count from half the category to all of it (the interval is symmetric,
    so shares below one half mirror these): the plain Wilson interval at the effective size
    fell to 0.80 here (N = 30, n = 24, 29 validated)."""
    worst = min(
        (exact_coverage(population, sample, validated), validated)
        for validated in range((population + 1) // 2, population + 1)
    )
    assert worst[0] >= FLOOR, worst


@pytest.mark.parametrize("share", [0.5, 0.8, 0.9, 0.95, 0.97])
@pytest.mark.parametrize(("population", "target"), [(40, 0.1), (200, 0.1), (1000, 0.05)])
def test_a_planned_category_covers_at_least_93_percent(
    population: int, target: float, share: float
) -> None:
    """The size a plan gives a category, at the true share it expected."""
    sample = sampling.category_sample_size(population, target, share)
    validated = round(share * population)
    if sample < population:
        assert exact_coverage(population, sample, validated) >= FLOOR
