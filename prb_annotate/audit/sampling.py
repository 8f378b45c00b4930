"""Auditing by planned sample: how many pairs to annotate, which ones, and what they say about
the whole dataset. Pure functions; no ORM (``campaigns/planned_sample.py`` is the bridge).

1. **Plan.** A target half-width ``e`` for the 95 % interval of the validated share, overall
   and/or per category, and an expected share ``p`` give each category's sample size under
   stratified simple random sampling without replacement. A plan is sized with the interval
   its result is reported with (step 3): one category needs the smallest ``n`` whose reported
   interval, when ``p n`` of its ``n`` pairs are validated, has a half-width of at most ``e``.
   Cochran's normal-approximation size ``n0 / (1 + (n0 - 1) / N)`` with ``n0 = z^2 p q / e^2``
   (Cochran 1977, eq. 4.2) falls short of that near 0 or 1: at N = 1,000, p = 0.97 and
   e = 0.10 it plans 12 pairs, whose reported interval is ±0.17. The overall target is met by the
   smallest proportional allocation (``ceil(n N_h / N)`` per category) whose reported overall
   interval at the expected shares reaches it. Both are found by bisection, since the reported
   half-width falls as the sample grows. With both targets each category takes the larger
   size. Annotations are ``k`` per pair plus one per expected split vote.
2. **Draw.** Each category's pairs (sorted ids) are shuffled by a generator seeded with the
   campaign seed and the category; the sample is a prefix of that order. Extending the sample
   takes the next pairs of the same order, so a campaign extended from n to n' pairs holds
   exactly the pairs a campaign planned for n' from the start would hold.
3. **Estimate.** Per category, the share among decided pairs with a Wilson interval whose
   sample size is the effective one under the finite-population correction,
   ``n_eff = n (N - 1) / (N - n)``, and a continuity correction of half a pair, ``1 / (2 n)``
   of the sample share (Newcombe 1998, method 4, at the effective size): Wilson keeps its
   coverage for small samples and shares near 0 or 1 where the normal (Wald) interval does not
   (Brown, Cai & DasGupta 2001), and the half step keeps it where the sample share can take
   only a few values (a large sampling fraction of a small category, where the plain interval
   covers 0.80 to 0.93). A census (``n = N``) gives the share itself, with no interval
   (``method`` ``census``, ``ci_low`` and ``ci_high`` None, ``half_width`` 0: no sampling
   error, so a target is reached).
   Overall, the stratified share ``sum W_h p_h`` with the same interval at Kish's effective
   sample size ``p q / v`` (Kish 1965; Dean & Pagano 2015 for Wilson in complex surveys),
   half a pair of the whole sample as its correction, where ``v`` is the stratified variance
   ``sum W_h^2 p_h q_h / n_h (N_h - n_h) / (N_h - 1)`` (Cochran 1977, eq. 5.7). ``v`` and
   ``p q`` use shares shrunk by two successes and two failures (Agresti & Coull 1998), so the
   design effect stays defined when a category's sample is all validated or all excluded.
   Undecided pairs are assumed to be like the decided ones for that estimate; the bounds
   count them as all excluded (low) and all validated (high).
4. **Top up.** After a pilot, the plan is recomputed with the observed (shrunk) share of each
   category in place of the expected one, and a category only ever grows.
"""

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from statistics import NormalDist
from typing import Any

PLAN_VERSION = 1
# Two pseudo-successes and two pseudo-failures (Agresti & Coull 1998, "add two and two").
SHRINK = 2


class PlanError(ValueError):
    """A sample plan cannot be made from these inputs; ``field`` names the bad one."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


MAX_PRICE_PER_ANNOTATION = 1_000_000.0


@dataclass(frozen=True)
class PlanTargets:
    """What a manager asks of a planned sample. Half-widths are shares (0.05 = ±5 points)."""

    half_width: float | None = None
    category_half_width: float | None = None
    expected_share: float = 0.5
    confidence: float = 0.95
    # Share of pairs expected to end in a split vote, each asking one more annotator.
    split_share: float = 0.0
    price_per_annotation: float | None = None

    def check(self) -> None:
        if self.half_width is None and self.category_half_width is None:
            raise PlanError("half_width", "give an overall or a per-category half-width")
        for name in ("half_width", "category_half_width"):
            value = getattr(self, name)
            if value is not None and not 0.0 < value < 0.5:
                raise PlanError(name, "must be between 0 and 0.5 (0.05 is ±5 points)")
        if not 0.0 < self.expected_share < 1.0:
            raise PlanError("expected_share", "must be strictly between 0 and 1")
        if not 0.5 <= self.confidence < 1.0:
            raise PlanError("confidence", "must be at least 0.5 and below 1")
        if not 0.0 <= self.split_share <= 1.0:
            raise PlanError("split_share", "must be between 0 and 1")
        price = self.price_per_annotation
        # Bounded so that the cost (price x annotations) stays a finite number.
        if price is not None and not 0 <= price <= MAX_PRICE_PER_ANNOTATION:
            raise PlanError(
                "price_per_annotation", f"must be between 0 and {MAX_PRICE_PER_ANNOTATION:,.0f}"
            )


@dataclass(frozen=True)
class CategoryPlan:
    category: str
    population: int
    pairs: int
    expected_share: float


@dataclass(frozen=True)
class SamplePlan:
    targets: PlanTargets
    k: int
    categories: tuple[CategoryPlan, ...]
    # Each top-up: the pairs it added per category and the shares it planned with.
    extensions: tuple[dict[str, Any], ...] = field(default=())
    # An actively drawn sample's design (``active_sample.py``): the model run, the floor, the
    # pairs each category expects and what the other designs would need; None for uniform.
    design: dict[str, Any] | None = None

    @property
    def pairs(self) -> int:
        return sum(row.pairs for row in self.categories)

    @property
    def population(self) -> int:
        return sum(row.population for row in self.categories)

    @property
    def annotations(self) -> int:
        """k per pair, plus one per pair expected to end in a split vote."""
        return math.ceil(self.pairs * (self.k + self.targets.split_share))

    @property
    def cost(self) -> float | None:
        price = self.targets.price_per_annotation
        return None if price is None else round(self.annotations * price, 2)

    def sizes(self) -> dict[str, int]:
        return {row.category: row.pairs for row in self.categories}

    def expected_half_widths(self) -> dict[str, Any]:
        """The half-widths the estimate reports if the observed shares are the expected ones
        (an active design's own expectation, kept with it)."""
        if self.design is not None and "expected_half_width" in self.design:
            return dict(self.design["expected_half_width"])
        confidence = self.targets.confidence
        per_category = {
            row.category: reported_half_width(
                row.expected_share, row.pairs, row.population, confidence
            )
            for row in self.categories
        }
        overall = expected_overall_half_width(self.categories, confidence)
        return {"overall": overall, "per_category": per_category}

    def as_json(self) -> dict[str, Any]:
        widths = self.expected_half_widths()
        return {
            "version": PLAN_VERSION,
            "targets": asdict(self.targets),
            "k": self.k,
            "categories": [
                {**asdict(row), "expected_half_width": widths["per_category"][row.category]}
                for row in self.categories
            ],
            "population": self.population,
            "pairs": self.pairs,
            "annotations": self.annotations,
            "cost": self.cost,
            "expected_half_width": widths["overall"],
            "extensions": list(self.extensions),
        } | ({} if self.design is None else {"design": self.design})

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "SamplePlan":
        return cls(
            targets=PlanTargets(**data["targets"]),
            k=int(data["k"]),
            categories=tuple(
                CategoryPlan(
                    category=str(row["category"]),
                    population=int(row["population"]),
                    pairs=int(row["pairs"]),
                    expected_share=float(row["expected_share"]),
                )
                for row in data["categories"]
            ),
            extensions=tuple(data.get("extensions", ())),
            design=data.get("design"),
        )


# --------------------------------------------------------------------------------------------
# Planning


def z_value(confidence: float) -> float:
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def sample_variance(share: float, sample: int, population: int) -> float:
    """Variance of a sample share drawn without replacement (Cochran 1977, eq. 3.7)."""
    if sample <= 0:
        return math.inf
    if population <= 1 or sample >= population:
        return 0.0
    return share * (1 - share) / sample * (population - sample) / (population - 1)


def cochran_n0(half_width: float, share: float, confidence: float = 0.95) -> float:
    """Sample size for an infinite population: z^2 p q / e^2 (Cochran 1977, eq. 4.1)."""
    return z_value(confidence) ** 2 * share * (1 - share) / half_width**2


def fpc_size(n0: float, population: int) -> float:
    """n0 / (1 + (n0 - 1) / N): Cochran's finite-population correction (eq. 4.2), unrounded."""
    return n0 / (1 + (n0 - 1) / population)


def cochran_size(population: int, half_width: float, share: float, confidence: float = 0.95) -> int:
    """Cochran's n0 / (1 + (n0 - 1) / N), rounded up, at least 1 and at most N: the normal
    approximation's size, for comparison (plans use :func:`category_sample_size`)."""
    if population <= 0:
        return 0
    # A tolerance keeps a size that is whole up to rounding from being pushed up by one.
    size = math.ceil(fpc_size(cochran_n0(half_width, share, confidence), population) - 1e-9)
    return min(max(size, 1), population)


def reported_half_width(
    share: float, sample: int, population: int, confidence: float = 0.95
) -> float:
    """The half-width :func:`category_estimate` reports when ``share`` of ``sample`` pairs
    drawn from ``population`` are validated (0 for a census)."""
    half = category_estimate(share * sample, sample, population, confidence)["half_width"]
    return math.inf if half is None else float(half)


def smallest_size(reaches: Callable[[int], bool], largest: int) -> int:
    """The smallest size in 1..``largest`` that ``reaches`` the target, by bisection (the
    reported half-width falls as the sample grows); ``largest`` when none does."""
    low, high = 1, largest
    while low < high:
        middle = (low + high) // 2
        if reaches(middle):
            high = middle
        else:
            low = middle + 1
    return low


def category_sample_size(
    population: int, half_width: float, share: float, confidence: float = 0.95
) -> int:
    """The smallest sample whose reported interval (Wilson with continuity correction at the
    FPC-effective size) has a half-width of at most ``half_width`` when the observed share is
    ``share``; at least 1, at most N (a census has no sampling error)."""
    if population <= 0:
        return 0

    def reaches(sample: int) -> bool:
        # The tolerance keeps a half-width equal to the target up to rounding from failing it.
        return reported_half_width(share, sample, population, confidence) <= half_width + 1e-12

    return smallest_size(reaches, population)


def expected_overall_half_width(
    categories: Sequence[CategoryPlan], confidence: float = 0.95
) -> float:
    """The half-width :func:`stratified_estimate` reports when each category's sample shows
    its expected share."""
    strata = [(row.expected_share * row.pairs, row.pairs, row.population) for row in categories]
    half = stratified_estimate(strata, confidence)["half_width"]
    return math.inf if half is None else float(half)


def proportional_allocation(populations: Mapping[str, int], total_sample: int) -> dict[str, int]:
    """ceil(n N_h / N) per category, within 1..N_h (every non-empty category is sampled)."""
    population = sum(populations.values())
    return {
        category: min(size, max(1, math.ceil(total_sample * size / population - 1e-9)))
        if size
        else 0
        for category, size in populations.items()
    }


def overall_allocation(
    populations: Mapping[str, int],
    shares: Mapping[str, float],
    half_width: float,
    confidence: float,
) -> dict[str, int]:
    """The smallest proportional allocation whose reported overall half-width, at the expected
    shares, is within the target."""

    def reaches(total_sample: int) -> bool:
        sizes = proportional_allocation(populations, total_sample)
        rows = [CategoryPlan(c, populations[c], sizes[c], shares[c]) for c in populations]
        return expected_overall_half_width(rows, confidence) <= half_width + 1e-12

    return proportional_allocation(populations, smallest_size(reaches, sum(populations.values())))


def plan_sample(
    populations: Mapping[str, int],
    targets: PlanTargets,
    k: int,
    shares: Mapping[str, float] | None = None,
) -> SamplePlan:
    """Pairs per category for ``targets``; ``shares`` overrides the expected share per category."""
    targets.check()
    if k < 1:
        raise PlanError("k", "must be at least 1")
    populations = {category: int(size) for category, size in sorted(populations.items())}
    if not any(populations.values()):
        raise PlanError("dataset", "has no pairs to sample")
    expected = {c: (shares or {}).get(c, targets.expected_share) for c in populations}
    sizes = dict.fromkeys(populations, 0)
    if targets.category_half_width is not None:
        for category, size in populations.items():
            sizes[category] = category_sample_size(
                size, targets.category_half_width, expected[category], targets.confidence
            )
    if targets.half_width is not None:
        overall = overall_allocation(populations, expected, targets.half_width, targets.confidence)
        sizes = {c: max(sizes[c], overall[c]) for c in populations}
    rows = tuple(
        CategoryPlan(category, populations[category], sizes[category], expected[category])
        for category in populations
        if populations[category]
    )
    return SamplePlan(targets=targets, k=k, categories=rows)


def shrunk_share(successes: float, total: int) -> float:
    """(x + 2) / (n + 4): the observed share pulled away from 0 and 1 (Agresti & Coull 1998)."""
    return (successes + SHRINK) / (total + 2 * SHRINK)


def extended_plan(plan: SamplePlan, observed: Mapping[str, tuple[int, int]]) -> SamplePlan:
    """The plan recomputed at the shares seen so far; no category shrinks.

    ``observed`` maps a category to (validated, decided) pairs. A category without decided
    pairs keeps the share it was planned with.
    """
    shares = {
        row.category: (
            shrunk_share(*observed[row.category])
            if observed.get(row.category, (0, 0))[1] > 0
            else row.expected_share
        )
        for row in plan.categories
    }
    populations = {row.category: row.population for row in plan.categories}
    again = plan_sample(populations, plan.targets, plan.k, shares)
    current = plan.sizes()
    rows = tuple(
        replace(row, pairs=max(row.pairs, current[row.category])) for row in again.categories
    )
    added = {row.category: row.pairs - current[row.category] for row in rows}
    extension = {"added": added, "shares": shares}
    return SamplePlan(plan.targets, plan.k, rows, (*plan.extensions, extension))


# --------------------------------------------------------------------------------------------
# Drawing


def category_order(ids: Sequence[str], seed: int, category: str) -> list[str]:
    """The category's ids in a seeded random order; a sample of n pairs is its first n.

    The generator is seeded with text, which Python hashes the same way on every run and
    platform (SHA-512 of the string), so the order depends only on the seed, the category and
    the ids.
    """
    order = sorted(ids)
    random.Random(f"prb-sample/{seed}/{category}").shuffle(order)
    return order


def draw(
    pools: Mapping[str, Sequence[str]], sizes: Mapping[str, int], seed: int
) -> dict[str, list[str]]:
    """The first ``sizes[c]`` ids of each category's seeded order."""
    return {
        category: category_order(pools[category], seed, category)[: sizes.get(category, 0)]
        for category in sorted(pools)
    }


# --------------------------------------------------------------------------------------------
# Estimating


@dataclass(frozen=True)
class StratumCounts:
    """One category of a planned sample: its size in the dataset and its verdict counts."""

    category: str
    population: int
    validated: int
    excluded: int
    undecided: int
    target_half_width: float | None = None

    @property
    def sampled(self) -> int:
        return self.validated + self.excluded + self.undecided

    @property
    def decided(self) -> int:
        return self.validated + self.excluded


def effective_size(sample: int, population: int) -> float:
    """n (N - 1) / (N - n): the binomial sample size with the same variance as a sample of n
    drawn without replacement from N (infinite for a census)."""
    if sample >= population:
        return math.inf
    return sample * (population - 1) / (population - sample)


def wilson(
    share: float, size: float, confidence: float = 0.95, correction: float = 0.0
) -> tuple[float, float]:
    """Wilson score interval for ``share`` at a (possibly effective, non-integer) size; with a
    ``correction``, the lower bound is found at ``share - correction`` and the upper at
    ``share + correction`` (the continuity correction, Newcombe 1998, method 4)."""
    if math.isinf(size):
        return share, share
    z = z_value(confidence)

    def bounds(value: float) -> tuple[float, float]:
        denominator = 1 + z**2 / size
        centre = (value + z**2 / (2 * size)) / denominator
        half = z * math.sqrt(value * (1 - value) / size + z**2 / (4 * size**2)) / denominator
        return max(0.0, centre - half), min(1.0, centre + half)

    below, above = share - correction, share + correction
    low = 0.0 if below <= 0 else bounds(below)[0]
    high = 1.0 if above >= 1 else bounds(above)[1]
    return low, high


def half_step(sample: float) -> float:
    """Half a pair of a sample of ``sample`` pairs, as a share: the continuity correction."""
    return 1 / (2 * sample)


# The method of a share every pair of whose population was counted: no interval.
CENSUS = "census"


def census(share: float) -> dict[str, Any]:
    """The share of a census (the sample is the whole population, an infinite effective size):
    the population's own share, with no interval to print. ``half_width`` is 0, the sampling
    error there is, so that plans and targets read a census as exact."""
    return {"share": share, "ci_low": None, "ci_high": None, "half_width": 0.0, "method": CENSUS}


def is_census(entry: Mapping[str, Any]) -> bool:
    return entry.get("method") == CENSUS


def _interval(
    value: float | None, size: float, confidence: float, correction: float = 0.0
) -> dict[str, Any]:
    if value is None or size <= 0:
        return {"share": None, "ci_low": None, "ci_high": None, "half_width": None}
    if math.isinf(size):
        return census(value)
    low, high = wilson(value, size, confidence, correction)
    return {
        "share": value,
        "ci_low": low,
        "ci_high": high,
        "half_width": (high - low) / 2,
        "method": "wilson_cc_fpc" if correction else "wilson_fpc",
    }


def category_estimate(
    successes: float, sample: int, population: int, confidence: float = 0.95
) -> dict[str, Any]:
    """The category's share among ``sample`` pairs, with a continuity-corrected Wilson
    interval under the FPC (``successes`` may be fractional: an expected count, for planning)."""
    if sample <= 0:
        return _interval(None, 0, confidence)
    return _interval(
        successes / sample, effective_size(sample, population), confidence, half_step(sample)
    )


def stratified_estimate(
    strata: Sequence[tuple[float, int, int]], confidence: float = 0.95
) -> dict[str, Any]:
    """sum W_h p_h over (successes, sample, population) triples, with a Wilson interval at
    Kish's effective size p q / v; None when a category has nothing to estimate from."""
    total = sum(population for _, _, population in strata)
    if total == 0 or any(sample <= 0 for _, sample, population in strata if population):
        return _interval(None, 0, confidence)
    weights = [population / total for _, _, population in strata]
    share = sum(w * x / n for w, (x, n, _) in zip(weights, strata, strict=True) if n)
    shrunk = [shrunk_share(x, n) for x, n, _ in strata]
    variance = sum(
        w**2 * sample_variance(s, n, population)
        for w, s, (_, n, population) in zip(weights, shrunk, strata, strict=True)
        if population
    )
    smooth = sum(w * s for w, s in zip(weights, shrunk, strict=True))
    size = math.inf if variance == 0 else smooth * (1 - smooth) / variance
    return _interval(share, size, confidence, half_step(sum(n for _, n, _ in strata)))


def dataset_estimate(
    strata: Sequence[StratumCounts], confidence: float = 0.95, overall_target: float | None = None
) -> dict[str, Any]:
    """The validated share of the dataset, per category and overall, from a planned sample.

    ``share``: among decided pairs (undecided ones assumed alike). ``low`` / ``high``: the same
    estimate with every undecided pair counted as excluded / validated, so the truth lies
    between ``low.ci_low`` and ``high.ci_high`` whatever the undecided pairs turn out to be
    (between ``low.share`` and ``high.share`` for a census, which has no interval).
    """
    rows = []
    for stratum in strata:
        share = category_estimate(
            stratum.validated, stratum.decided, stratum.population, confidence
        )
        rows.append(
            {
                **asdict(stratum),
                "sampled": stratum.sampled,
                "decided": stratum.decided,
                "share": share,
                "low": category_estimate(
                    stratum.validated, stratum.sampled, stratum.population, confidence
                ),
                "high": category_estimate(
                    stratum.validated + stratum.undecided,
                    stratum.sampled,
                    stratum.population,
                    confidence,
                ),
                "target_reached": _reached(share, stratum.target_half_width),
            }
        )
    overall_share = stratified_estimate(
        [(s.validated, s.decided, s.population) for s in strata], confidence
    )
    overall = {
        "population": sum(s.population for s in strata),
        "sampled": sum(s.sampled for s in strata),
        "decided": sum(s.decided for s in strata),
        "undecided": sum(s.undecided for s in strata),
        "share": overall_share,
        "low": stratified_estimate(
            [(s.validated, s.sampled, s.population) for s in strata], confidence
        ),
        "high": stratified_estimate(
            [(s.validated + s.undecided, s.sampled, s.population) for s in strata], confidence
        ),
        "target_half_width": overall_target,
        "target_reached": _reached(overall_share, overall_target),
    }
    return {"confidence": confidence, "overall": overall, "per_category": rows}


def _reached(estimate: Mapping[str, Any], target: float | None) -> bool | None:
    if target is None or estimate["half_width"] is None:
        return None
    return bool(estimate["half_width"] <= target)


def audit_estimate(
    plan_json: Mapping[str, Any], per_category: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The dataset estimate for a campaign's stored plan and the audit's verdict counts per
    category (``summaries.validity_summary``); a planned category with no row counts zero."""
    plan = SamplePlan.from_json(plan_json)
    counts = {row["category"]: row for row in per_category}
    strata = [
        StratumCounts(
            category=row.category,
            population=row.population,
            validated=int(counts.get(row.category, {}).get("validated", 0)),
            excluded=int(counts.get(row.category, {}).get("excluded", 0)),
            undecided=int(counts.get(row.category, {}).get("undecided", 0)),
            target_half_width=plan.targets.category_half_width,
        )
        for row in plan.categories
    ]
    estimate = dataset_estimate(strata, plan.targets.confidence, plan.targets.half_width)
    return {**estimate, "plan": plan.as_json()}
