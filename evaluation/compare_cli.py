"""``python -m evaluation compare RUN_DIR [RUN_DIR ...]``: the leaderboard of runs ``score``
wrote, with paired tests (see :mod:`evaluation.compare` and docs/evaluation.md)::

    python -m evaluation compare runs/rm-a runs/rm-b runs/length
    python -m evaluation compare runs/* --ties as-wrong --format latex --out table.tex
"""

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from evaluation.compare import ALPHA, TIE_POLICIES, Settings, build_leaderboard
from evaluation.compare_formats import FORMATS, RENDERERS
from evaluation.config import add_confidence_option, add_retired_option, level
from evaluation.errors import EvaluationError
from evaluation.runs import align_runs, read_run


def add_compare_command(commands: Any) -> None:
    """The ``compare`` sub-command, on the parser's sub-command set."""
    compare = commands.add_parser(
        "compare",
        help="leaderboard of several runs on the same pairs, with paired tests",
        description="Rank the runs on all, validated and excluded pairs and each category, "
        "with Wilson intervals, the difference to the best (Tango's paired score interval, exact "
        "McNemar, "
        "Holm), significance groups, validated against excluded per model, and the models "
        "that swap places between all and validated pairs.",
    )
    compare.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="score --out")
    compare.add_argument(
        "--intersect",
        action="store_true",
        help="compare on the pairs every run scored (otherwise runs must score the same pairs)",
    )
    compare.add_argument(
        "--ties",
        choices=TIE_POLICIES,
        default="left-out",
        help="rank by accuracy with ties left out (default) or counted as wrong (the paper's)",
    )
    compare.add_argument("--format", choices=FORMATS, default="text")
    compare.add_argument("--out", type=Path, help="write the leaderboard here, not to stdout")
    compare.add_argument(
        "--alpha", type=level, default=ALPHA, help="level of the significance groups"
    )
    add_confidence_option(compare, "the accuracy and difference intervals")
    # Accepted from older command lines and ignored: the comparison resamples nothing since its
    # interval became Tango's, so neither option changes a figure.
    add_retired_option(compare, "--resamples")
    add_retired_option(compare, "--seed")
    compare.set_defaults(run=run_compare)


def settings_from(args: argparse.Namespace) -> Settings:
    return Settings(
        policy=args.ties,
        confidence=args.confidence,
        alpha=args.alpha,
    )


def run_compare(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    aligned = align_runs([read_run(path) for path in args.runs], intersect=args.intersect)
    board = build_leaderboard(aligned.runs, aligned.labels, settings, notes=aligned.notes)
    text = RENDERERS[args.format](board)
    if args.out is None:
        print(text.rstrip("\n"))
    else:
        write_whole(args.out, text if text.endswith("\n") else text + "\n")
    return 0


def write_whole(path: Path, text: str) -> None:
    """``text`` into ``path`` through a hidden file renamed into place: never half a file."""
    hidden: Path | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
        ) as file:
            hidden = Path(file.name)
            file.write(text)
        os.replace(hidden, path)
    except OSError as error:
        if hidden is not None:
            hidden.unlink(missing_ok=True)
        raise EvaluationError(f"cannot write {path}: {error.strerror or error}") from None
