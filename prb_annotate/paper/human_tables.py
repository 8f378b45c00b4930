"""The human-evaluation tables a benchmark paper usually has, from ``numbers["human"]``
(``human.py``) and the audit's agreement: agreement with the dataset's label per category,
what separates the answers, mean ratings of the chosen against the rejected answer, kappa, and
the annotators (pseudonymised, for an appendix). Each prints its n and its intervals."""

from collections.abc import Mapping
from typing import Any

from prb_annotate.paper import numbers as fmt
from prb_annotate.paper.table_data import (
    AGREEMENT_KEYS,
    CATEGORY,
    Column,
    N,
    Printed,
    Table,
    category_name,
    category_table,
    level,
    measured_table,
)

# The n of an agreement coefficient: the pairs it reads (``units_rated_twice``), named as the
# audit page's column names them.
RATED_TWICE = "pairs rated twice or more"
# What joins the parts of a coefficient's note (``agreement._join``).
NOTE_PARTS = "; "


def human_tables(numbers: Mapping[str, Any]) -> list[Table]:
    human = numbers.get("human")
    if not human:
        return []
    return [
        label_table(numbers, human),
        differentiator_table(numbers, human),
        ratings_table(numbers, human),
        category_agreement_table(numbers, human),
        kappa_table(numbers, human),
    ]


def category_agreement_table(numbers: Mapping[str, Any], human: Mapping[str, Any]) -> Table:
    printed = Printed()
    rows = []
    for row in human["category_agreement"]:
        by_key = {c["key"]: c for c in row["coefficients"]}
        alpha_key, gwet_key = AGREEMENT_KEYS[row["kind"]]
        rows.append(
            (
                category_name(row["category"]),
                row["label"],
                fmt.count(row["units_rated_twice"]),
                printed.estimate(by_key[alpha_key]),
                printed.estimate(by_key[gwet_key]),
            )
        )
    return measured_table(
        "category-agreement",
        "Agreement per category on the two choices the verdict rests on: Krippendorff's alpha "
        f"and Gwet's AC1, computed as for all pairs. n: {RATED_TWICE}; an interval marked "
        "unreliable is not printed.",
        level(numbers),
        [CATEGORY, Column("Question", numeric=False), N, Column("Alpha"), Column("AC1")],
        rows,
        printed,
        wide=True,
    )


def label_table(numbers: Mapping[str, Any], human: Mapping[str, Any]) -> Table:
    labels = human["label_agreement"]
    threshold = fmt.percent(labels["majority_threshold"])
    left_out = labels["overall"]["without_majority"]
    return category_table(
        "label-agreement",
        "Agreement with the dataset's label, as the audit counts it: n, the pairs on which more "
        f"than {threshold}% of the answers agree on which answer fits the user (a majority; "
        f"{fmt.count(left_out)} {'pair' if left_out == 1 else 'pairs'} without one, a split "
        "vote or no answer, left out); the pairs whose majority prefers the dataset's chosen "
        "answer, and their share of n in %.",
        level(numbers),
        labels,
        "All pairs",
        [N, Column("Chosen preferred", short="Ch."), Column("Chosen preferred %", short="Ch. %")],
        lambda row, printed: (
            fmt.count(row["total"]),
            fmt.count(row["count"]),
            printed.estimate(row, fmt.percent),
        ),
    )


def differentiator_table(numbers: Mapping[str, Any], human: Mapping[str, Any]) -> Table:
    printed = Printed()
    shares = human["differentiator"]
    rows = [
        (row["label"], fmt.count(row["count"]), printed.estimate(row, fmt.percent))
        for row in shares
    ]
    total = shares[0]["total"] if shares else 0
    return measured_table(
        "differentiator",
        f"What mainly separates the two answers, over the {total} counted answers: n answers "
        "and their share in %.",
        level(numbers),
        [Column("Main difference", numeric=False), N, Column("Share %")],
        rows,
        printed,
    )


def ratings_table(numbers: Mapping[str, Any], human: Mapping[str, Any]) -> Table:
    printed = Printed()
    rows = [
        (
            str(row["criterion"]),
            fmt.count(row["difference"]["n"]),
            printed.estimate(row["chosen"]),
            printed.estimate(row["rejected"]),
            printed.estimate(row["difference"]),
        )
        for row in human["ratings"]
    ]
    scale = numbers["audit"]["settings"]["thresholds"]["rating_scale_max"]
    return measured_table(
        "ratings",
        f"Mean general-quality ratings (1 to {fmt.count(scale)}) of the chosen and the rejected "
        "answer per criterion, and their difference within an answer. n: answers.",
        level(numbers),
        [
            Column("Criterion", numeric=False),
            N,
            Column("Chosen", short="Ch."),
            Column("Rejected", short="Rej."),
            Column("Difference", short="Diff."),
        ],
        rows,
        printed,
        wide=True,
    )


def kappa_table(numbers: Mapping[str, Any], human: Mapping[str, Any]) -> Table:
    printed = Printed()
    fleiss = {
        question["question"]: next(
            (c for c in question["coefficients"] if c["key"] == "fleiss_kappa"), {"value": None}
        )
        for question in numbers["audit"]["agreement"]
    }
    rows = []
    for row in human["kappa"]:
        pairwise = row["pairwise"]
        rows.append(
            (
                row["label"],
                fmt.count(fleiss[row["question"]].get("units")),
                printed.estimate(fleiss[row["question"]]),
                fmt.real(pairwise["mean"]),
                f"{fmt.real(pairwise['min'])} to {fmt.real(pairwise['max'])}",
                fmt.count(pairwise["pairs"]),
            )
        )
    notes = _fleiss_notes(human["kappa"], fleiss)
    return measured_table(
        "kappa",
        "Fleiss' kappa per question (unweighted; n: the pairs it was computed on), and Cohen's "
        f"kappa between each two annotators who rated common pairs, {_cohen_weights(human)}: "
        f"its mean, range and the number of annotator pairs.{notes}",
        level(numbers),
        [
            Column("Question", numeric=False),
            N,
            Column("Fleiss' kappa", short="Fleiss"),
            Column("Cohen's kappa, mean", short="Cohen"),
            Column("Cohen's kappa, range", short="Range"),
            Column("Annotator pairs", short="Pairs"),
        ],
        rows,
        printed,
        wide=True,
    )


# Cohen's kappa's weights (``agreement.weight_matrix``) and the questions of each kind, in words.
WEIGHT_WORDS = {
    "identity": "unweighted",
    "linear": "linear-weighted",
    "quadratic": "quadratic-weighted",
    "ordinal": "weighted by ordinal ranks",
}
KIND_WORDS = {"nominal": "the choices", "ordinal": "the ratings"}


def _cohen_weights(human: Mapping[str, Any]) -> str:
    """ "unweighted for the choices, quadratic-weighted for the ratings", from the weights
    each row's kappas were computed with: by kind of question where a kind has one weighting,
    else by question."""
    rows = human["kappa"]
    by_weights: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_weights.setdefault(row["weights"], []).append(row)
    parts = []
    for weights, chosen in by_weights.items():
        kinds = list(dict.fromkeys(row["kind"] for row in chosen))
        whole = all(row["weights"] == weights for row in rows if row["kind"] in kinds)
        named = (
            " and ".join(KIND_WORDS[kind] for kind in kinds)
            if whole
            else ", ".join(row["label"] for row in chosen)
        )
        parts.append(f"{WEIGHT_WORDS.get(weights, weights)} for {named}")
    return ", ".join(parts)


def _fleiss_notes(rows: list[Mapping[str, Any]], fleiss: Mapping[str, Mapping[str, Any]]) -> str:
    """The audit's notes on Fleiss' kappa (computed on the pairs with the most common number
    of ratings; undefined, and why), each once with the questions it applies to. A note of
    several parts (``agreement._join``: "; " between them) is told part by part, so that the
    subset all questions share is said once."""
    by_part: dict[str, list[str]] = {}
    for row in rows:
        note = str(fleiss[row["question"]].get("note") or "")
        for part in filter(None, note.split(NOTE_PARTS)):
            by_part.setdefault(part, []).append(row["label"])
    sentences = [
        f" Fleiss' kappa for {'every question' if len(labels) == len(rows) else ', '.join(labels)}"
        f": {part}."
        for part, labels in by_part.items()
    ]
    return "".join(sentences)


def annotator_table(numbers: Mapping[str, Any]) -> Table | None:
    human = numbers.get("human")
    if not human or not human["annotators"]:
        return None
    printed = Printed()
    rows = [
        (
            row["annotator"],
            fmt.count(row["answers"]),
            printed.estimate(row["gold"], fmt.percent),
            printed.estimate(row["majority_agreement"], fmt.percent),
            fmt.real(row["mean_kappa"]),
            "yes" if row["left_out"] else "no",
        )
        for row in human["annotators"]
    ]
    return measured_table(
        "annotators",
        "Annotators (for an appendix), under the first characters of their pseudonym in the "
        "exports: n answers, gold accuracy in %, agreement in % with the majority of the others "
        "on which answer fits the user, the mean Cohen's kappa with the others there, and "
        "whether they were left out of the audit.",
        level(numbers),
        [
            Column("Annotator", numeric=False),
            N,
            Column("Gold %"),
            Column("Majority %", short="Maj. %"),
            Column("Mean kappa", short="Kappa"),
            Column("Left out", numeric=False, short="Out"),
        ],
        rows,
        printed,
    )
