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

import io
import json
from collections.abc import Callable, Mapping

from evaluation.compare import (
    POLICY_WORDS,
    Entry,
    Estimate,
    Leaderboard,
    SubsetBoard,
    SubsetTest,
    figure_words,
)
from evaluation.latex import latex_escape
from evaluation.levels import level_percent
from evaluation.spreadsheet_cells import SafeDictWriter

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
    level = level_percent(settings.confidence)
    tests = figure_words(settings, len(board.models))
    return [
        f"{len(board.models)} models on {board.pairs} pairs, ranked by accuracy with "
        f"{POLICY_WORDS[settings.policy]}",
        f"{level} intervals: Wilson for accuracies, {tests['difference_interval']} for the "
        f"difference to #1; p: exact McNemar against #1, {tests['p_holm']}; {tests['group']}",
    ]


def runner_up_power(subset: SubsetBoard) -> str | None:
    """The power line of #2 against #1: whether the pairs can tell them apart at all."""
    second = subset.entries[1].versus_best if len(subset.entries) > 1 else None
    return None if second is None or second.power is None else f"#2 against #1: {second.power}"


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
    power = runner_up_power(subset)
    return lines if power is None else [*lines, power]


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

# The columns read off an entry's comparison with the best model, and off a model's
# validated-minus-excluded test: column -> attribute. Empty cells where there is none.
VERSUS_BEST_COLUMNS = {
    "difference_to_best": "difference",
    "difference_ci_low": "ci_low",
    "difference_ci_high": "ci_high",
    "difference_method": "method",
    "detectable_difference": "detectable",
    "discordant_better": "better",
    "discordant_worse": "worse",
    "mcnemar_p": "p_value",
    "holm_p": "p_holm",
    "tied_with_best": "tied_with_best",
}
SUBSET_TEST_COLUMNS = {
    "validated_minus_excluded": "difference",
    "validated_minus_excluded_ci_low": "ci_low",
    "validated_minus_excluded_ci_high": "ci_high",
    "fisher_p": "p_value",
}
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
    *VERSUS_BEST_COLUMNS,
    *SUBSET_TEST_COLUMNS,
    "policy",
)


def as_csv(board: Leaderboard) -> str:
    """Undefined figures are empty cells."""
    tests = {test.model: test for test in board.validated_vs_excluded}
    out = io.StringIO()
    # Run names and subsets are what a user typed: no cell may run as a formula.
    writer = SafeDictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for subset in board.subsets:
        for entry in subset.entries:
            writer.writerow(_csv_row(subset, entry, tests.get(entry.model), board))
    return out.getvalue()


def _csv_row(
    subset: SubsetBoard, entry: Entry, test: SubsetTest | None, board: Leaderboard
) -> dict[str, object]:
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
    for found, columns in ((entry.versus_best, VERSUS_BEST_COLUMNS), (test, SUBSET_TEST_COLUMNS)):
        if found is not None:
            row |= {column: getattr(found, name) for column, name in columns.items()}
    return {key: "" if value is None else value for key, value in row.items()}


# --- LaTeX ----------------------------------------------------------------------------------

# The packages the LaTeX tables need.
LATEX_PACKAGES = ("booktabs", "array", "tabularx")


def as_latex(board: Leaderboard) -> str:
    """Tables for a paper: the best model of each subset in bold, the models in its group
    marked with a dagger.

    They fit a two-column page (ACL) and a one-column one (NeurIPS): each table spans the
    page (``table*``) as a ``tabularx`` as wide as the line, whose model column wraps; each
    interval sits under its figure in a smaller size, and abbreviated headings have their key
    in the caption. Nothing is scaled."""
    # Escaped for the captions; the first line is a comment, where % is plain text.
    level = latex_escape(level_percent(board.settings.confidence))
    policy = latex_escape(POLICY_WORDS[board.settings.policy])
    parts = [
        f"% Needs \\usepackage{{{','.join(LATEX_PACKAGES)}}}. Accuracy in %, {policy}; "
        f"{level_percent(board.settings.confidence)} intervals.",
    ]
    tests = figure_words(board.settings, len(board.models))
    for number, subset in enumerate(board.subsets):
        if subset.entries:
            parts.append(_latex_board(subset, number, level, policy, tests))
    if board.validated_vs_excluded:
        parts.append(_latex_subset_tests(board, level, policy))
    return "\n\n".join(parts) + "\n"


def _stacked(figure: str, below: str) -> str:
    """A figure with its interval under it, in a smaller size."""
    if below in ("-", "---"):
        return figure
    return rf"\begin{{tabular}}[t]{{@{{}}r@{{}}}}{figure}\\{{\scriptsize {below}}}\end{{tabular}}"


def _latex_name(name: str) -> str:
    """A model's name that may break after ``:``, ``/`` or ``-`` in a narrow column."""
    return latex_escape(name).replace(":", r":\allowbreak{}").replace("/", r"/\allowbreak{}")


def _latex_table(label: str, caption: str, spec: str, heading: str, rows: list[str]) -> str:
    return "\n".join(
        [
            r"\begin{table*}[t]",
            r"\centering",
            r"\footnotesize",
            r"\setlength{\tabcolsep}{3pt}",
            rf"\caption{{{caption}}}",
            rf"\label{{{label}}}",
            rf"\begin{{tabularx}}{{\linewidth}}{{{spec}}}",
            r"\toprule",
            heading,
            r"\midrule",
            *rows,
            r"\bottomrule",
            r"\end{tabularx}",
            r"\end{table*}",
        ]
    )


def _latex_board(
    subset: SubsetBoard, number: int, level: str, policy: str, tests: Mapping[str, str]
) -> str:
    rows = []
    for entry in subset.entries:
        name = _latex_name(entry.model)
        versus = entry.versus_best
        if versus is None:
            name = rf"\textbf{{{name}}}"
        elif versus.tied_with_best:
            name += r"$^\dagger$"
        paper = entry.accuracy_ties_as_wrong
        compared = "--- & ---"
        if versus is not None:
            compared = (
                _stacked(
                    _minus(points(versus.difference)),
                    _minus(interval(versus.ci_low, versus.ci_high, signed=True)),
                )
                + f" & {_latex_p(versus.p_holm)}"
            )
        rows.append(
            f"{entry.rank} & {entry.group} & {name} & {entry.n} & "
            f"{_stacked(percent(entry.accuracy.value), _ci(entry.accuracy))} & "
            f"{_stacked(percent(paper.value), _ci(paper))} & {compared} \\\\"
        )
    caption = latex_escape(f"{subset.name}, {subset.pairs} pairs")
    return _latex_table(
        f"tab:leaderboard-{number}",
        rf"Reward models on {caption}: accuracy with ties left out and with ties as wrong "
        rf"({level} Wilson intervals with continuity correction, under each figure), "
        rf"difference to \#1 in points ({level} "
        rf"{latex_escape(tests['difference_interval'])}) and exact McNemar $p$, "
        rf"{latex_escape(tests['p_holm'])}; ranked with {policy}. $^\dagger$: in \#1's group "
        rf"({latex_escape(tests['group'])}). G: significance group; Acc.: accuracy, ties left "
        r"out; Acc.\ (t.w.): accuracy, ties as wrong; $\Delta$: difference to \#1.",
        r"rr>{\raggedright\arraybackslash}Xrrrrr",
        r"\# & G & Model & $n$ & Acc. & Acc.\ (t.w.) & $\Delta$ & $p_{\mathrm{Holm}}$ \\",
        rows,
    )


def _minus(text: str) -> str:
    """A typeset minus sign in signed figures; an undefined one as a dash."""
    return "---" if text == "-" else text.replace("-", "$-$")


def _latex_p(value: float | None) -> str:
    text = p_value(value)
    return "$<$0.001" if text == "<0.001" else text


def _latex_subset_tests(board: Leaderboard, level: str, policy: str) -> str:
    rows = [
        f"{_latex_name(test.model)} & {percent(test.validated.value)} & {test.validated.n} & "
        f"{percent(test.excluded.value)} & {test.excluded.n} & "
        + _stacked(
            _minus(points(test.difference)),
            _minus(interval(test.ci_low, test.ci_high, signed=True)),
        )
        + f" & {_latex_p(test.p_value)} \\\\"
        for test in board.validated_vs_excluded
    ]
    return _latex_table(
        "tab:validated-vs-excluded",
        rf"Accuracy on validated against excluded pairs, {policy}: difference in points "
        rf"($\Delta$) with its {level} Newcombe interval under it, Fisher's exact $p$.",
        r">{\raggedright\arraybackslash}Xrrrrrr",
        r"Model & Validated & $n$ & Excluded & $n$ & $\Delta$ & $p$ \\",
        rows,
    )


RENDERERS: dict[str, Callable[[Leaderboard], str]] = {
    "text": as_text,
    "json": as_json,
    "csv": as_csv,
    "latex": as_latex,
}
