"""The paper's tables as plain data: a caption that states the n, columns and formatted cells.

Pure functions of the ``numbers`` dict of ``inputs.paper_numbers`` (the audit report, the
leaderboard and the correlations when there are some, the annotator pools); ``latex`` and
``markdown`` write the same tables, so the two can never disagree.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from prb_annotate.audit.sampling import CENSUS, is_census
from prb_annotate.paper import numbers as fmt
from prb_annotate.paper import protocol
from prb_annotate.paper.human_tables import RATED_TWICE, annotator_table, human_tables
from prb_annotate.paper.method_words import words
from prb_annotate.paper.table_data import (
    AGREEMENT_KEYS,
    Cells,
    Column,
    N,
    Printed,
    Table,
    _table,
    category_name,
    category_table,
    level,
    measured_table,
)

__all__ = ["AGREEMENT_KEYS", "Column", "Printed", "Table", "all_tables", "category_name", "level"]

LEADERBOARD_SUBSETS = ("all", "validated", "excluded")
# The tests behind the bias table's p-values and the leaderboard's groups.
BINOMIAL = "binomial"
GROUP_TESTS = ("mcnemar_exact", "holm")
# The last row of a planned sample's tables: the estimate for the whole dataset.
DATASET = "Dataset (stratified)"


# --- the study ------------------------------------------------------------------------------


def study_table(numbers: Mapping[str, Any]) -> Table:
    audit = numbers["audit"]
    counts = audit["counts"]
    study = numbers["study"]
    k = audit["campaign"]["annotations_per_pair"]
    short = sum(1 for row in audit["verdicts"] if row["n_annotations"] < k)
    rows = [
        ("Pairs audited", fmt.count(counts["pairs"])),
        ("Categories", fmt.count(len(audit["validity"]["per_category"]))),
        ("Required answers per pair (k)", fmt.count(k)),
        ("Pairs with fewer counted answers than k", fmt.count(short)),
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
        [Column("", numeric=False), N],
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
    printed = Printed()
    for question in audit["agreement"]:
        by_key = {c["key"]: c for c in question["coefficients"]}
        alpha_key, gwet_key = AGREEMENT_KEYS[question["kind"]]
        rows.append(
            (
                question["label"],
                fmt.count(question["units_rated_twice"]),
                printed.estimate(by_key[alpha_key]),
                printed.estimate(by_key[gwet_key]),
                fmt.percent(fmt.value_of(by_key["percent_agreement"])),
            )
        )
    resamples = audit["settings"]["resamples"]
    return _table(
        "agreement",
        "Agreement per question: Krippendorff's alpha (nominal for the choices, ordinal for "
        "the ratings) and Gwet's AC1 (AC2 with ordinal weights for the ratings), and the "
        f"percent agreement. n: {RATED_TWICE}. {printed.intervals(level(numbers))}"
        + (f" Resamples: {resamples}." if printed.methods else ""),
        [
            Column("Question", numeric=False),
            N,
            Column("Alpha"),
            Column("AC1 / AC2", short="AC"),
            Column("Agreement %", short="Agr. %"),
        ],
        rows,
        printed,
    )


# --- verdicts -------------------------------------------------------------------------------


def verdict_table(numbers: Mapping[str, Any]) -> Table:
    return category_table(
        "verdicts",
        "Verdicts per category: n pairs validated, excluded and undecided, and the validated "
        "share of the decided pairs in %.",
        level(numbers),
        numbers["audit"]["validity"],
        "All pairs",
        [
            N,
            Column("Validated", short="Val."),
            Column("Excluded", short="Exc."),
            Column("Undecided", short="Und."),
            Column("Validated %", short="Val. %"),
        ],
        _verdict_cells,
    )


def _verdict_cells(row: Mapping[str, Any], printed: Printed) -> tuple[str, ...]:
    return (
        fmt.count(row["pairs"]),
        fmt.count(row["validated"]),
        fmt.count(row["excluded"]),
        fmt.count(row["undecided"]),
        printed.estimate(row["validated_share"], fmt.percent),
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
        [Column("Reason", numeric=False), N, Column("% of excluded")],
        rows or [("no pair excluded or undecided", "0", fmt.DASH)],
    )


def sample_table(numbers: Mapping[str, Any]) -> Table | None:
    """The dataset-level estimate of a planned-sample campaign (finite-population intervals)."""
    estimate = numbers["audit"].get("sample_estimate")
    if not estimate:
        return None
    drawn = (
        "drawn actively where a model annotator was unsure, each pair weighted by the inverse "
        "of its inclusion probability"
        if estimate.get("design") == "active"
        else "stratified by category"
    )
    withheld = [
        category_name(row["category"]) for row in estimate["per_category"] if row.get("withheld")
    ]
    dashes = (
        f" No estimate for {', '.join(withheld)}: too few decided pairs drawn, or one kind of "
        "verdict only, for the active estimate's measured coverage; the dataset's needs every "
        "category's."
        if withheld
        else ""
    )
    return dataset_table(
        "sample-estimate",
        f"The dataset's validated share in % estimated from the planned sample ({drawn}). "
        f"n: pairs in the dataset.{dashes}",
        estimate,
        ("share",),
        [
            N,
            Column("Sampled", short="Smp."),
            Column("Decided", short="Dec."),
            Column("Validated %", short="Val. %"),
        ],
        _sample_cells,
    )


def dataset_table(
    key: str,
    caption: str,
    section: Mapping[str, Any],
    census_keys: Sequence[str],
    columns: Sequence[Column],
    cells: Cells,
) -> Table:
    """A planned sample's estimates per category and for the dataset (``category_table`` at the
    level the section was computed at); the caption ends by naming the rows whose
    ``census_keys`` shares are a census, under the names the table prints them with."""
    named = [(category_name(row["category"]), row) for row in section["per_category"]]
    named.append((DATASET, section["overall"]))
    return category_table(
        key,
        caption + census_note(named, census_keys),
        fmt.confidence_level(section["confidence"]),
        section,
        DATASET,
        columns,
        cells,
    )


def census_note(rows: Sequence[tuple[str, Mapping[str, Any]]], keys: Sequence[str]) -> str:
    """The sentence that says which shares print without an interval because they are a
    census (``sampling.census``: every pair of their population counted), in the words of the
    method they carry; "" when none is."""
    named = [
        name
        for name, row in rows
        if any(is_census(row[key]) for key in keys if isinstance(row.get(key), Mapping))
    ]
    if not named:
        return ""
    are = "share of {} is" if len(named) == 1 else "shares of {} are each"
    return f" The {are.format(', '.join(named))} {words(CENSUS).phrase}."


def _sample_cells(row: Mapping[str, Any], printed: Printed) -> tuple[str, ...]:
    return (
        fmt.count(row["population"]),
        fmt.count(row["sampled"]),
        fmt.count(row["decided"]),
        printed.estimate(row["share"], fmt.percent),
    )


def ppi_table(numbers: Mapping[str, Any]) -> Table | None:
    """The prediction-powered estimate beside the humans-only one, when a model annotator
    answered every decided pair of a planned sample (and perhaps more of the dataset: the
    caption says how many, and that the estimate adds nothing where the model judged no pair
    beyond the sample, ``protocol.model_gain``)."""
    section = numbers["audit"].get("ppi")
    if not section or not section.get("covers_sample"):
        return None
    return dataset_table(
        "ppi",
        "The dataset's validated share in % from the human sample alone and with the model "
        f"annotator's verdicts on {protocol.model_reach(numbers['audit'])} (prediction-powered). "
        f"{protocol.model_gain(numbers['audit'])}n: pairs in the dataset; the model-only share "
        "is biased and has no interval; worth: the human pairs the prediction-powered interval "
        "is worth.",
        section,
        ("humans_only", "ppi"),
        [
            N,
            Column("Humans", short="Hum."),
            Column("Agree %", short="Agr. %"),
            Column("Humans only %", short="Hum. %"),
            Column("Model only %", short="Mod. %"),
            Column("PPI %"),
            Column("Worth"),
        ],
        _ppi_cells,
    )


def _ppi_cells(row: Mapping[str, Any], printed: Printed) -> tuple[str, ...]:
    worth = row.get("worth")
    return (
        fmt.count(row["population"]),
        fmt.count(row["sample"]["pairs"] if "sample" in row else row["sample_pairs"]),
        fmt.percent(row["agreement"]),
        printed.estimate(row["humans_only"], fmt.percent),
        fmt.percent(row["model_only"]["share"]),
        printed.estimate(row["ppi"], fmt.percent),
        fmt.DASH if worth is None else fmt.count(round(worth)),
    )


# --- bias -----------------------------------------------------------------------------------


def bias_table(numbers: Mapping[str, Any]) -> Table:
    bias = numbers["audit"]["bias"]
    position, length = bias["position"], bias["length"]
    printed = Printed()
    rows = [
        _bias_row(
            printed,
            "Answers naming response A (ties left out)",
            position["share_a"],
            position["p_value"],
        ),
        _bias_row(
            printed,
            "Pairs whose chosen answer is longer",
            length["pairs_chosen_longer"],
            length["pairs_chosen_longer_p_value"],
        ),
        _bias_row(
            printed,
            "Answers picking the longer answer",
            length["answers_pick_longer"],
            length["answers_pick_longer_p_value"],
        ),
        _bias_row(
            printed, "Chosen picked when it is longer", length["pick_chosen_when_chosen_longer"]
        ),
        _bias_row(
            printed, "Chosen picked when it is shorter", length["pick_chosen_when_chosen_shorter"]
        ),
    ]
    return measured_table(
        "bias",
        f"Position and length bias: shares in %, and p: the {words(BINOMIAL).phrase}, for the "
        "first three rows, whose share is one half without bias. The last two have no p: they "
        "are read against each other, not against one half (without length bias the chosen "
        "answer is picked as often when it is longer as when it is shorter). Lengths "
        "in characters; the median length ratio chosen / rejected is "
        f"{fmt.real(length['median_length_ratio'])}.",
        level(numbers),
        [Column("", numeric=False), N, Column("Share %"), Column("p")],
        rows,
        printed,
    )


def _bias_row(
    printed: Printed, label: str, entry: Mapping[str, Any], p: float | None = None
) -> tuple[str, ...]:
    return (
        label,
        fmt.count(entry["total"]),
        printed.estimate(entry, fmt.percent),
        printed.test(BINOMIAL, p),
    )


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
    printed = Printed()
    for model in order:
        row = [model]
        for subset in shown:
            entry = by_model[subset["key"]].get(model)
            row += [
                fmt.DASH if entry is None else printed.estimate(entry["accuracy"], fmt.percent),
                fmt.DASH if entry is None else fmt.count(entry["group"]),
            ]
        rows.append(row)
    if len(order) > 1:  # the groups rest on the tests against the best
        printed.methods += GROUP_TESTS
    columns = [Column("Model", numeric=False)]
    for subset in shown:
        name = subset["name"].capitalize()
        columns += [Column(f"{name} (n = {subset['pairs']})"), Column("Group", short="G")]
    settings = board["settings"]
    return measured_table(
        "leaderboard",
        "Reward models: accuracy in % on all, validated and excluded pairs (n: pairs), "
        f"{settings['policy_words']}. Groups: {settings['grouping']['words']}.",
        fmt.confidence_level(settings["confidence"]),
        columns,
        rows,
        printed,
    )


def correlation_table(numbers: Mapping[str, Any]) -> Table | None:
    """The table of ``python -m evaluation correlate --out``, when one was given."""
    found = numbers.get("correlations")
    if not found:
        return None
    printed = Printed()
    rows = [
        (
            column,
            result["method"],
            fmt.count(result["n"]),
            printed.estimate(result),
            fmt.p_value(result["p_value"]),
        )
        for column, entry in found.items()
        for result in entry["correlations"]
    ]
    confidence = next(
        (r.get("confidence") for e in found.values() for r in e["correlations"]), 0.95
    )
    return measured_table(
        "correlations",
        "Benchmark accuracy against downstream results, per downstream measure: the "
        "coefficient with its interval and its p-value. n: models.",
        fmt.confidence_level(confidence or 0.95),
        [
            Column("Downstream", numeric=False),
            Column("Measure", numeric=False),
            N,
            Column("Coefficient"),
            Column("p"),
        ],
        rows,
        printed,
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
        *human_tables(numbers),
        leaderboard_table(numbers),
        correlation_table(numbers),
        annotator_table(numbers),
    ]
    return [table for table in found if table is not None]
