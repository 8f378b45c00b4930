"""Read the run folders ``score`` writes, and line them up on the same pairs for ``compare``.

A run folder holds ``scores.jsonl`` (one row per pair: ``id``, ``category``, ``outcome`` and,
when the run grouped its pairs, ``group``) and ``summary.json`` (``settings.name`` names the
run). A pair's audit subset comes from its ``group`` when that is a verdict or a subset:
``validated``, or ``excluded`` / ``undecided`` (an undecided pair counts as excluded, as
``score`` counts it, and as in exports and on the evaluations page:
:func:`evaluation.records.audit_subset`, the one definition). Runs of an export written
with ``--with-validation`` (or by ``manage.py evaluate``) carry it.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluation.compare import PairLabel, RunOutcomes
from evaluation.errors import EvaluationError
from evaluation.metrics import OUTCOMES
from evaluation.records import audit_subset
from evaluation.run_summary import EXCLUDED_WORDS

SHOWN_MISSING = 3


@dataclass(frozen=True)
class RunFolder:
    """One run as read: its name, outcome per pair, and each pair's category and subset."""

    path: Path
    name: str
    outcomes: dict[str, str]
    labels: dict[str, PairLabel]
    info: dict[str, Any]


def subset_of(group: Any) -> str | None:
    """A pair's audit subset from the ``group`` its run wrote (``None``: not a verdict)."""
    return audit_subset(group)


def read_run(path: str | Path) -> RunFolder:
    """The run in ``path``; a missing file or a malformed row is an error naming it."""
    folder = Path(path)
    summary = _read_summary(folder / "summary.json")
    outcomes: dict[str, str] = {}
    labels: dict[str, PairLabel] = {}
    scores = folder / "scores.jsonl"
    for where, row in _score_rows(scores):
        pair_id, outcome = row.get("id"), row.get("outcome")
        if not isinstance(pair_id, str) or not isinstance(outcome, str):
            raise EvaluationError(f"{where}: a row needs text fields 'id' and 'outcome'")
        if outcome not in OUTCOMES:
            raise EvaluationError(f"{where}: unknown outcome {outcome!r}")
        if pair_id in outcomes:
            raise EvaluationError(f"{where}: pair {pair_id!r} is scored twice")
        outcomes[pair_id] = outcome
        labels[pair_id] = PairLabel(str(row.get("category") or ""), subset_of(row.get("group")))
    if not outcomes:
        raise EvaluationError(f"{scores}: no scored pair")
    settings = summary.get("settings") or {}
    name = str(settings.get("name") or settings.get("model") or folder.name)
    info = {
        "path": str(folder),
        "model": settings.get("model"),
        "card": summary.get("card"),
        "self_check": summary.get("self_check"),
        # A judge's accuracy with unparsed replies read as "A", the benchmark's count.
        "accuracy_paper": summary.get("accuracy_paper"),
    }
    return RunFolder(folder, name, outcomes, labels, info)


def _read_summary(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvaluationError(
            f"{path.parent}: not a run folder (no summary.json; write one with "
            "python -m evaluation score --out)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EvaluationError(f"cannot read {path}: {error}") from None
    if not isinstance(data, dict):
        raise EvaluationError(f"{path}: expected an object")
    return data


def _score_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise EvaluationError(f"cannot read {path}: {error.strerror or error}") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise EvaluationError(f"{path}:{number}: not valid JSON ({error.msg})") from None
        if not isinstance(row, dict):
            raise EvaluationError(f"{path}:{number}: a row must be an object")
        rows.append((f"{path}:{number}", row))
    return rows


@dataclass(frozen=True)
class Aligned:
    runs: list[RunOutcomes]
    labels: dict[str, PairLabel]
    notes: list[str]


def align_runs(folders: Sequence[RunFolder], *, intersect: bool = False) -> Aligned:
    """The runs on the same pairs, with one label per pair.

    Runs whose pair sets differ are refused in one line unless ``intersect``, which keeps the
    pairs every run scored (and says how many each lost). A pair given two categories or two
    subsets by two runs is refused: those runs were not scored on the same data.
    """
    if not folders:
        raise EvaluationError("compare needs at least one run folder")
    names = [folder.name for folder in folders]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise EvaluationError(
            f"two runs are named {twice[0]!r}: give each run its own --name when scoring"
        )
    shared = set(folders[0].outcomes).intersection(*(set(f.outcomes) for f in folders[1:]))
    notes: list[str] = []
    if any(len(folder.outcomes) != len(shared) for folder in folders):
        if not intersect:
            raise EvaluationError(_difference_message(folders, shared))
        if not shared:
            raise EvaluationError("the runs share no pair: there is nothing to compare")
        lost = ", ".join(f"{f.name} {len(f.outcomes) - len(shared)}" for f in folders)
        notes.append(
            f"compared on the {len(shared)} pairs every run scored (--intersect); pairs left "
            f"out per run: {lost}"
        )
    labels = {pid: _one_label(pid, folders) for pid in sorted(shared)}
    runs = [RunOutcomes(f.name, {pid: f.outcomes[pid] for pid in labels}, f.info) for f in folders]
    if not any(label.subset for label in labels.values()):
        notes.append(
            "the runs carry no verdicts, so there is no validated or excluded subset (score an "
            "export written with --with-validation)"
        )
    else:
        notes.append(EXCLUDED_WORDS)
    return Aligned(runs, labels, notes)


def _difference_message(folders: Sequence[RunFolder], shared: set[str]) -> str:
    """Which run differs from the first one, and by which pairs (a few named)."""
    first = folders[0]
    for folder in folders[1:]:
        missing = sorted(set(first.outcomes) - set(folder.outcomes))
        extra = sorted(set(folder.outcomes) - set(first.outcomes))
        if not missing and not extra:
            continue
        named = missing or extra
        shown = ", ".join(repr(pid) for pid in named[:SHOWN_MISSING])
        more = ", ..." if len(named) > SHOWN_MISSING else ""
        what = f"lacks {len(named)} of" if missing else f"has {len(named)} pairs not in"
        return (
            f"the runs score different pairs: {folder.path} {what} {first.path}'s "
            f"({shown}{more}); compare them on the {len(shared)} pairs "
            "they share with --intersect"
        )
    raise AssertionError("called for runs that score the same pairs")


def _one_label(pair_id: str, folders: Sequence[RunFolder]) -> PairLabel:
    categories = {folder.labels[pair_id].category for folder in folders}
    subsets = {folder.labels[pair_id].subset for folder in folders} - {None}
    if len(categories) > 1 or len(subsets) > 1:
        seen: Mapping[str, PairLabel] = {f.name: f.labels[pair_id] for f in folders}
        described = "; ".join(
            f"{name}: {label.category or '(none)'}, {label.subset or 'no verdict'}"
            for name, label in seen.items()
        )
        raise EvaluationError(
            f"pair {pair_id!r} is labelled differently by the runs ({described}): they were "
            "not scored on the same data"
        )
    return PairLabel(categories.pop(), subsets.pop() if subsets else None)
