"""The human-evaluation tables a benchmark paper usually has: each with its n and interval,
in LaTeX, Markdown and numbers.json alike, and their figures the audit's where it has them."""

import json
from pathlib import Path
from typing import Any

from prb_annotate.models import Campaign
from prb_annotate.paper import numbers as fmt
from prb_annotate.paper import tables
from tests.paper.test_paper import (  # noqa: F401  (simulated: a fixture)
    markdown_audit,
    simulated,
    write_paper,
)


def by_key(numbers: dict[str, Any]) -> dict[str, tables.Table]:
    return {table.key: table for table in tables.all_tables(numbers)}


def test_the_new_tables_print_numbers_json(simulated: Campaign, tmp_path: Path) -> None:  # noqa: F811
    folder = write_paper(simulated, tmp_path / "paper")
    numbers = json.loads((folder / "numbers.json").read_text())
    human, audit = numbers["human"], numbers["audit"]
    found = by_key(numbers)

    labels = human["label_agreement"]
    # The same pairs as the audit's own count of pairs whose majority picks the chosen answer.
    assert (
        labels["overall"]["count"]
        == audit["validity"]["label_agreement"]["pairs_majority_chosen"]["count"]
    )
    assert found["label-agreement"].rows[-1] == (
        "All pairs",
        str(labels["overall"]["total"]),
        str(labels["overall"]["count"]),
        fmt.estimate(labels["overall"], fmt.percent),
    )
    # Over the pairs with a majority, as the audit counts them (not every pair answered).
    without = audit["validity"]["label_agreement"]["pairs_without_majority"]
    assert sum(row["total"] for row in labels["per_category"]) == audit["counts"]["pairs"] - without

    shares = human["differentiator"]
    assert sum(row["count"] for row in shares) == audit["counts"]["counted_annotations"]
    assert [row[1:] for row in found["differentiator"].rows] == [
        (str(row["count"]), fmt.estimate(row, fmt.percent)) for row in shares
    ]

    for row, printed in zip(human["ratings"], found["ratings"].rows, strict=True):
        assert printed[1] == str(audit["counts"]["counted_annotations"])
        assert printed[2:] == tuple(
            fmt.estimate(row[side]) for side in ("chosen", "rejected", "difference")
        )

    fleiss = {
        q["question"]: next(c for c in q["coefficients"] if c["key"] == "fleiss_kappa")
        for q in audit["agreement"]
    }
    for row, printed in zip(human["kappa"], found["kappa"].rows, strict=True):
        assert printed[2] == fmt.estimate(fleiss[row["question"]])

    # Per category, the same coefficients as for all pairs, on each category's pairs.
    rows = found["category-agreement"].rows
    assert [row[2] for row in rows] == [
        str(r["units_rated_twice"]) for r in human["category_agreement"]
    ]
    per_category = {}
    for row in human["category_agreement"]:
        if row["question"] == "rubric_fit":
            per_category[row["category"]] = row["units"]
    assert sum(per_category.values()) == audit["counts"]["pairs"]

    annotators = found["annotators"]
    names = {row["annotator"] for row in audit["annotators"]}
    assert not any(name in str(annotators.rows) for name in names)  # pseudonymised
    assert [row[0] for row in annotators.rows] == [row["annotator"] for row in human["annotators"]]

    for key in (
        "label-agreement",
        "differentiator",
        "ratings",
        "category-agreement",
        "kappa",
        "annotators",
    ):
        table = found[key]
        assert "n" in [column.heading for column in table.columns], key
        # Each prints intervals, or says why not: 11 pairs a category are too few for a
        # reliable agreement interval (fewer than 30), and the cells say so.
        cells = [cell for row in table.rows for cell in row[3:]]
        if key == "kappa":
            # Fleiss' kappa carries the interval; Cohen's columns are a mean and a range.
            cells = [row[2] for row in table.rows]
        assert table.methods or all(cell.endswith("unreliable") for cell in cells), key
        assert rf"\label{{tab:{key}}}" in (folder / "tables.tex").read_text()


def test_markdown_has_the_same_tables(simulated: Campaign) -> None:  # noqa: F811
    text = markdown_audit(simulated)
    for caption in (
        "Agreement with the dataset's label",
        "What mainly separates the two answers",
        "Mean general-quality ratings",
        "Fleiss' kappa per question",
        "Agreement per category",
        "Annotators (for an appendix)",
    ):
        assert f"**Table: {caption}" in text
