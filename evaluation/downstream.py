"""Downstream results for ``correlate``, read from the files the benchmark's pipelines write.

Three layouts, told apart by what they are:

- **Best-of-N**: ``evaluation_summary.json``, ``{subset: {k: {"mean_score": ..., "num_examples":
  ..., ...}}}``, one file per reward model, which the model's folder names
  (``bon/rm-a/evaluation_summary.json`` is ``rm-a``). Columns ``bon`` (every subset the files
  hold, at one k, each answer weighing the same; a model whose file lacks one is left out of it)
  and ``bon/<subset>``; k is ``--bon-k``, by default the largest k every file holds for every
  subset it has.
- **PPO**: a folder of ``<subset>_<model>_evaluation.txt`` summaries (``Average score:``,
  ``Total entries:``, ``subset:`` lines); the file name gives the model, its ``subset:`` line the
  subset. Columns ``ppo`` (every subset the folder holds, each answer weighing the same; a model
  lacking one is left out of it) and ``ppo/<subset>``.
- **A table**: CSV, JSON or JSONL with a model column and one column per result.

A file in none of these shapes is an error naming the file and what it lacks.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.errors import EvaluationError

BON_SUMMARY = "evaluation_summary.json"
PPO_SUFFIX = "_evaluation.txt"
# The benchmark's short names of its subsets, which start its PPO file names.
SUBSET_SHORT = {
    "Lifestyle_and_Personal_Development": "Lifestyle",
    "Art_and_Entertainment": "Art",
    "Society_and_Culture": "Society",
}
PPO_LINE = re.compile(r"^\s*(Total entries|Average score|subset)\s*:\s*(.+?)\s*$", re.MULTILINE)


@dataclass
class Downstream:
    """Downstream values: column -> model -> value, and notes on what was left out."""

    columns: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, column: str, model: str, value: float, source: Path) -> None:
        values = self.columns.setdefault(column, {})
        if model in values:
            raise EvaluationError(f"{source}: a second {column!r} value for model {model!r}")
        values[model] = value

    @property
    def models(self) -> set[str]:
        return {model for values in self.columns.values() for model in values}


@dataclass(frozen=True)
class Result:
    """One subset's mean score over ``count`` answers."""

    mean: float
    count: int


def pooled(results: Sequence[Result]) -> float:
    """The mean over every answer of several subsets (each subset weighed by its answers)."""
    total = sum(result.count for result in results)
    if total == 0:
        return sum(result.mean for result in results) / len(results)
    return sum(result.mean * result.count for result in results) / total


def is_bon_summary(path: Path) -> bool:
    return path.is_file() and path.name == BON_SUMMARY


def read_bon(paths: Sequence[Path], k: int | None, into: Downstream) -> None:
    """Best-of-N summaries, one per model, into ``bon`` and ``bon/<subset>`` columns.

    ``bon`` pools every subset the files hold, as ``ppo`` does: a model whose file lacks one
    is left out of it (a mean over fewer subsets is another figure), with a note naming what it
    lacks, and keeps its ``bon/<subset>`` values."""
    summaries = {path: bon_results(path) for path in paths}
    chosen_k = k if k is not None else common_k(summaries)
    subsets = {subset for by_subset in summaries.values() for subset in by_subset}
    into.notes.append(f"bon: best-of-{chosen_k}")
    for path, by_subset in summaries.items():
        model = path.parent.name
        at_k = {}
        for subset, by_k in by_subset.items():
            if chosen_k not in by_k:
                raise EvaluationError(f"{path}: subset {subset!r} has no k={chosen_k}")
            at_k[subset] = by_k[chosen_k]
            into.add(f"bon/{subset}", model, by_k[chosen_k].mean, path)
        if set(at_k) == subsets:
            into.add("bon", model, pooled(list(at_k.values())), path)
        else:
            lacking = ", ".join(sorted(subsets - set(at_k)))
            into.notes.append(f"bon: {model} left out of the pooled column (no {lacking})")


def bon_results(path: Path) -> dict[str, dict[int, Result]]:
    """``{subset: {k: Result}}`` of one ``evaluation_summary.json``."""
    data = _json(path)
    if not isinstance(data, dict) or not data:
        raise EvaluationError(f"{path}: expected {{subset: {{k: {{mean_score, ...}}}}}}")
    found: dict[str, dict[int, Result]] = {}
    for subset, by_k in data.items():
        if not isinstance(by_k, dict) or not by_k:
            raise EvaluationError(f"{path}: subset {subset!r} must map each k to its figures")
        found[subset] = {}
        for key, figures in by_k.items():
            where = f"{path}: subset {subset!r}, k {key!r}"
            if not str(key).isdigit() or not isinstance(figures, dict):
                raise EvaluationError(f"{where}: expected a k and its figures")
            mean = figures.get("mean_score")
            if not isinstance(mean, int | float) or isinstance(mean, bool):
                raise EvaluationError(f"{where}: no numeric 'mean_score'")
            count = figures.get("num_examples", 0)
            found[subset][int(key)] = Result(float(mean), int(count or 0))
    return found


def common_k(summaries: dict[Path, dict[str, dict[int, Result]]]) -> int:
    """The largest k every file holds for every subset it has."""
    shared: set[int] | None = None
    for by_subset in summaries.values():
        for by_k in by_subset.values():
            shared = set(by_k) if shared is None else shared & set(by_k)
    if not shared:
        raise EvaluationError("the best-of-N summaries share no k; choose one with --bon-k")
    return max(shared)


def read_ppo(folder: Path, into: Downstream) -> None:
    """A folder of PPO summaries into ``ppo`` and ``ppo/<subset>`` columns."""
    files = sorted(folder.glob(f"*{PPO_SUFFIX}"))
    if not files:
        raise EvaluationError(f"{folder}: no *{PPO_SUFFIX} files (PPO summaries)")
    by_model: dict[str, dict[str, Result]] = {}
    for path in files:
        subset, model, result = ppo_result(path)
        if subset in by_model.setdefault(model, {}):
            raise EvaluationError(f"{path}: a second {subset!r} summary for model {model!r}")
        by_model[model][subset] = result
        into.add(f"ppo/{subset}", model, result.mean, path)
    subsets = {subset for results in by_model.values() for subset in results}
    for model, results in sorted(by_model.items()):
        if set(results) == subsets:
            into.add("ppo", model, pooled(list(results.values())), folder)
        else:
            lacking = ", ".join(sorted(subsets - set(results)))
            into.notes.append(f"ppo: {model} left out of the pooled column (no {lacking})")


def ppo_result(path: Path) -> tuple[str, str, Result]:
    """The subset, the model (from the file name) and the mean score of one PPO summary."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise EvaluationError(f"cannot read {path}: {error}") from None
    lines = dict(PPO_LINE.findall(text))
    if "Average score" not in lines:
        raise EvaluationError(f"{path}: no 'Average score:' line (not a PPO summary)")
    try:
        mean = float(lines["Average score"])
        count = int(lines.get("Total entries", "0"))
    except ValueError:
        raise EvaluationError(
            f"{path}: 'Average score' or 'Total entries' is not a number"
        ) from None
    stem = path.name.removesuffix(PPO_SUFFIX)
    subset = lines.get("subset")
    if subset is None:
        raise EvaluationError(f"{path}: no 'subset:' line to tell the subset from the model")
    short = SUBSET_SHORT.get(subset, subset)
    if not stem.startswith(f"{short}_") or stem == f"{short}_":
        raise EvaluationError(
            f"{path}: the name should be {short}_<model>{PPO_SUFFIX} for subset {subset!r}"
        )
    return subset, stem.removeprefix(f"{short}_"), Result(mean, count)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EvaluationError(f"cannot read {path}: {error}") from None
