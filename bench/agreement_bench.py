"""Agreement and audit timings. Run by hand: ``python bench/agreement_bench.py``.

1. The full audit (every question, every coefficient, 1,000 bootstrap resamples, verdicts,
   biases, annotator table, Dawid-Skene) of a synthetic campaign of 3,000 pairs x 3 annotators.
   Target: under 3 s.
2. Krippendorff's alpha (nominal) alone on 100,000 units x 5 annotators. Target: under 1 s.
   Beside it, NLTK's ``AnnotationTask.alpha()`` on the same data, as a baseline.

NLTK is not a dependency of the project. To get the baseline line, install it apart from the
project's virtual environment and put it on the path, e.g.::

    python -m pip install --target /tmp/nltk-bench nltk
    PYTHONPATH=/tmp/nltk-bench python bench/agreement_bench.py

Without it the NLTK line says it was skipped. NLTK gets the same 100,000 x 5 matrix as
(coder, item, label) triples built before the clock starts; ``--nltk-units N`` uses the first
N units only (for a quicker run). The default run takes well under a minute.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prb_annotate.audit import agreement, assembly, rule

CRITERIA = rule.DEFAULT_CRITERIA
GOOD_RATINGS = (5, 5, 5, 5, 5, 4, 4, 4, 3)
LOW_RATINGS = (1, 2, 2, 3)


def synthetic_campaign(
    pairs: int = 3000, annotators: int = 3, *, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A campaign where every annotator answers every pair, with realistic noise.

    About 80% of pairs are sound (both answers good, preference is the difference, chosen
    fits); the rest carry one flaw each. Each annotator answers the truth with some noise.
    """
    rng = np.random.default_rng(seed)
    pair_ids = np.arange(1, pairs + 1)
    categories = np.array(["Art", "Lifestyle", "Society"])[rng.integers(0, 3, pairs)]
    chosen_len = rng.integers(300, 2000, pairs)
    rejected_len = rng.integers(300, 2000, pairs)
    items = pd.DataFrame(
        {
            "item_id": pair_ids,
            "pair_id": pair_ids,
            "external_id": [f"p{i:05d}" for i in pair_ids],
            "category": categories,
            "item_kind": "regular",
            "required": 3,
            "gold_answers": None,
            "chosen_len": chosen_len,
            "rejected_len": rejected_len,
        }
    )
    flaw = rng.choice(
        ["none", "low_chosen", "low_rejected", "quality", "label"],
        size=pairs,
        p=[0.8, 0.05, 0.05, 0.05, 0.05],
    )
    rows = []
    names = [f"annotator{i}" for i in range(annotators)]
    annotation_id = 0
    for index, pair_id in enumerate(pair_ids):
        for annotator_index, name in enumerate(names):
            annotation_id += 1
            noisy = rng.random() < 0.15
            fit = "rejected" if flaw[index] == "label" else "chosen"
            differentiator = "quality" if flaw[index] == "quality" else "preference"
            if noisy:
                fit = rng.choice(rule.RUBRIC_FIT)
                differentiator = rng.choice(rule.DIFFERENTIATOR)
            position = "A" if rng.random() < 0.5 else "B"
            row = {
                "annotation_id": annotation_id,
                "assignment_id": annotation_id,
                "item_id": pair_id,
                "pair_id": pair_id,
                "external_id": f"p{pair_id:05d}",
                "category": categories[index],
                "item_kind": "regular",
                "annotator": name,
                "annotator_id": annotator_index + 1,
                "chosen_position": position,
                "rubric_fit": fit,
                "rubric_fit_position": (
                    "tie"
                    if fit == "tie"
                    else position
                    if fit == "chosen"
                    else "AB"[position == "A"]
                ),
                "differentiator": differentiator,
                "confidence": "high",
                "flagged": bool(rng.random() < 0.01),
                "comment": "",
                "time_on_task_ms": int(rng.integers(20_000, 200_000)),
                "submitted_at": None,
                "chosen_len": chosen_len[index],
                "rejected_len": rejected_len[index],
            }
            for side in rule.SIDES:
                low = flaw[index] == f"low_{side}"
                for criterion in CRITERIA:
                    scale = LOW_RATINGS if low else GOOD_RATINGS
                    row[rule.quality_column(side, criterion)] = int(rng.choice(scale))
            rows.append(row)
    return pd.DataFrame(rows), items


def timed(function: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """Median wall-clock and median CPU seconds over ``repeat`` runs, and the last result.

    CPU time is printed too because on a shared machine the wall clock also measures the
    neighbours.
    """
    wall, cpu = [], []
    result: object = None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu), result


def nltk_task_data(data: np.ndarray) -> list[tuple[str, str, int]]:
    """NLTK's (coder, item, label) triples for the same annotators x units matrix."""
    return [
        (f"c{coder}", f"u{unit}", int(data[coder, unit]))
        for coder in range(data.shape[0])
        for unit in range(data.shape[1])
        if not np.isnan(data[coder, unit])
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--units", type=int, default=100_000)
    parser.add_argument(
        "--nltk-units", type=int, default=None, help="units for the NLTK line (default: all)"
    )
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    frame, items = synthetic_campaign(args.pairs)
    thresholds = rule.Thresholds()
    seconds, cpu, report = timed(
        lambda: assembly.audit_report(frame, items, thresholds, resamples=args.resamples, seed=1),
        args.repeat,
    )
    assert isinstance(report, dict)
    counts = report["counts"]
    print(
        f"full audit, {args.pairs} pairs x 3 annotators, {args.resamples} resamples: "
        f"{seconds:.3f} s wall, {cpu:.3f} s CPU (medians of {args.repeat}; target < 3 s) "
        f"[{counts['validated']} validated, {counts['excluded']} excluded]"
    )

    rng = np.random.default_rng(2)
    truth = rng.integers(0, 4, args.units)
    data = np.where(rng.random((5, args.units)) < 0.8, truth, rng.integers(0, 4, (5, args.units)))
    data = data.astype(float)
    data[rng.random(data.shape) < 0.05] = np.nan
    domain = [0, 1, 2, 3]
    seconds, cpu, alpha = timed(
        lambda: agreement.krippendorff_alpha(data, "nominal", domain), args.repeat
    )
    print(
        f"alpha (nominal), {args.units} units x 5 annotators: {seconds:.3f} s wall, "
        f"{cpu:.3f} s CPU (medians of {args.repeat}; target < 1 s) alpha={alpha:.6f}"
    )
    try:
        import nltk  # noqa: F401
    except ImportError:
        print("NLTK AnnotationTask: skipped, nltk is not importable (see this file's docstring)")
        return
    from nltk.metrics.agreement import AnnotationTask

    subset = data[:, : args.nltk_units or args.units]
    triples = nltk_task_data(subset)
    ours, ours_cpu, ours_alpha = timed(
        lambda: agreement.krippendorff_alpha(subset, "nominal", domain), args.repeat
    )
    theirs, theirs_cpu, theirs_alpha = timed(
        lambda: AnnotationTask(data=triples).alpha(), args.repeat
    )
    print(
        f"NLTK AnnotationTask.alpha, {subset.shape[1]} units x 5 annotators: {theirs:.3f} s wall, "
        f"{theirs_cpu:.3f} s CPU (medians of {args.repeat}) alpha={theirs_alpha:.6f}; ours on the "
        f"same data in the same run: {ours:.4f} s wall, {ours_cpu:.4f} s CPU "
        f"alpha={ours_alpha:.6f} ({theirs_cpu / ours_cpu:.0f}x less CPU)"
    )


if __name__ == "__main__":
    main()
