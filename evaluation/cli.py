"""Command line: ``python -m evaluation score|correlate|compare ...``.

Score a split with a reward model (or a judge), writing ``OUT/scores.jsonl`` and
``OUT/summary.json`` and printing a table::

    python -m evaluation score --data split.jsonl --model DIR_OR_ID --mode profile --out runs/a
    torchrun --nproc_per_node 4 -m evaluation score --data DIR --model ID --out runs/rm1

Compare runs on the same pairs, with paired tests (``evaluation/compare_cli.py``)::

    python -m evaluation compare runs/rm-a runs/rm-b runs/length

Correlate benchmark accuracy per reward model with users' downstream results (BoN, PPO)::

    python -m evaluation correlate --bench runs/*/summary.json --downstream downstream.csv

``--model builtin:length`` (or ``builtin:profile-overlap``, ``builtin:random``) scores with a
baseline that needs no weights (``evaluation/baselines.py``);
``python -m evaluation make-tiny-model DIR`` writes a random-weight model for plumbing checks.

Exit status: 0 on success, 2 on bad input or setup (one line says what and where; under
``torchrun``, printed by rank 0 only). See docs/evaluation.md.
"""

import argparse
import csv
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from evaluation import strict_json
from evaluation.baselines import is_builtin
from evaluation.compare_cli import add_compare_command, write_whole
from evaluation.config import (
    PAPER_JUDGE_SEED,
    PAPER_MAX_LENGTH,
    ScoreConfig,
    add_confidence_option,
    add_model_options,
    add_retired_option,
)
from evaluation.correlation import Correlation, correlations, paired_values, ranking_agreement
from evaluation.endpoint import add_endpoint_options, endpoint_from_options
from evaluation.errors import EvaluationError
from evaluation.inputs import PROFILE_FORMATS
from evaluation.judge_templates import (
    REASONING_NEW_TOKENS,
    VERDICT_NEW_TOKENS,
    load_judge_template,
)
from evaluation.records import load_records
from evaluation.results import ScoreResult, format_table, write_outputs
from evaluation.self_check import add_self_check_arguments

if TYPE_CHECKING:
    from evaluation.downstream import Downstream


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation", description=__doc__.split("\n\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    score = add_score_command(commands)
    add_scoring_options(score)
    add_endpoint_options(score)
    add_statistics_options(score)
    add_correlate_command(commands)
    add_compare_command(commands)
    add_make_tiny_model_command(commands)
    return parser


# argparse gives its sub-command registry no public name.
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_score_command(commands: Commands) -> argparse.ArgumentParser:
    """``score``: what to read, what to write, which model."""
    score = commands.add_parser("score", help="score preference pairs with a reward model or judge")
    score.add_argument(
        "--data", required=True, help="JSONL/JSON/CSV/Parquet file, or an HF-style folder"
    )
    score.add_argument("--split", help="only this split of a folder (e.g. test)")
    score.add_argument("--out", required=True, help="folder for scores.jsonl and summary.json")
    score.add_argument(
        "--name", help="short name of the run, matched by correlate (default: the --model given)"
    )
    score.add_argument(
        "--paper-settings",
        action="store_true",
        help=f"the paper's protocol: question mode, a {PAPER_MAX_LENGTH:,}-token limit, exact "
        "ties, softmax(logits)[-1] for several labels, the judge's order as the benchmark draws "
        "it (docs/evaluation.md lists the differences)",
    )
    return score


def add_scoring_options(score: argparse.ArgumentParser) -> None:
    """How the model is loaded and fed: mode, judge, device, lengths, padding, ties."""
    add_model_options(score)
    score.add_argument(
        "--both-orders", action="store_true", help="judge each pair in both A/B orders"
    )
    score.add_argument(
        "--max-new-tokens",
        type=int,
        help=f"judge reply length (default: {REASONING_NEW_TOKENS} for a template that asks for "
        f"reasoning before 'Result:', else {VERDICT_NEW_TOKENS})",
    )
    score.add_argument(
        "--judge-template",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="the judge's prompts: a folder with system.txt and user.txt (or the benchmark's "
        "pairwise_system.txt and pairwise_user.txt), a user file, or a system and a user file; "
        "fields {question} {profile} {Response_A} {Response_B}",
    )
    score.add_argument(
        "--profile-format",
        choices=PROFILE_FORMATS,
        help="profile posts as 'Post i: text' (plain) or 'Post i (Category: c):' blocks "
        "(benchmark; the default with --paper-settings)",
    )
    score.add_argument(
        "--rank-profile",
        metavar="MODEL_DIR",
        help="rank each user's posts against the question with this local dense retriever "
        "(mean pooling, as Contriever) before the first --top-k are kept",
    )
    score.add_argument(
        "--max-length",
        type=int,
        help=f"longest sequence (default: the model's max_position_embeddings; the paper's is "
        f"{PAPER_MAX_LENGTH:,})",
    )
    score.add_argument(
        "--prefix-reuse",
        choices=["auto", "on", "off"],
        default="auto",
        help="run the prompt chosen and rejected share once, for a classifier (auto: in "
        "profile mode)",
    )
    score.add_argument(
        "--padding-side",
        choices=["left", "right"],
        help="pad a classifier's batches on this side (default: the tokenizer's); scores do "
        "not depend on it",
    )
    score.add_argument(
        "--label-index", type=int, help="which logit is the reward, for several labels"
    )
    score.add_argument(
        "--tie-tolerance",
        type=float,
        default=0.0,
        help="scores closer than this tie (default: only equal scores)",
    )
    score.add_argument(
        "--chat-template",
        type=Path,
        help="file with a Jinja chat template to use instead of (or for want of) the tokenizer's",
    )
    score.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run the model's own code from its folder or the Hub, for architectures "
        "transformers lacks",
    )


def add_statistics_options(score: argparse.ArgumentParser) -> None:
    """Groups, the seed, the intervals' level, the self-check and progress."""
    score.add_argument(
        "--group-by",
        help="record label to report accuracy by, e.g. split (default: validation.verdict when "
        "the records carry it, as audit subsets: excluded is failed or undecided)",
    )
    score.add_argument(
        "--seed",
        type=int,
        help="where a judge is shown the chosen answer, the pairs --self-check draws and "
        f"builtin:random's rewards; nothing is resampled (default: 0; {PAPER_JUDGE_SEED} with "
        "--paper-settings, the benchmark's)",
    )
    add_retired_option(score, "--resamples", default=2000)
    add_confidence_option(score, "the accuracy intervals (Wilson's, continuity-corrected)")
    add_self_check_arguments(score, failing="", kept="keep")
    score.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bars (they are shown only on a terminal anyway)",
    )

    score.set_defaults(run=run_score)


def add_correlate_command(commands: Commands) -> None:
    correlate = commands.add_parser(
        "correlate", help="benchmark accuracy vs downstream scores per RM"
    )
    correlate.add_argument(
        "--bench",
        required=True,
        nargs="+",
        type=Path,
        help="CSV/JSON/JSONL table (model, accuracy), or summary.json files written by score",
    )
    correlate.add_argument(
        "--downstream",
        required=True,
        nargs="+",
        type=Path,
        help="CSV/JSON/JSONL table (model, scores); best-of-N evaluation_summary.json files (the "
        "model named by its folder); folders of PPO *_evaluation.txt summaries",
    )
    correlate.add_argument(
        "--bon-k",
        type=int,
        help="the k of best-of-N results (default: the largest every summary holds)",
    )
    correlate.add_argument(
        "--bench-column",
        default="accuracy",
        help="accuracy (ties left out) or accuracy_ties_as_wrong (the paper's figure), or a "
        "column of a benchmark table",
    )
    correlate.add_argument("--bench-group", help="with summary.json files: accuracy of this group")
    correlate.add_argument(
        "--downstream-column", action="append", help="score column(s) (default: every numeric one)"
    )
    correlate.add_argument(
        "--model-column",
        default="model",
        help="column naming the model in the --bench and --downstream tables (a {model: value} "
        "file's keys are read as it); summary.json files match on the run's --name",
    )
    correlate.add_argument(
        "--rbo-persistence",
        type=float,
        default=0.9,
        help="persistence p of rank-biased overlap: the top d models carry 1 - p^d of the weight",
    )
    add_confidence_option(correlate, "the correlations' intervals")
    correlate.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples")
    correlate.add_argument("--seed", type=int, default=0)
    correlate.add_argument("--out", type=Path, help="also write the results as JSON here")
    correlate.set_defaults(run=run_correlate)


def add_make_tiny_model_command(commands: Commands) -> None:
    tiny = commands.add_parser(
        "make-tiny-model",
        help="write a tiny random-weight reward model to a folder (meaningless scores; for "
        "checking that scoring runs)",
    )
    tiny.add_argument("folder", type=Path)
    tiny.add_argument("--seed", type=int, default=0)
    tiny.add_argument(
        "--causal",
        action="store_true",
        help="a causal LM with a chat template that always replies the same, in the benchmark's "
        "reasoning-first format (a judge, a model annotator, a model to serve)",
    )
    tiny.set_defaults(run=run_make_tiny_model)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except EvaluationError as error:
        return report_error(error)


def report_error(error: EvaluationError) -> int:
    """Print the error once: under torchrun every process meets it, and only rank 0 says so.

    The other ranks exit 0 without a word when no process group is set up yet (an error in the
    arguments or the data, the same on every rank): torchrun stops every process as soon as one
    fails, and could stop rank 0 before it has printed. With a process group, rank 0 prints and
    every rank waits for that before failing.
    """
    # Only a run that loaded torch can have a process group; the others never import it.
    dist: Any = sys.modules.get("torch.distributed")
    if is_rank_zero():
        print(f"error: {error}", file=sys.stderr, flush=True)
    if dist is not None and dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
        return 2
    return 2 if is_rank_zero() else 0


def is_rank_zero() -> bool:
    """Whether this is the process that speaks: rank 0 under torchrun, or the only one."""
    return int(os.environ.get("RANK", "0")) == 0


def config_from_args(args: argparse.Namespace, *, progress: bool) -> ScoreConfig:
    judge_template = None
    if args.judge_template:
        judge_template = load_judge_template(args.judge_template)
    seed = args.seed
    if seed is None:
        seed = PAPER_JUDGE_SEED if args.paper_settings else 0
    profile_format = args.profile_format or ("benchmark" if args.paper_settings else "plain")
    template = None
    if args.chat_template is not None:
        try:
            template = args.chat_template.read_text(encoding="utf-8")
        except OSError as error:
            raise EvaluationError(
                f"cannot read the chat template {args.chat_template}: {error}"
            ) from None
    derived = {
        "seed": seed,
        "chat_template": template,
        "judge_template": judge_template,
        "profile_format": profile_format,
        "progress": progress,
        "endpoint": endpoint_from_options(vars(args)),
    }
    # Every other setting is the option of the same name: a new field of ScoreConfig needs
    # its option, and nothing here.
    given = {
        field.name: getattr(args, field.name)
        for field in dataclasses.fields(ScoreConfig)
        if field.name not in derived
    }
    return ScoreConfig(**given, **derived)


def run_score(args: argparse.Namespace) -> int:
    records = load_records(args.data, split=args.split)
    if not records:
        raise EvaluationError(f"{args.data}: no records")
    if is_builtin(args.model):
        return run_builtin(records, args)
    if args.judge_endpoint is not None:
        return run_remote(records, args)
    # torch and transformers load here, not for the baselines, compare or correlate.
    from evaluation import distributed
    from evaluation.models import resolve_device
    from evaluation.scoring import score_records

    # Bars only on a terminal: in a log they would run into the table printed after them.
    progress = is_rank_zero() and not args.no_progress and sys.stderr.isatty()
    if not progress:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # its own, while loading weights
    # Settings are checked before the processes join, so that a bad option fails as the data does.
    config = config_from_args(args, progress=progress)
    shard = distributed.init_from_env(resolve_device(args.device))
    result = score_records(records, config)
    if shard.is_main:
        write_run(result, args)
    distributed.finish(shard)
    return 0


def run_builtin(records: list[Any], args: argparse.Namespace) -> int:
    """A built-in baseline: no model, no torch, no processes to join (under torchrun, rank 0
    alone writes the run)."""
    from evaluation.baselines import score_builtin

    if args.rank_profile is not None:
        raise EvaluationError(
            "--rank-profile ranks posts with a retriever model; a built-in baseline reads them "
            "in the record's order: leave it out"
        )
    result = score_builtin(records, config_from_args(args, progress=False))
    if is_rank_zero():
        write_run(result, args)
    return 0


def run_remote(records: list[Any], args: argparse.Namespace) -> int:
    """A judge behind an endpoint: one process here; the engine there does the parallel work."""
    if not args.judge:
        raise EvaluationError("--judge-endpoint serves a judge: add --judge")
    from evaluation.remote_judge import score_remote

    result = score_remote(records, config_from_args(args, progress=False))
    if is_rank_zero():
        write_run(result, args)
    return 0


def write_run(result: ScoreResult, args: argparse.Namespace) -> None:
    result.settings["data"] = str(args.data)
    write_outputs(result, args.out)
    print(format_table(result))


def run_make_tiny_model(args: argparse.Namespace) -> int:
    from evaluation.tiny import make_tiny_model_command  # loads transformers

    return make_tiny_model_command(args.folder, seed=args.seed, causal=args.causal)


def read_table(path: Path, model_column: str = "model") -> list[dict[str, Any]]:
    """Rows of a CSV, JSONL or JSON file (a list of objects, or ``{model: value}``, whose
    keys go under ``model_column`` and values under ``value``)."""
    try:
        if path.suffix.lower() == ".csv":
            with path.open(encoding="utf-8", newline="") as file:
                return list(csv.DictReader(file))
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() == ".jsonl":
            return _objects([json.loads(line) for line in text.splitlines() if line.strip()], path)
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise EvaluationError(f"cannot read {path}: {error}") from None
    if isinstance(data, list):
        return _objects(data, path)
    if isinstance(data, dict):
        return [{model_column: key, MAPPING_VALUE: value} for key, value in data.items()]
    raise EvaluationError(f"{path}: expected a table of rows")


# The column of a ``{model: value}`` JSON file's values, and of a table that names its figure so.
MAPPING_VALUE = "value"


def _objects(rows: list[Any], path: Path) -> list[dict[str, Any]]:
    for number, row in enumerate(rows):
        if not isinstance(row, dict):
            raise EvaluationError(f"{path} row {number}: expected an object with named columns")
    return rows


@dataclasses.dataclass(frozen=True)
class BenchSource:
    """One ``--bench`` file, the figure read from it (``group``'s, for a summary asked for a
    group) and the models it gave."""

    path: Path
    column: str
    group: str | None
    models: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "column": self.column, "group": self.group}


def bench_values(
    paths: Sequence[Path], column: str, group: str | None, model_column: str
) -> tuple[dict[str, float], list[BenchSource]]:
    """Benchmark accuracy per model, from summary.json files written by ``score`` (named by the
    run's ``--name``) or from tables with a model column, and what was read from each file."""
    values: dict[str, float] = {}
    sources = []
    for path in paths:
        summary = _summary(path)
        if summary is not None:
            name, value = summary_value(summary, path, column, group)
            if name in values:
                raise EvaluationError(f"{path}: a second run named {name!r} (give runs --name)")
            values[name] = value
            sources.append(BenchSource(path, column, group, (name,)))
            continue
        rows = read_table(path, model_column)
        # Each file on its own: a {model: value} file does not make the next one "value" too.
        read = table_column(rows, column)
        found = _column(rows, path, model_column, read)
        values.update(found)
        sources.append(BenchSource(path, read, None, tuple(found)))
    return values, sources


def table_column(rows: list[dict[str, Any]], column: str) -> str:
    """The column a benchmark table is read for: ``column``, or ``value`` when the table lacks
    ``column`` and has that one (a ``{model: value}`` JSON file)."""
    if rows and column not in rows[0] and MAPPING_VALUE in rows[0]:
        return MAPPING_VALUE
    return column


def _summary(path: Path) -> dict[str, Any] | None:
    """The content of a summary.json written by ``score``, or ``None`` for any other file."""
    if path.suffix.lower() != ".json":
        return None
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if text.lstrip().startswith("{") else None
    except (OSError, json.JSONDecodeError) as error:
        raise EvaluationError(f"cannot read {path}: {error}") from None
    if isinstance(data, dict) and "accuracy" in data and "settings" in data:
        return data
    return None


def summary_value(
    summary: dict[str, Any], path: Path, column: str, group: str | None
) -> tuple[str, float]:
    """The run's name and its ``column`` figure, overall or for ``group``."""
    accuracy = summary["accuracy"]
    stats = accuracy.get("by_group", {}).get(group) if group else accuracy.get("overall")
    where = f" for group {group!r}" if group else ""
    if stats is None:
        raise EvaluationError(f"{path}: no accuracy{where}")
    if column not in stats:
        figures = ", ".join(name for name, value in stats.items() if isinstance(value, float))
        raise EvaluationError(f"{path}: no {column!r}{where} (it has {figures})")
    if stats[column] is None:
        raise EvaluationError(f"{path}: {column!r} is undefined{where} (no decided pair)")
    settings = summary["settings"]
    return str(settings.get("name") or settings["model"]), float(stats[column])


def _column(
    rows: list[dict[str, Any]], path: Path, model_column: str, column: str
) -> dict[str, float]:
    values = {}
    for number, row in enumerate(rows):
        if model_column not in row or column not in row:
            raise EvaluationError(
                f"{path} row {number}: needs columns {model_column!r} and {column!r}"
            )
        try:
            values[str(row[model_column])] = float(row[column])
        except (TypeError, ValueError):
            raise EvaluationError(f"{path} row {number}: {column!r} is not a number") from None
    return values


def _numeric_columns(rows: list[dict[str, Any]], model_column: str) -> list[str]:
    columns = []
    for name in rows[0] if rows else []:
        if name == model_column:
            continue
        try:
            [float(row[name]) for row in rows]
        except (TypeError, ValueError, KeyError):
            continue
        columns.append(name)
    return columns


def read_downstream(args: argparse.Namespace) -> "Downstream":
    """Every downstream column of the files given, by model."""
    from evaluation.downstream import Downstream, is_bon_summary, read_bon, read_ppo

    found = Downstream()
    bon = [path for path in args.downstream if is_bon_summary(path)]
    if bon:
        read_bon(bon, args.bon_k, found)
    for path in args.downstream:
        if path in bon:
            continue
        if path.is_dir():
            read_ppo(path, found)
            continue
        rows = read_table(path, args.model_column)
        for column in _numeric_columns(rows, args.model_column):
            for model, value in _column(rows, path, args.model_column, column).items():
                found.add(column, model, value, path)
    return found


def run_correlate(args: argparse.Namespace) -> int:
    if args.out is not None and not args.out.parent.is_dir():
        # Said before any result is printed, not after.
        raise EvaluationError(f"cannot write {args.out}: no folder {args.out.parent}")
    bench, sources = bench_values(
        args.bench, args.bench_column, args.bench_group, args.model_column
    )
    for source in sources:
        if source.column != args.bench_column:
            print(f"{source.path}: read column {source.column!r} (it has no {args.bench_column!r})")
    downstream = read_downstream(args)
    columns = args.downstream_column or list(downstream.columns)
    unknown = [column for column in columns if column not in downstream.columns]
    if not downstream.columns or unknown:
        wanted = f"no column {unknown[0]!r}" if unknown else "no numeric score column"
        raise EvaluationError(
            f"{', '.join(map(str, args.downstream))}: {wanted} "
            f"(columns: {', '.join(sorted(downstream.columns)) or 'none'})"
        )
    report: dict[str, Any] = {}
    print(f"{'downstream':<16} {'method':<12} {'n':>3} {'coef':>7} {'CI':>18} {'p':>16}")
    for column in columns:
        models, x, y = paired_values(bench, downstream.columns[column])
        if len(models) < 3:
            raise EvaluationError(
                f"only {len(models)} models have both a benchmark and a {column!r} value "
                f"(benchmark: {', '.join(sorted(bench)[:5])}; runs are named by score --name)"
            )
        results = correlations(x, y, confidence=args.confidence)
        results += ranking_agreement(
            x,
            y,
            persistence=args.rbo_persistence,
            resamples=args.resamples,
            confidence=args.confidence,
            seed=args.seed,
        )
        report[column] = {
            "models": models,
            **bench_read(sources, models),
            "correlations": [result.as_dict() for result in results],
        }
        for result in results:
            print(_correlation_row(column, result))
        for methods, note in notes_by_measure(results):
            print(f"{column[:16]:<16} note ({', '.join(methods)}): {note}")
        if not any(result.method == "ndcg" for result in results):
            print(f"{column[:16]:<16} ndcg: left out, it needs downstream values of 0 or more")
    for note in downstream.notes:
        print(note)
    missing = sorted(set(bench) ^ downstream.models)
    if missing:
        print(f"left out (in one file only): {', '.join(missing)}")
    if args.out is not None:
        write_whole(args.out, strict_json.dumps(report, indent=2) + "\n")
    return 0


def bench_read(sources: Sequence[BenchSource], models: Sequence[str]) -> dict[str, Any]:
    """What ``--out`` records of the benchmark files that gave ``models``: each file with the
    figure read from it, and ``bench_column``, that figure when every file gave the same one
    (``None`` when they differ)."""
    entered = set(models)
    used = [source for source in sources if entered & set(source.models)]
    columns = {source.column for source in used}
    return {
        "bench_column": columns.pop() if len(columns) == 1 else None,
        "bench_files": [source.as_dict() for source in used],
    }


def notes_by_measure(results: Sequence[Correlation]) -> list[tuple[list[str], str]]:
    """Each distinct reason or note of ``results`` with the measures it applies to, in the
    order the measures are printed: a reason for the rank measures is never read as one for
    Pearson's interval printed above it."""
    methods: dict[str, list[str]] = {}
    for result in results:
        for text in (result.reason, result.note):
            if text:
                methods.setdefault(text, []).append(result.method)
    return [(names, text) for text, names in methods.items()]


def _correlation_row(column: str, result: Correlation) -> str:
    interval = "-" if result.ci_low is None else f"[{result.ci_low:.3f}, {result.ci_high:.3f}]"
    if result.ci_low is not None and not result.reliable:
        interval = "unreliable"  # the bounds stay in --out, marked "reliable": false
    p_value = "-" if result.p_value is None else f"{result.p_value:.3g}"
    if result.p_method == "exact permutation":
        p_value += " (exact)"
    coefficient = "-" if result.coefficient is None else f"{result.coefficient:.3f}"
    return (
        f"{column[:16]:<16} {result.method:<12} {result.n:>3} {coefficient:>7} "
        f"{interval:>18} {p_value:>16}"
    )
