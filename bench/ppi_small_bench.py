"""The active design of ``audit/active_sample.py`` at small human budgets: coverage per
category and overall when each category expects only a few dozen human pairs, how often a
category's draw holds one kind of verdict only, and what the audit's small-sample rule
(``active_sample.SMALL_SAMPLES``) withholds and how its printed intervals cover. Printed by
``python bench/ppi_coverage.py --small`` (``--quick`` for a check).

The population is section 7's (``ppi_designs_bench``: 300, 500 and 800 pairs, validated shares
0.6, 0.8 and 0.9, the model's probabilities miscalibrated in the logistic or the bent shape),
fixed per seed. Each replicate draws every category actively (Poisson, ``active_probabilities``
at the budget, the default floor) and estimates it with ``ppi_designs.design_estimate``, the
function the audit calls; the rule is ``active_sample.withheld``, the one the audit applies.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from bench import ppi_designs_bench
from bench.ppi_designs_bench import Population
from prb_annotate.audit import active_sample, ppi_designs

if not settings.configured:  # the rule's words are gettext's; the bench runs without a site
    settings.configure(USE_I18N=False)

# Expected human pairs per category (the active budget), smallest first.
BUDGETS = (15, 20, 30, 40, 60, 80, 120)


@dataclass
class Tally:
    """Counts over the replicates of one budget and shape, per category and overall."""

    covered: dict[str, int]
    one_kind: dict[str, int]
    shown: dict[str, int]
    shown_covered: dict[str, int]
    decided: dict[str, int]

    @classmethod
    def empty(cls, names: Sequence[str]) -> "Tally":
        return cls(*(dict.fromkeys(names, 0) for _ in range(5)))


def _covers(estimate: dict[str, float | None], truth: float) -> bool:
    low, high = estimate["ci_low"], estimate["ci_high"]
    return low is not None and high is not None and low - 1e-12 <= truth <= high + 1e-12


def run_budget(world: Population, budget: int, count: int, seed: int) -> Tally:
    """``count`` active draws at ``budget`` expected pairs per category."""
    rng = np.random.default_rng(seed)
    truth = world.truths()
    inclusion = {
        name: ppi_designs.active_probabilities(reported, budget)
        for name, reported in world.reported.items()
    }
    tally = Tally.empty(list(truth))
    for _ in range(count):
        strata = []
        for name, reported in world.reported.items():
            drawn = ppi_designs.poisson_draw(inclusion[name], rng)
            human = world.human[name][drawn]
            strata.append(ppi_designs.ScoredStratum(name, reported, inclusion[name], drawn, human))
        estimate = ppi_designs.design_estimate(strata)
        rows = {row["category"]: row["estimate"] for row in estimate["per_category"]}
        rows["overall"] = estimate["overall"]["estimate"]
        reasons = active_sample.withheld(
            {s.category: (s.sample, int(s.human.sum())) for s in strata}
        )
        for stratum in strata:
            tally.one_kind[stratum.category] += stratum.sample > 0 and (
                int(stratum.human.sum()) in (0, stratum.sample)
            )
            tally.decided[stratum.category] += stratum.sample
        for name, row in rows.items():
            hit = _covers(row, truth[name])
            tally.covered[name] += hit
            if reasons[name] is None:
                tally.shown[name] += 1
                tally.shown_covered[name] += hit
    return tally


def table(count: int, seed: int) -> tuple[list[str], float]:
    """The printed lines, and the lowest coverage of a printed interval (any budget, shape,
    category or overall) under the rule."""
    rule = active_sample.SMALL_SAMPLES
    lines = [
        f"{count} replicates per row; active design, floor {ppi_designs.ACTIVE_FLOOR}; "
        f"nominal 95%; rule: an interval needs {rule.minimum} decided drawn pairs in a "
        "category and both kinds of verdict among them, the overall every category's",
    ]
    lowest = 1.0
    for shape in ppi_designs_bench.SHAPES:
        world = ppi_designs_bench.population_at_agreement(seed, shape=shape)
        truth = world.truths()
        names = list(truth)
        lines += [
            f"{shape} shape, true shares " + " / ".join(f"{truth[n]:.3f}" for n in names) + ":",
            "budget | mean decided a / b / c | coverage a / b / c / all      | "
            "one kind a / b / c  | printed a / b / c / all       | "
            "printed cover a / b / c / all",
        ]
        for number, budget in enumerate(BUDGETS):
            tally = run_budget(world, budget, count, seed + number)
            shown_cover = [
                tally.shown_covered[n] / tally.shown[n] if tally.shown[n] else float("nan")
                for n in names
            ]
            lowest = min([lowest, *(c for c in shown_cover if c == c)])
            cats = names[:-1]
            lines.append(
                f"{budget:>6} | "
                + " / ".join(f"{tally.decided[n] / count:>4.1f}" for n in cats)
                + " | "
                + " / ".join(f"{tally.covered[n] / count:.3f}" for n in names)
                + " | "
                + " / ".join(f"{tally.one_kind[n] / count:.3f}" for n in cats)
                + " | "
                + " / ".join(f"{tally.shown[n] / count:.3f}" for n in names)
                + " | "
                + " / ".join(f"{value:.3f}" for value in shown_cover)
            )
    return lines, lowest
