"""What a scoring run returns, and the files and table it is written as.

Files written to ``OUT/``:

- ``scores.jsonl``: one object per pair, in input order (see :meth:`PairScore.as_dict`);
- ``summary.json``: settings, the run card (what the scores depend on, see
  :mod:`evaluation.run_card`), the self-check when one was asked for, run figures, how inputs
  were fitted to the length limit, how the pairs were grouped, and accuracy overall / per
  category / per group (ties left out, and ties as wrong, each with its interval).
"""

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from evaluation import strict_json
from evaluation.config import PAPER_MAX_LENGTH
from evaluation.errors import EvaluationError
from evaluation.levels import level_percent
from evaluation.metrics import AccuracyStats, AccuracySummary, PositionStats

# The benchmark reads a judge reply that names no answer as "A" (:mod:`evaluation.paper_protocol`).
UNPARSED_READ_AS = "A"
PAPER_RULE = f'unparsed replies read as "{UNPARSED_READ_AS}", as the benchmark reads them'


@dataclass(frozen=True)
class JudgeVerdict:
    """One judge reply. ``chosen_position`` is where the chosen answer was shown (A = first)."""

    chosen_position: str
    reply: str
    named: str | None
    picked: str | None


@dataclass(frozen=True)
class PairScore:
    """The result for one pair.

    A classifier's scores are its rewards for the two answers. A judge's are its votes: how
    many of its parsed verdicts picked each answer, so that ``chosen_score > rejected_score``
    means the same in both cases; its ``outcome`` is ``unparsed`` when any reply named no answer.
    """

    id: str
    category: str
    outcome: str
    chosen_score: float | None
    rejected_score: float | None
    chosen_tokens: int = 0
    rejected_tokens: int = 0
    # The profile posts the model was shown, and those left out to fit the length limit (of
    # the ones it would have been shown without it), as the code that built the input counted
    # them; a judge asked in both orders: the fewest any of its prompts showed.
    profile_posts: int = 0
    profile_posts_dropped: int = 0
    verdicts: tuple[JudgeVerdict, ...] = ()
    # The pair's value of the label the run groups by (``validated``, say), for ``compare``.
    group: str | None = None

    @property
    def margin(self) -> float | None:
        if self.chosen_score is None or self.rejected_score is None:
            return None
        return self.chosen_score - self.rejected_score

    def as_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "id": self.id,
            "category": self.category,
            "outcome": self.outcome,
            "chosen_score": self.chosen_score,
            "rejected_score": self.rejected_score,
            "margin": self.margin,
            "chosen_tokens": self.chosen_tokens,
            "rejected_tokens": self.rejected_tokens,
            "profile_posts": self.profile_posts,
        }
        if self.profile_posts_dropped:
            row["profile_posts_dropped"] = self.profile_posts_dropped
        if self.group is not None:
            row["group"] = self.group
        if self.verdicts:
            row["verdicts"] = [asdict(verdict) for verdict in self.verdicts]
        return row


@dataclass
class RunStats:
    """Work done: ``real_tokens`` counts every sequence's own tokens; ``computed_positions``
    the token positions the model actually ran (padding included, a shared prompt once)."""

    pairs: int = 0
    sequences: int = 0
    real_tokens: int = 0
    computed_positions: int = 0
    padding_positions: int = 0
    seconds: float = 0.0
    prefix_reuse: bool = False
    world_size: int = 1

    def add(self, other: "RunStats") -> "RunStats":
        return RunStats(
            pairs=self.pairs + other.pairs,
            sequences=self.sequences + other.sequences,
            real_tokens=self.real_tokens + other.real_tokens,
            computed_positions=self.computed_positions + other.computed_positions,
            padding_positions=self.padding_positions + other.padding_positions,
            seconds=max(self.seconds, other.seconds),
            prefix_reuse=self.prefix_reuse or other.prefix_reuse,
            world_size=self.world_size,
        )

    def as_dict(self) -> dict[str, Any]:
        figures = asdict(self)
        figures["padding_share"] = (
            self.padding_positions / self.computed_positions if self.computed_positions else 0.0
        )
        figures["pairs_per_second"] = self.pairs / self.seconds if self.seconds else None
        figures["tokens_per_second"] = self.real_tokens / self.seconds if self.seconds else None
        return figures


@dataclass(frozen=True)
class InputFit:
    """The length limit inputs were fitted to, where it came from, and what fitting cost: the
    profile posts left out to fit and the pairs they came from, summed from each pair's own
    count (:attr:`PairScore.profile_posts_dropped`), whatever showed the posts: profile mode,
    or a judge template's ``{profile}`` in any mode."""

    length_limit: int | None
    length_limit_source: str
    mode: str
    pairs_with_posts_dropped: int = 0
    posts_dropped: int = 0
    paper_length_limit: int = PAPER_MAX_LENGTH
    model_max_positions: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ScoreResult:
    pairs: list[PairScore]
    summary: AccuracySummary
    settings: dict[str, Any]
    stats: RunStats
    positions: PositionStats | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    fit: InputFit | None = None
    card: dict[str, Any] = field(default_factory=dict)
    self_check: dict[str, Any] | None = None
    # A judge's accuracy with unparsed replies read as "A", the benchmark's count
    # (:mod:`evaluation.paper_protocol`); None for a classifier, which has no such replies.
    paper_summary: AccuracySummary | None = None
    # How the pairs were put in groups, when the groups are not the label's own values (the
    # audit subsets of ``validation.verdict``: :func:`evaluation.run_summary.grouping`).
    grouping: dict[str, Any] | None = None

    def summary_dict(self) -> dict[str, Any]:
        """The content of ``summary.json``."""
        paper = None
        if self.paper_summary is not None:
            paper = {
                "unparsed_read_as": UNPARSED_READ_AS,
                "rule": PAPER_RULE,
                **self.paper_summary.as_dict(),
            }
        return {
            "settings": self.settings,
            "card": self.card,
            "self_check": self.self_check,
            "environment": self.environment,
            "run": self.stats.as_dict(),
            "inputs": self.fit.as_dict() if self.fit else None,
            "grouping": self.grouping,
            "accuracy": self.summary.as_dict(),
            "accuracy_paper": paper,
            "positions": self.positions.as_dict() if self.positions else None,
        }


def with_groups(scores: Sequence[PairScore], groups: Sequence[str] | None) -> list[PairScore]:
    """``scores`` with each pair's group (the value of the label the run groups by)."""
    if groups is None:
        return list(scores)
    return [replace(score, group=group) for score, group in zip(scores, groups, strict=True)]


def write_outputs(result: ScoreResult, out_dir: str | Path) -> tuple[Path, Path]:
    """``scores.jsonl`` and ``summary.json`` under ``out_dir`` (created if needed).

    Both are written to hidden files beside their place and renamed in once both are whole: a
    full disk or a stopped run leaves the previous files (or none), never half of one. A write
    that fails raises EvaluationError naming the folder.
    """
    out = Path(out_dir)
    created = not out.exists()
    scores, summary = out / "scores.jsonl", out / "summary.json"
    written: list[Path] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        with _hidden_file(scores, written) as file:
            for pair in result.pairs:
                file.write(strict_json.dumps(pair.as_dict(), ensure_ascii=False) + "\n")
        with _hidden_file(summary, written) as file:
            file.write(
                strict_json.dumps(result.summary_dict(), indent=2, ensure_ascii=False) + "\n"
            )
        os.replace(written[0], scores)
        os.replace(written[1], summary)
    except OSError as error:
        for path in written:
            path.unlink(missing_ok=True)
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise EvaluationError(
            f"cannot write the scores to {out}: {error.strerror or error}"
        ) from None
    return scores, summary


def _hidden_file(path: Path, written: list[Path]) -> IO[str]:
    """A new hidden file beside ``path``, noted in ``written`` (to rename or remove), with the
    permissions a plain ``open`` would give it."""
    file = tempfile.NamedTemporaryFile(  # noqa: SIM115  # closed by the caller's with block
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    )
    written.append(Path(file.name))
    # A temporary file is made owner-only; the scores are results to share like any file.
    os.chmod(file.name, 0o666 & ~current_umask())
    return file


def current_umask() -> int:
    """The process's umask (read by setting it and putting it back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None else f"[{_percent(low)}, {_percent(high)}]"


def _row(name: str, stats: AccuracyStats, width: int = 32) -> str:
    paper = _interval(stats.accuracy_ties_as_wrong_ci_low, stats.accuracy_ties_as_wrong_ci_high)
    return (
        f"{name:<{width}} {stats.n:>6} {_percent(stats.accuracy):>6} "
        f"{_interval(stats.ci_low, stats.ci_high):>14} "
        f"{_percent(stats.accuracy_ties_as_wrong):>7} {paper:>14} "
        f"{stats.ties:>5} {_percent(stats.tie_rate):>6} {stats.unparsed:>8}"
    )


def format_table(result: ScoreResult) -> str:
    """The printed summary: accuracy (%) with ties left out and with ties counted as wrong (the
    paper's figure), each with its interval; ties, tie rate and unparsed replies; the length
    limit and the profile posts dropped to fit it."""
    summary = result.summary
    level = f"{level_percent(summary.overall.confidence)} CI"
    # Wide enough for the longest name: category names are never cut.
    width = max(32, *(len(f"  {name}") for name in [*summary.by_group, *summary.by_category]))
    header = (
        f"{'pairs':<{width}} {'n':>6} {'acc%':>6} {level:>14} {'paper%':>7} {level:>14} "
        f"{'ties':>5} {'tie%':>6} {'unparsed':>8}"
    )
    lines = [header, "-" * len(header), _row("all", summary.overall, width)]
    if summary.by_group:
        lines.append(f"by {summary.group_by}:")
        lines += [_row(f"  {name}", stats, width) for name, stats in summary.by_group.items()]
        if result.grouping is not None:
            lines.append(f"  {result.grouping['words']}")
    if summary.by_category:
        lines.append("by category:")
        lines += [
            _row(f"  {name or '(none)'}", stats, width)
            for name, stats in summary.by_category.items()
        ]
    lines.append("acc%: ties left out; paper%: ties count as wrong, the figure the paper reports")
    if result.paper_summary is not None:
        lines += _paper_lines(result.paper_summary, width)
    if result.fit is not None:
        lines += _fit_lines(result.fit, result.pairs)
    run = result.stats.as_dict()
    speed = run["pairs_per_second"]
    lines.append(
        f"{run['pairs']} pairs in {run['seconds']:.1f} s"
        + (f" ({speed:.2f} pairs/s, {run['tokens_per_second']:.0f} tokens/s" if speed else " (")
        + f", padding {100 * run['padding_share']:.1f}%)"
    )
    if result.self_check is not None:
        lines.append(self_check_line(result.self_check))
    if result.card:
        from evaluation.run_card import card_line

        lines.append(card_line(result.card))
    if result.positions is not None:
        positions = result.positions
        lines.append(
            f"judge: answer A named in {_percent(positions.first_position_share)}% of verdicts; "
            f"position consistency {_percent(positions.consistency)}% "
            f"over {positions.pairs_in_both_orders} pairs judged in both orders"
        )
    return "\n".join(lines)


def _paper_lines(paper: AccuracySummary, width: int) -> list[str]:
    """The judge's figures with unparsed replies read as the benchmark reads them."""
    lines = [f"{PAPER_RULE}:", _row("all", paper.overall, width)]
    lines += [_row(f"  {name}", stats, width) for name, stats in paper.by_group.items()]
    return lines


def self_check_line(check: dict[str, Any]) -> str:
    flips = "no decision flips" if not check["flips"] else f"{check['flips']} decision flip(s)"
    if check["flips"] and check["allow_flips"]:
        flips += " (kept with --allow-flips)"
    return (
        f"self-check: {check['pairs']} pairs scored one at a time ({check['method']}): "
        f"max |score alone - batched| {check['max_abs_delta']:.3g}, {flips}"
    )


def _fit_lines(fit: InputFit, pairs: Sequence[PairScore]) -> list[str]:
    limit = "none" if fit.length_limit is None else f"{fit.length_limit:,} tokens"
    line = f"length limit: {limit} ({fit.length_limit_source}"
    if fit.length_limit != fit.paper_length_limit:
        line += f"; the paper's is {fit.paper_length_limit:,}: --paper-settings"
    model = fit.model_max_positions
    if fit.length_limit is not None and model is not None and fit.length_limit > model:
        line += f"; more than the model's {model:,} positions"
    lines = [line + ")"]
    # Whether any input had room for posts, from what each pair was shown or lost.
    offered = any(pair.profile_posts or pair.profile_posts_dropped for pair in pairs)
    if offered:
        lines.append(
            f"profile posts dropped to fit: {fit.posts_dropped} from "
            f"{fit.pairs_with_posts_dropped} of {len(pairs)} pairs"
        )
    elif fit.mode == "profile":
        lines.append("profile posts shown: none (no pair's input has a place for them)")
    return lines
