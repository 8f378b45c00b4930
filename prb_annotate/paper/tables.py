"""The paper's tables as plain data: a caption that states the n, columns and formatted cells.

Pure functions of the ``numbers`` dict of ``inputs.paper_numbers`` (the audit report, the
leaderboard and the correlations when there are some, the annotator pools); ``latex`` and
``markdown`` write the same tables, so the two can never disagree.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prb_annotate.paper import numbers as fmt

# The coefficients the agreement table shows, per kind of question: alpha, then Gwet's.
AGREEMENT_KEYS = {"nominal": ("alpha_nominal", "ac1"), "ordinal": ("alpha_ordinal", "ac2_ordinal")}
LEADERBOARD_SUBSETS = ("all", "validated", "excluded")


@dataclass(frozen=True)
class Column:
    heading: str
    numeric: bool = True


@dataclass(frozen=True)
class Table:
    """``key`` names the table (its LaTeX label is ``tab:KEY``); ``caption`` is plain text."""

    key: str
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[str, ...], ...]


def _table(
    key: str, caption: str, columns: Sequence[Column], rows: Sequence[Sequence[str]]
) -> Table:
    return Table(key, caption, tuple(columns), tuple(tuple(row) for row in rows))


def level(numbers: Mapping[str, Any]) -> str:
    return fmt.confidence_level(numbers["audit"]["settings"]["confidence"])


def category_name(category: str | None) -> str:
    return (category or "(no category)").replace("_", " ")


# --- the study ------------------------------------------------------------------------------


def study_table(numbers: Mapping[str, Any]) -> Table:
    audit = numbers["audit"]
    counts = audit["counts"]
    study = numbers["study"]
    rows = [
        ("Pairs audited", fmt.count(counts["pairs"])),
        ("Categories", fmt.count(len(audit["validity"]["per_category"]))),
        ("Annotations per pair (k)", fmt.count(audit["campaign"]["annotations_per_pair"])),
        ("Gold items", fmt.count(counts["gold_items"])),
        ("Annotations (all)", fmt.count(counts["annotations"])),
        ("Annotations counted", fmt.count(counts["counted_annotations"])),
        ("Annotators", fmt.count(counts["annotators"])),
    ]
    rows += [
        (f"Annotators: {pool['label']}", fmt.count(pool["annotators"])) for pool in study["pools"]
    ]
    rows.append(
        (
            "Median time per annotation (s, median over annotators)",
            fmt.seconds(study["median_time_ms"]),
        )
    )
    rows += [
        (f"Left out: {row['reason_label']}", fmt.count(count))
        for row, count in _left_out_reasons(audit)
    ]
    return _table(
        "study",
        f"The study: {counts['pairs']} pairs, {counts['annotators']} annotators. Left-out "
        "annotators' answers are not counted.",
        [Column("", numeric=False), Column("n")],
        rows,
    )


def _left_out_reasons(audit: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], int]]:
    """Each reason annotators were left out for, with how many, in first-seen order."""
    found: dict[str, tuple[Mapping[str, Any], int]] = {}
    for row in audit.get("left_out", []):
        first, seen = found.get(row["reason"], (row, 0))
        found[row["reason"]] = (first, seen + 1)
    return list(found.values())


# --- agreement ------------------------------------------------------------------------------


def agreement_table(numbers: Mapping[str, Any]) -> Table:
    audit = numbers["audit"]
    rows = []
    for question in audit["agreement"]:
        by_key = {c["key"]: c for c in question["coefficients"]}
        alpha_key, gwet_key = AGREEMENT_KEYS[question["kind"]]
        rows.append(
            (
                question["label"],
                fmt.count(question["units"]),
                fmt.estimate(by_key[alpha_key]),
                fmt.estimate(by_key[gwet_key]),
                fmt.percent(fmt.value_of(by_key["percent_agreement"])),
            )
        )
    resamples = audit["settings"]["resamples"]
    return _table(
        "agreement",
        f"Agreement per question: Krippendorff's alpha (nominal for the choices, ordinal for "
        f"the ratings) and Gwet's AC1 (AC2 with ordinal weights for the ratings), with "
        f"{level(numbers)}% bootstrap intervals over pairs ({resamples} resamples), and the "
        "percent agreement. n: pairs rated.",
        [
            Column("Question", numeric=False),
            Column("n"),
            Column("Alpha"),
            Column("AC1 / AC2"),
            Column("Agreement %"),
        ],
        rows,
    )


# --- verdicts -------------------------------------------------------------------------------


def verdict_table(numbers: Mapping[str, Any]) -> Table:
    validity = numbers["audit"]["validity"]
    rows = [_verdict_row(category_name(row["category"]), row) for row in validity["per_category"]]
    rows.append(_verdict_row("All pairs", validity["overall"]))
    return _table(
        "verdicts",
        f"Verdicts per category: n pairs validated, excluded and undecided, and the validated "
        f"share of the decided pairs in % with its {level(numbers)}% Wilson interval.",
        [
            Column("Category", numeric=False),
            Column("n"),
            Column("Validated"),
            Column("Excluded"),
            Column("Undecided"),
            Column("Validated %"),
        ],
        rows,
    )


def _verdict_row(name: str, row: Mapping[str, Any]) -> tuple[str, ...]:
    return (
        name,
        fmt.count(row["pairs"]),
        fmt.count(row["validated"]),
        fmt.count(row["excluded"]),
        fmt.count(row["undecided"]),
        fmt.estimate(row["validated_share"], fmt.percent),
    )


def reasons_table(numbers: Mapping[str, Any]) -> Table:
    audit = numbers["audit"]
    rows = [
        (
            row["label"],
            fmt.count(row["pairs"]),
            fmt.percent(row["share_of_excluded"]),
        )
        for row in audit["validity"]["reasons"]
        if row["pairs"]
    ]
    excluded = audit["counts"]["excluded"]
    return _table(
        "reasons",
        f"Why pairs were not validated: n pairs per reason (a pair may have several), and the "
        f"share of the {excluded} excluded pairs in % (undecided reasons have none).",
        [Column("Reason", numeric=False), Column("n"), Column("% of excluded")],
        rows or [("no pair excluded or undecided", "0", fmt.DASH)],
    )


def sample_table(numbers: Mapping[str, Any]) -> Table | None:
    """The dataset-level estimate of a planned-sample campaign (finite-population intervals)."""
    estimate = numbers["audit"].get("sample_estimate")
    if not estimate:
        return None
    rows = [_sample_row(category_name(row["category"]), row) for row in estimate["per_category"]]
    rows.append(_sample_row("Dataset (stratified)", estimate["overall"]))
    return _table(
        "sample-estimate",
        f"The dataset's validated share in % estimated from the planned sample, with "
        f"{fmt.confidence_level(estimate['confidence'])}% Wilson intervals under the "
        "finite-population correction (stratified by category). n: pairs in the dataset.",
        [
            Column("Category", numeric=False),
            Column("n"),
            Column("Sampled"),
            Column("Decided"),
            Column("Validated %"),
        ],
        rows,
    )


def _sample_row(name: str, row: Mapping[str, Any]) -> tuple[str, ...]:
    return (
        name,
        fmt.count(row["population"]),
        fmt.count(row["sampled"]),
        fmt.count(row["decided"]),
        fmt.estimate(row["share"], fmt.percent),
    )


def ppi_table(numbers: Mapping[str, Any]) -> Table | None:
    """The prediction-powered estimate beside the humans-only one, when a model annotator
    answered the whole dataset of a planned-sample campaign."""
    section = numbers["audit"].get("ppi")
    if not section or not section.get("covers_sample"):
        return None
    rows = [_ppi_row(category_name(row["category"]), row) for row in section["per_category"]]
    rows.append(_ppi_row("Dataset (stratified)", section["overall"]))
    return _table(
        "ppi",
        "The dataset's validated share in % from the human sample alone and with the model "
        "annotator's verdicts on every pair (prediction-powered, PPI++ with a power-tuned "
        f"weight), with {fmt.confidence_level(section['confidence'])}% intervals. n: pairs in "
        "the dataset; the model-only share is biased and has no interval; worth: the human "
        "pairs the prediction-powered interval is worth.",
        [
            Column("Category", numeric=False),
            Column("n"),
            Column("Humans"),
            Column("Agree %"),
            Column("Humans only %"),
            Column("Model only %"),
            Column("PPI %"),
            Column("Worth"),
        ],
        rows,
    )


def _ppi_row(name: str, row: Mapping[str, Any]) -> tuple[str, ...]:
    worth = row.get("worth")
    return (
        name,
        fmt.count(row["population"]),
        fmt.count(row["sample"]["pairs"] if "sample" in row else row["sample_pairs"]),
        fmt.percent(row["agreement"]),
        fmt.estimate(row["humans_only"], fmt.percent),
        fmt.percent(row["model_only"]["share"]),
        fmt.estimate(row["ppi"], fmt.percent),
        fmt.DASH if worth is None else fmt.count(round(worth)),
    )


# --- bias -----------------------------------------------------------------------------------


def bias_table(numbers: Mapping[str, Any]) -> Table:
    bias = numbers["audit"]["bias"]
    position, length = bias["position"], bias["length"]
    rows = [
        _bias_row(
            "Answers naming response A (ties left out)", position["share_a"], position["p_value"]
        ),
        _bias_row(
            "Pairs whose chosen answer is longer",
            length["pairs_chosen_longer"],
            length["pairs_chosen_longer_p_value"],
        ),
        _bias_row(
            "Answers picking the longer answer",
            length["answers_pick_longer"],
            length["answers_pick_longer_p_value"],
        ),
        _bias_row("Chosen picked when it is longer", length["pick_chosen_when_chosen_longer"]),
        _bias_row("Chosen picked when it is shorter", length["pick_chosen_when_chosen_shorter"]),
    ]
    return _table(
        "bias",
        f"Position and length bias: shares in % with {level(numbers)}% Wilson intervals, and "
        "the two-sided binomial p-value against one half. Lengths in characters; the median "
        f"length ratio chosen / rejected is {fmt.real(length['median_length_ratio'])}.",
        [Column("", numeric=False), Column("n"), Column("Share %"), Column("p")],
        rows,
    )


def _bias_row(label: str, entry: Mapping[str, Any], p: float | None = None) -> tuple[str, ...]:
    return (label, fmt.count(entry["total"]), fmt.estimate(entry, fmt.percent), fmt.p_value(p))


# --- reward models --------------------------------------------------------------------------


def leaderboard_table(numbers: Mapping[str, Any]) -> Table | None:
    board = numbers.get("leaderboard")
    if not board or not board["models"]:
        return None
    subsets = {subset["key"]: subset for subset in board["subsets"]}
    shown = [subsets[key] for key in LEADERBOARD_SUBSETS if key in subsets]
    by_model = {
        subset["key"]: {entry["model"]: entry for entry in subset["entries"]} for subset in shown
    }
    order = [entry["model"] for entry in shown[0]["entries"]]
    rows = []
    for model in order:
        row = [model]
        for subset in shown:
            entry = by_model[subset["key"]].get(model)
            row += [
                fmt.DASH if entry is None else fmt.estimate(entry["accuracy"], fmt.percent),
                fmt.DASH if entry is None else fmt.count(entry["group"]),
            ]
        rows.append(row)
    columns = [Column("Model", numeric=False)]
    for subset in shown:
        name = subset["name"].capitalize()
        columns += [Column(f"{name} (n = {subset['pairs']})"), Column("Group")]
    settings = board["settings"]
    return _table(
        "leaderboard",
        f"Reward models: accuracy in % with {fmt.confidence_level(settings['confidence'])}% "
        f"Wilson intervals on all, validated and excluded pairs (n: pairs), "
        f"{settings['policy_words']}. Group 1 is the best model and those statistically tied "
        f"with it (exact McNemar test against the best, Holm-adjusted, alpha "
        f"{fmt.real(settings['alpha'])}).",
        columns,
        rows,
    )


def correlation_table(numbers: Mapping[str, Any]) -> Table | None:
    """The table of ``python -m evaluation correlate --out``, when one was given."""
    found = numbers.get("correlations")
    if not found:
        return None
    rows = [
        (
            column,
            result["method"],
            fmt.count(result["n"]),
            fmt.estimate(result),
            fmt.p_value(result["p_value"]),
        )
        for column, entry in found.items()
        for result in entry["correlations"]
    ]
    return _table(
        "correlations",
        "Benchmark accuracy against downstream results, per downstream measure: the "
        "coefficient with its interval (Fisher's z for the correlations, a bootstrap over "
        "models for the ranking measures) and its p-value. n: models.",
        [
            Column("Downstream", numeric=False),
            Column("Measure", numeric=False),
            Column("n"),
            Column("Coefficient"),
            Column("p"),
        ],
        rows,
    )


def all_tables(numbers: Mapping[str, Any]) -> list[Table]:
    """Every table the numbers call for, in the paper's order."""
    found = [
        study_table(numbers),
        agreement_table(numbers),
        verdict_table(numbers),
        reasons_table(numbers),
        sample_table(numbers),
        ppi_table(numbers),
        bias_table(numbers),
        leaderboard_table(numbers),
        correlation_table(numbers),
    ]
    return [table for table in found if table is not None]
