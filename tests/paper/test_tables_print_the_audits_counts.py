"""The paper's tables print the numbers the audit computed, under words that describe them:
the label-agreement counts are the audit page's (its majority threshold and denominator),
each agreement n is the pairs its coefficients read, Fleiss' kappa prints its own n and note,
Cohen's kappa says how it was weighted, and the bias table says which rows have a p-value."""

import copy
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.audit.report import label_lines
from prb_annotate.models import Campaign, Dataset, Pair
from prb_annotate.paper import numbers as fmt
from prb_annotate.paper import tables
from prb_annotate.paper.inputs import paper_numbers
from prb_annotate.paper.methods import paragraph
from tests.paper.test_paper import allowed_numbers, numbers_in, write_paper
from tests.support.audit import add_item, annotate, annotators, make_campaign

# A majority is a share of the answers strictly above this (the campaign's setting).
THRESHOLD = 0.7
# Per pair: its category and each answer's rubric fit (the users answer in order).
ANSWERS: dict[str, tuple[str, list[str]]] = {
    "p0000": ("Lifestyle", ["chosen", "chosen", "chosen"]),
    # 2 of 3 is not above 0.7: no majority, so the pair is not counted at all.
    "p0001": ("Lifestyle", ["chosen", "chosen", "rejected"]),
    "p0002": ("Lifestyle", ["rejected", "rejected", "rejected"]),
    "p0003": ("Lifestyle", ["chosen", "rejected", "tie"]),
    "p0004": ("Cooking", ["chosen", "chosen", "chosen"]),
    "p0005": ("Cooking", ["chosen", "chosen"]),
    "p0006": ("Lifestyle", ["chosen"]),
    "p0007": ("Lifestyle", []),
}


@pytest.fixture
def campaign(dataset: Dataset) -> Campaign:
    """Eight pairs answered 3, 2, 1 or 0 times, at a majority threshold of 0.7."""
    campaign = make_campaign(dataset, majority_threshold=THRESHOLD, annotations_per_pair=3)
    users = annotators(3)
    for external_id, (category, fits) in ANSWERS.items():
        pair = Pair.objects.get(dataset=dataset, external_id=external_id)
        Pair.objects.filter(pk=pair.pk).update(category=category)
        item = add_item(campaign, pair)
        for index, (user, fit) in enumerate(zip(users, fits, strict=False)):
            annotate(item, user, fit=fit, chosen=5 - index % 2, rejected=3 + index % 2)
    return campaign


def numbers_of(campaign: Campaign) -> dict[str, Any]:
    return paper_numbers(campaign, campaign_audit(campaign, resamples=0))


def by_key(numbers: dict[str, Any]) -> dict[str, tables.Table]:
    return {table.key: table for table in tables.all_tables(numbers)}


def text_of(numbers: dict[str, Any]) -> str:
    return "".join(part for part in paragraph(numbers) if isinstance(part, str))


def test_label_agreement_counts_the_pairs_the_audit_page_counts(campaign: Campaign) -> None:
    numbers = numbers_of(campaign)
    audit = numbers["audit"]
    page = audit["validity"]["label_agreement"]["pairs_majority_chosen"]
    table = by_key(numbers)["label-agreement"]
    # Majorities above 0.7: p0000, p0002, p0006 (Lifestyle), p0004, p0005 (Cooking); chosen in
    # four. A strict half over every answered pair would have counted 5 of 7.
    assert (page["count"], page["total"]) == (4, 5)
    assert [row[:3] for row in table.rows] == [
        ("Cooking", "2", "2"),
        ("Lifestyle", "3", "2"),
        ("All pairs", "5", "4"),
    ]
    assert table.rows[-1][3] == fmt.estimate(page, fmt.percent)
    # The audit page's own line counts the same pairs.
    line = dict(label_lines(audit))["Pairs whose majority prefers the chosen answer"]
    assert line.endswith("(4/5)")
    # The caption states the threshold and what n counts, from the objects.
    assert "more than 70.0% of the answers agree" in table.caption
    assert "3 pairs without one" in table.caption
    assert numbers["human"]["label_agreement"]["majority_threshold"] == THRESHOLD


def test_the_agreement_n_is_the_pairs_rated_twice_or_more(campaign: Campaign) -> None:
    numbers = numbers_of(campaign)
    fit = next(q for q in numbers["audit"]["agreement"] if q["question"] == "rubric_fit")
    # Seven pairs have an answer, six have two or more: alpha and AC1 read those six.
    assert (fit["units"], fit["units_rated_twice"]) == (7, 6)
    found = by_key(numbers)
    agreement = found["agreement"]
    assert agreement.rows[0][:2] == (fit["label"], "6")
    assert "n: pairs rated twice or more." in agreement.caption
    per_category = found["category-agreement"]
    assert "n: pairs rated twice or more;" in per_category.caption
    assert [row[2] for row in per_category.rows if row[1] == fit["label"]] == ["2", "4"]
    assert "(n = 6 pairs rated twice or more)" in text_of(numbers)


def test_fleiss_kappa_prints_the_pairs_it_read_and_its_note(campaign: Campaign) -> None:
    numbers = numbers_of(campaign)
    fit = next(q for q in numbers["audit"]["agreement"] if q["question"] == "rubric_fit")
    fleiss = next(c for c in fit["coefficients"] if c["key"] == "fleiss_kappa")
    # Five pairs have three ratings, one two and one a single one: Fleiss keeps the five.
    assert fleiss["units"] == 5
    assert fleiss["note"] == "computed on the 5 of 7 rated units that have exactly 3 ratings"
    table = by_key(numbers)["kappa"]
    assert table.rows[0][:2] == (fit["label"], "5")
    assert "n: the pairs it was computed on" in table.caption
    # Every question's Fleiss' kappa read the same five pairs: said once.
    assert f"Fleiss' kappa for every question: {fleiss['note']}." in table.caption
    assert table.caption.count("rated units") == 1


def test_cohens_kappa_says_how_each_row_was_weighted(campaign: Campaign) -> None:
    numbers = numbers_of(campaign)
    weights = {q["kind"]: q["pairwise_weights"] for q in numbers["audit"]["agreement"]}
    assert weights == {"nominal": "identity", "ordinal": "quadratic"}
    caption = by_key(numbers)["kappa"].caption
    assert "unweighted for the choices, quadratic-weighted for the ratings" in caption
    # The words follow the weights the rows carry, not a constant beside them.
    changed = copy.deepcopy(numbers)
    for row in changed["human"]["kappa"]:
        if row["kind"] == "ordinal":
            row["weights"] = "linear"
    assert "linear-weighted for the ratings" in by_key(changed)["kappa"].caption
    # A kind whose rows are weighted differently is worded row by row.
    one_row = copy.deepcopy(numbers)
    rows = one_row["human"]["kappa"]
    rows[2]["weights"] = "identity"
    labels = [row["label"] for row in rows]
    caption = by_key(one_row)["kappa"].caption
    assert f"unweighted for {', '.join(labels[:3])}, quadratic-weighted for {labels[3]}," in caption


def test_the_bias_caption_says_which_rows_have_a_p_value(campaign: Campaign) -> None:
    table = by_key(numbers_of(campaign))["bias"]
    tested = [row[3] for row in table.rows]
    assert tested[3:] == [fmt.DASH, fmt.DASH]
    assert "for the first three rows" in table.caption
    assert "The last two have no p" in table.caption


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_paper_compiles_and_prints_only_the_audits_numbers(
    campaign: Campaign, tmp_path: Path
) -> None:
    folder = write_paper(campaign, tmp_path / "paper")
    for command in ("pdflatex", "bibtex", "pdflatex"):
        options = [] if command == "bibtex" else ["-interaction=nonstopmode", "-halt-on-error"]
        target = "paper" if command == "bibtex" else "paper.tex"
        done = subprocess.run(
            [command, *options, target], cwd=folder, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stdout[-3000:]
    numbers = json.loads((folder / "numbers.json").read_text())
    printed = [
        number
        for table in tables.all_tables(numbers)
        for text in (table.caption, *(cell for row in table.rows for cell in row))
        for number in numbers_in(text)
    ]
    strangers = sorted(set(printed) - allowed_numbers(numbers))
    assert not strangers, f"numbers in the tables that are not the audit's: {strangers}"
    tex = (folder / "tables.tex").read_text()
    assert r"more than 70.0\% of the answers" in tex
    assert "quadratic-weighted for the ratings" in tex
