"""The leaderboard of :mod:`evaluation.compare` as a text table, strict JSON, CSV and LaTeX.

One renderer per format, each a function of the :class:`~evaluation.compare.Leaderboard`
alone, so a new format (a paper's table, say) is one more function:

- :func:`as_text`: what ``compare`` prints, one table per subset, then validated against
  excluded and the rank swaps;
- :func:`as_json`: :meth:`Leaderboard.as_dict` as strict JSON (no NaN or infinity; an undefined
  figure is ``null`` beside a ``reason``);
- :func:`as_csv`: one row per subset and model, with the model's validated-against-excluded
  figures repeated on its rows (the rank swaps are pairwise: they are in the other formats);
- :func:`as_latex`: one booktabs table per subset and one for validated against excluded.
"""

import csv
import io
import json
from collections.abc import Callable

from evaluation.compare import (
    POLICY_WORDS,
    Entry,
    Estimate,
    Leaderboard,
    SubsetBoard,
    SubsetTest,
)

FORMATS = ("text", "json", "csv", "latex")


def percent(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}"


def points(value: float | None) -> str:
    """A difference of accuracies in percentage points, signed."""
    return "-" if value is None else f"{100 * value:+.1f}"


def interval(low: float | None, high: float | None, signed: bool = False) -> str:
    if low is None or high is None:
        return "-"
    show = points if signed else percent
    return f"[{show(low)}, {show(high)}]"


def p_value(value: float | None) -> str:
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def headline(board: Leaderboard) -> list[str]:
    settings = board.settings
    level = round(100 * settings.confidence)
    return [
        f"{len(board.models)} models on {board.pairs} pairs, ranked by accuracy with "
        f"{POLICY_WORDS[settings.policy]}",
        f"{level}% intervals: Wilson for accuracies, paired bootstrap over pairs for the "
        f"difference to #1 ({settings.resamples} resamples, seed {settings.seed}); p: exact "
        f"McNemar against #1, Holm-adjusted; group 1: statistically tied with #1 at "
        f"alpha {settings.alpha:g}",
    ]


# --- text -----------------------------------------------------------------------------------


def as_text(board: Leaderboard) -> str:
    lines = headline(board)
    width = max([24, *(len(model) for model in board.models)])
    for subset in board.subsets:
        lines += ["", *_text_board(subset, width, board)]
    if board.validated_vs_excluded:
        lines += ["", *_text_subset_tests(board, width)]
    if board.ranks is not None:
        lines += ["", *_text_ranks(board)]
    if board.notes:
        lines += ["", *(f"note: {note}" for note in board.notes)]
    return "\n".join(lines)


def _text_board(subset: SubsetBoard, width: int, board: Leaderboard) -> list[str]:
    title = f"{subset.name} ({subset.pairs} pairs)"
    if subset.kind == "category":
        title = f"category {title}"
    if not subset.entries:
        return [f"{title}: {subset.reason}"]
    header = (
        f"{'#':>2} {'grp':>3} {'model':<{width}} {'n':>5} {'acc%':>6} {'CI':>14} "
        f"{'t-w%':>6} {'CI':>14} {'ties':>5} {'vs #1':>6} {'CI':>16} {'+/-':>7} "
        f"{'p':>7} {'Holm p':>7}"
    )
    lines = [title, header, "-" * len(header)]
    lines += [_text_row(entry, width) for entry in subset.entries]
    return lines


def _text_row(entry: Entry, width: int) -> str:
    versus = entry.versus_best
    compared = f"{'-':>6} {'-':>16} {'-':>7} {'-':>7} {'-':>7}"
    if versus is not None:
        compared = (
            f"{points(versus.difference):>6} "
            f"{interval(versus.ci_low, versus.ci_high, signed=True):>16} "
            f"{f'{versus.better}/{versus.worse}':>7} {p_value(versus.p_value):>7} "
            f"{p_value(versus.p_holm):>7}"
        )
    return (
        f"{entry.rank:>2} {entry.group:>3} {entry.model:<{width}} {entry.n:>5} "
        f"{percent(entry.accuracy.value):>6} {_ci(entry.accuracy):>14} "
        f"{percent(entry.accuracy_ties_as_wrong.value):>6} "
        f"{_ci(entry.accuracy_ties_as_wrong):>14} {entry.ties:>5} {compared}"
    )


def _ci(estimate: Estimate) -> str:
    return interval(estimate.ci_low, estimate.ci_high)


def _text_subset_tests(board: Leaderboard, width: int) -> list[str]:
    header = (
        f"{'model':<{width}} {'validated%':>10} {'n':>5} {'excluded%':>10} {'n':>5} "
        f"{'diff':>6} {'CI':>16} {'Fisher p':>8}"
    )
    lines = [
        f"validated against excluded pairs (accuracy with {POLICY_WORDS[board.settings.policy]}"
        "; independent sets of pairs: Newcombe interval, Fisher's exact test)",
        header,
        "-" * len(header),
    ]
    for test in board.validated_vs_excluded:
        lines.append(
            f"{test.model:<{width}} {percent(test.validated.value):>10} {test.validated.n:>5} "
            f"{percent(test.excluded.value):>10} {test.excluded.n:>5} "
            f"{points(test.difference):>6} {interval(test.ci_low, test.ci_high, True):>16} "
            f"{p_value(test.p_value):>8}" + (f"  ({test.reason})" if test.reason else "")
        )
    return lines


def _text_ranks(board: Leaderboard) -> list[str]:
    ranks = board.ranks
    assert ranks is not None
    tau = f"{ranks.tau:.3f}" if ranks.tau is not None else f"undefined ({ranks.reason})"
    lines = [f"rank order, all pairs against validated pairs: Kendall's tau {tau}"]
    if not ranks.swaps:
        lines.append("  no two models swap places")
    for swap in ranks.swaps:
        lines.append(
            f"  swap: {swap.above_on_all} above {swap.above_on_validated} on all pairs "
            f"({percent(swap.accuracy_on_all[0])} vs {percent(swap.accuracy_on_all[1])}), "
            f"below on validated ({percent(swap.accuracy_on_validated[0])} vs "
            f"{percent(swap.accuracy_on_validated[1])}; McNemar p "
            f"{p_value(swap.p_value_on_validated)})"
        )
    return lines


# --- JSON -----------------------------------------------------------------------------------


def as_json(board: Leaderboard) -> str:
    """Strict JSON: a NaN or an infinity would raise rather than be written."""
    return json.dumps(board.as_dict(), indent=2, ensure_ascii=False, allow_nan=False)


# --- CSV ------------------------------------------------------------------------------------

CSV_COLUMNS = (
    "subset",
    "kind",
    "rank",
    "group",
    "model",
    "n",
    "correct",
    "wrong",
    "ties",
    "unparsed",
    "accuracy",
    "accuracy_ci_low",
    "accuracy_ci_high",
    "accuracy_ties_as_wrong",
    "accuracy_ties_as_wrong_ci_low",
    "accuracy_ties_as_wrong_ci_high",
    "difference_to_best",
    "difference_ci_low",
    "difference_ci_high",
    "discordant_better",
    "discordant_worse",
    "mcnemar_p",
    "holm_p",
    "tied_with_best",
    "validated_minus_excluded",
    "validated_minus_excluded_ci_low",
    "validated_minus_excluded_ci_high",
    "fisher_p",
    "policy",
)


def as_csv(board: Leaderboard) -> str:
    """Undefined figures are empty cells."""
    tests = {test.model: test for test in board.validated_vs_excluded}
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for subset in board.subsets:
        for entry in subset.entries:
            writer.writerow(_csv_row(subset, entry, tests.get(entry.model), board))
    return out.getvalue()


def _csv_row(
    subset: SubsetBoard, entry: Entry, test: SubsetTest | None, board: Leaderboard
) -> dict[str, object]:
    versus = entry.versus_best
    row: dict[str, object] = {
        "subset": subset.name,
        "kind": subset.kind,
        "rank": entry.rank,
        "group": entry.group,
        "model": entry.model,
        "n": entry.n,
        "correct": entry.correct,
        "wrong": entry.wrong,
        "ties": entry.ties,
        "unparsed": entry.unparsed,
        "accuracy": entry.accuracy.value,
        "accuracy_ci_low": entry.accuracy.ci_low,
        "accuracy_ci_high": entry.accuracy.ci_high,
        "accuracy_ties_as_wrong": entry.accuracy_ties_as_wrong.value,
        "accuracy_ties_as_wrong_ci_low": entry.accuracy_ties_as_wrong.ci_low,
        "accuracy_ties_as_wrong_ci_high": entry.accuracy_ties_as_wrong.ci_high,
        "policy": board.settings.policy,
    }
    if versus is not None:
        row |= {
            "difference_to_best": versus.difference,
            "difference_ci_low": versus.ci_low,
            "difference_ci_high": versus.ci_high,
            "discordant_better": versus.better,
            "discordant_worse": versus.worse,
            "mcnemar_p": versus.p_value,
            "holm_p": versus.p_holm,
            "tied_with_best": versus.tied_with_best,
        }
    if test is not None:
        row |= {
            "validated_minus_excluded": test.difference,
            "validated_minus_excluded_ci_low": test.ci_low,
            "validated_minus_excluded_ci_high": test.ci_high,
            "fisher_p": test.p_value,
        }
    return {key: "" if value is None else value for key, value in row.items()}


# --- LaTeX ----------------------------------------------------------------------------------

LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    r"""Text as LaTeX typesets it literally.

    >>> print(latex_escape("rm_a & 50% {x}"))
    rm\_a \& 50\% \{x\}
    """
    return "".join(LATEX_SPECIALS.get(character, character) for character in text)


def as_latex(board: Leaderboard) -> str:
    """Tables for a paper (``\\usepackage{booktabs}``): the best model of each subset in bold,
    the models statistically tied with it marked with a dagger."""
    level = round(100 * board.settings.confidence)
    policy = latex_escape(POLICY_WORDS[board.settings.policy])
    parts = [
        "% Needs \\usepackage{booktabs}. Accuracy in %, " + policy + f"; {level}% intervals.",
    ]
    for number, subset in enumerate(board.subsets):
        if subset.entries:
            parts.append(_latex_board(subset, number, level, policy))
    if board.validated_vs_excluded:
        parts.append(_latex_subset_tests(board, level, policy))
    return "\n\n".join(parts) + "\n"


def _latex_board(subset: SubsetBoard, number: int, level: int, policy: str) -> str:
    rows = []
    for entry in subset.entries:
        name = latex_escape(entry.model)
        versus = entry.versus_best
        if versus is None:
            name = rf"\textbf{{{name}}}"
        elif versus.tied_with_best:
            name += r"$^\dagger$"
        paper = entry.accuracy_ties_as_wrong
        compared = "--- & --- & ---"
        if versus is not None:
            compared = (
                f"{_minus(points(versus.difference))} & "
                f"{_minus(interval(versus.ci_low, versus.ci_high, signed=True))} & "
                f"{_latex_p(versus.p_holm)}"
            )
        rows.append(
            f"{entry.rank} & {entry.group} & {name} & {entry.n} & "
            f"{percent(entry.accuracy.value)} & {_ci(entry.accuracy)} & {percent(paper.value)} & "
            f"{_ci(paper)} & {compared} \\\\"
        )
    caption = latex_escape(f"{subset.name}, {subset.pairs} pairs")
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{Reward models on {caption}: accuracy with ties left out and with ties "
            rf"as wrong ({level}\% Wilson intervals), difference to \#1 in points ({level}\% "
            rf"paired bootstrap) and Holm-adjusted exact McNemar $p$; ranked with {policy}. "
            r"$^\dagger$: statistically tied with \#1.}",
            rf"\label{{tab:leaderboard-{number}}}",
            r"\begin{tabular}{rrlrrrrrrrr}",
            r"\toprule",
            r"\# & Group & Model & $n$ & Acc. & CI & Acc.\ (ties wrong) & CI & "
            r"$\Delta$ & CI & $p_{\mathrm{Holm}}$ \\",
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
        ]
    )


def _minus(text: str) -> str:
    """A typeset minus sign in signed figures; an undefined one as a dash."""
    return "---" if text == "-" else text.replace("-", "$-$")


def _latex_p(value: float | None) -> str:
    text = p_value(value)
    return "$<$0.001" if text == "<0.001" else text


def _latex_subset_tests(board: Leaderboard, level: int, policy: str) -> str:
    rows = [
        f"{latex_escape(test.model)} & {percent(test.validated.value)} & {test.validated.n} & "
        f"{percent(test.excluded.value)} & {test.excluded.n} & "
        f"{_minus(points(test.difference))} & "
        f"{_minus(interval(test.ci_low, test.ci_high, signed=True))} & "
        f"{_latex_p(test.p_value)} \\\\"
        for test in board.validated_vs_excluded
    ]
    return "\n".join(
        [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{Accuracy on validated against excluded pairs, {policy}: difference in "
            rf"points with its {level}\% Newcombe interval, Fisher's exact $p$.}}",
            r"\label{tab:validated-vs-excluded}",
            r"\begin{tabular}{lrrrrrrr}",
            r"\toprule",
            r"Model & Validated & $n$ & Excluded & $n$ & $\Delta$ & CI & $p$ \\",
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabular}",
            r"\end{table}",
        ]
    )


RENDERERS: dict[str, Callable[[Leaderboard], str]] = {
    "text": as_text,
    "json": as_json,
    "csv": as_csv,
    "latex": as_latex,
}
