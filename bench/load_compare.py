"""What ``annotate_load.py`` prints of a run (with the statements per cycle, counted in
process), and its side-by-side runs for ``--compare``: this tree and other commits, each
checked out into a temporary ``git worktree``, run in turn with the order alternating every
round, so that all of them share the machine's state of the moment; the medians of the rounds
are printed with each commit's ratio to this tree.

The load generator is this tree's script for every commit: only the server's code (Django,
the campaign set-up, gunicorn) comes from the commit under test.
"""

import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The figures compared, as (result key, heading, decimals); medians over the rounds.
FIGURES = (
    ("cycles_per_s", "cycles/s", 1),
    ("statements_per_cycle", "statements/cycle", 1),
    ("server_cpu_ms_per_cycle", "web CPU ms/cycle", 2),
    ("inprocess_cpu_ms_per_cycle", "in-process CPU ms/cycle", 2),
    ("pg_cpu_ms_per_cycle", "postgres CPU ms/cycle", 2),
)
# Figures whose ratio to this tree is printed beside them.
RATIOS = tuple(key for key, _, _ in FIGURES)
RATIO_WIDTH = len(" (1.00x)")


@dataclass(frozen=True)
class Tree:
    label: str  # the commit, as given, or "this tree"
    root: Path


def statements_per_cycle(
    campaign_id: int, tokens: list[str], cycles: int, form: Callable[[int], dict[str, Any]]
) -> tuple[dict[str, float], list[int]]:
    """Statements of next and of submit, the mean over ``cycles`` cycles in process, the
    annotators taking turns (each one's first cycle not counted: its plan starts cold), and the
    median CPU time of a cycle in this one process (``cpu_ms``: no workers, threads or network
    between, so less noisy than the load's figures on a shared machine); and the annotations
    stored, for the invariants read back after the run."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    clients = [Client(HTTP_AUTHORIZATION=f"Token {token}") for token in tokens]
    counts: dict[str, list[int]] = {"next": [], "submit": []}
    cpu_ms = []
    accepted = []
    for index in range(len(clients) + cycles):
        client = clients[index % len(clients)]
        started = time.process_time()
        with CaptureQueriesContext(connection) as reserving:
            response = client.post(f"/api/campaigns/{campaign_id}/next/")
        assert response.status_code == 200, response.content
        assignment = response.json()["assignment"]
        with CaptureQueriesContext(connection) as submitting:
            response = client.post(
                f"/api/assignments/{assignment}/submit/",
                form(assignment),
                content_type="application/json",
            )
        assert response.status_code == 201, response.content
        spent = time.process_time() - started
        accepted.append(response.json()["annotation"])
        if index >= len(clients):
            counts["next"].append(len(reserving))
            counts["submit"].append(len(submitting))
            cpu_ms.append(1000 * spent)
    figures = {op: statistics.mean(values) for op, values in counts.items()}
    figures["cpu_ms"] = statistics.median(cpu_ms)
    return figures, accepted


def load_line(database: str, count: int, result: dict[str, Any]) -> str:
    checks = result["invariants"]
    commits = result.get("pg_transactions_per_cycle")
    pg_cpu = result.get("pg_cpu_ms_per_cycle")
    return (
        f"{database:<9} {count:>3} annotators  {result['threads']} thr  "
        f"{result['cycles']:>6} cycles  {result['cycles_per_s']:7.1f} cycles/s  "
        f"next p50/p95 {result['next_p50']:5.1f}/{result['next_p95']:5.1f} ms  "
        f"submit {result['submit_p50']:5.1f}/{result['submit_p95']:5.1f} ms  "
        f"cycle {result['cycle_p50']:5.1f}/{result['cycle_p95']:5.1f} ms  "
        f"statements/cycle {result['statements_per_cycle']:4.1f} "
        f"(next {result['statements_next']:4.1f}; "
        f"{result['inprocess_cpu_ms_per_cycle']:.2f} ms CPU in process)  "
        + (f"pg xacts/cycle {commits:4.1f}  " if commits is not None else "")
        + f"cpu/cycle server {result['server_cpu_ms_per_cycle']:4.1f} ms "
        f"client {result['client_cpu_ms_per_cycle']:4.1f} ms  "
        + (f"postgres {pg_cpu:4.1f} ms  " if pg_cpu is not None else "")
        + f"errors {result['errors']}  over-assigned {checks['over_assigned']}  "
        f"duplicates {checks['duplicates']}  lost {checks['lost']}  "
        f"double-counted {checks['double_counted']}"
        + (f"\n          errors: {result['error_sample']}" if result["error_sample"] else "")
    )


def git(root: Path, *arguments: str) -> str:
    done = subprocess.run(["git", *arguments], cwd=root, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def this_tree(root: Path) -> Tree:
    """This working tree, named by its commit (with + when it has uncommitted changes)."""
    head = git(root, "rev-parse", "--short", "HEAD")
    dirty = bool(git(root, "status", "--porcelain", "--untracked-files=no"))
    return Tree(f"this tree ({head}{'+' if dirty else ''})", root)


@contextmanager
def worktrees(root: Path, revisions: list[str]) -> Iterator[list[Tree]]:
    """Each revision checked out (detached) into a temporary worktree, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="prb_annotate_compare_") as folder:
        trees = []
        try:
            for revision in revisions:
                path = Path(folder) / revision.replace("/", "_")
                git(root, "worktree", "add", "--detach", "--quiet", str(path), revision)
                short = git(path, "rev-parse", "--short", "HEAD")
                trees.append(Tree(revision if revision == short else f"{revision} ({short})", path))
            yield trees
        finally:
            for tree in trees:
                git(root, "worktree", "remove", "--force", str(tree.root))


def schedule(trees: list[Tree], rounds: int) -> Iterator[tuple[int, Tree]]:
    """(round, tree) in the order of running: the trees turn by one place every round, so
    that none of them always runs first (a cold cache) or last."""
    for number in range(rounds):
        shift = number % len(trees)
        for tree in trees[shift:] + trees[:shift]:
            yield number, tree


def median(results: list[dict[str, Any]], key: str) -> float | None:
    values = [result[key] for result in results if result.get(key) is not None]
    return statistics.median(values) if values else None


def table(trees: list[Tree], results: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The medians of each tree's rounds, with the ratio of each to the first tree."""
    label_width = max(len(tree.label) for tree in trees)
    widths = [len(heading) + RATIO_WIDTH for _, heading, _ in FIGURES]
    headings = [figure[1].rjust(width) for figure, width in zip(FIGURES, widths, strict=True)]
    lines = [" " * label_width + "  " + "  ".join(headings) + "  lost/over"]
    first = results[trees[0].label]
    for tree in trees:
        rows = results[tree.label]
        cells = []
        for (key, _, decimals), width in zip(FIGURES, widths, strict=True):
            value, base = median(rows, key), median(first, key)
            cell = "-" if value is None else f"{value:.{decimals}f}"
            if key in RATIOS and value is not None and base and tree is not trees[0]:
                cell += f" ({value / base:.2f}x)"
            else:
                cell += " " * RATIO_WIDTH
            cells.append(cell.rjust(width))
        lost = sum(row["invariants"]["lost"] for row in rows)
        over = sum(row["invariants"]["over_assigned"] for row in rows)
        lines.append(f"{tree.label:<{label_width}}  " + "  ".join(cells) + f"  {lost}/{over}")
    return lines


def compare(
    root: Path,
    revisions: list[str],
    rounds: int,
    databases: list[str],
    run: Callable[[str, Tree], dict[str, Any]],
    report: Callable[[str, Tree, int, dict[str, Any]], None],
) -> None:
    """``run(database, tree)`` for every round, tree and database; ``report`` prints each run
    as it ends, the table of medians follows for each database."""
    with worktrees(root, revisions) as others:
        trees = [this_tree(root), *others]
        for database in databases:
            results: dict[str, list[dict[str, Any]]] = {tree.label: [] for tree in trees}
            for number, tree in schedule(trees, rounds):
                result = run(database, tree)
                results[tree.label].append(result)
                report(database, tree, number, result)
            print(f"\n{database}: median of {rounds} rounds, alternating, ratio to this tree")
            for line in table(trees, results):
                print(f"  {line}", flush=True)
            print()
