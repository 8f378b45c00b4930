"""The methods paragraph is true for the campaign at hand: every method it names is one that a
printed number used, the counts come from the answers, the pools from where the answers came,
and missing intervals are explained rather than promised."""

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.audit.intervals import METHODS as INTERVAL_METHODS
from prb_annotate.campaigns.evaluating import evaluate_campaign
from prb_annotate.campaigns.external.copies import external_copy
from prb_annotate.campaigns.external.importing import import_answer_path
from prb_annotate.exports.export import export_split
from prb_annotate.management.commands.demo_setup import BASELINES
from prb_annotate.models import Campaign
from prb_annotate.paper import markdown
from prb_annotate.paper.inputs import paper_numbers
from prb_annotate.paper.method_words import METHODS, UnknownMethod, named_in, words
from prb_annotate.paper.methods import paragraph, printed_methods
from prb_annotate.paper.references import AUTHOR_YEAR, ENTRIES
from prb_annotate.paper.tables import all_tables


def agreement_coefficients(numbers: dict[str, Any]) -> list[dict[str, Any]]:
    """Every agreement coefficient the paper prints: for all pairs and per category."""
    questions = numbers["audit"]["agreement"] + numbers["human"]["category_agreement"]
    return [coefficient for question in questions for coefficient in question["coefficients"]]


def text_of(numbers: dict[str, Any]) -> str:
    return markdown.methods(paragraph(numbers)).replace("\\", "")


@pytest.fixture
def numbers(finished: Campaign) -> dict[str, Any]:
    """The paper's numbers with the three baselines scored, as the demo does."""
    for model in BASELINES:
        evaluate_campaign(finished, model=model)
    return paper_numbers(finished, campaign_audit(finished, resamples=200))


def test_every_method_has_words_and_its_citations_exist() -> None:
    assert [name for name in INTERVAL_METHODS if name not in METHODS] == []
    for method, entry in METHODS.items():
        for key in entry.cites:
            assert key in ENTRIES, (method, key)
            assert key in AUTHOR_YEAR, (method, key)
    with pytest.raises(UnknownMethod, match="'jackknife'"):
        words("jackknife")
    assert named_in("a plain Wilson score interval and a continuity-corrected one") == ["wilson"]
    assert named_in(f"{words('wilson_cc').phrase}; {words('wilson').phrase}") == [
        "wilson",
        "wilson_cc",
    ]


def test_the_paragraph_names_exactly_the_methods_of_the_printed_numbers(
    numbers: dict[str, Any],
) -> None:
    text = text_of(numbers)
    printed = printed_methods(numbers)
    assert set(named_in(text)) == set(printed)
    # The demo prints agreement (Bayesian bootstrap with a prior), shares (plain Wilson) and
    # accuracies (Wilson with continuity correction), and the two are named apart.
    assert {"bayesian_prior", "wilson", "wilson_cc"} <= set(printed)
    assert "percentile bootstrap" not in text
    assert "(Rubin, 1981)" in text
    assert "(Wilson, 1927; Newcombe, 1998)" in text
    intervals = {table.key: table.methods for table in all_tables(numbers)}
    assert intervals["verdicts"] == ("wilson",)
    assert intervals["leaderboard"] == ("wilson_cc", "mcnemar_exact", "holm")


def test_a_method_no_number_used_is_not_named(numbers: dict[str, Any]) -> None:
    """The agreement intervals computed another way: the paragraph follows the numbers."""
    changed = copy.deepcopy(numbers)
    for coefficient in agreement_coefficients(changed):
        coefficient["method"] = "percentile"
    text = text_of(changed)
    assert "percentile bootstrap interval over pairs (Efron, 1979)" in text
    assert "Bayesian" not in text
    assert set(named_in(text)) == set(printed_methods(changed))


def test_unreliable_intervals_are_explained_not_promised(numbers: dict[str, Any]) -> None:
    changed = copy.deepcopy(numbers)
    for coefficient in agreement_coefficients(changed):
        coefficient["reliable"] = False
        coefficient["reason"] = "fewer than 30 pairs (n = 12 pairs rated twice)"
    text = text_of(changed)
    assert "bootstrap" not in text
    assert "No agreement interval is printed: each was marked unreliable: fewer than 30 pairs" in (
        text
    )
    assert "bayesian_prior" not in printed_methods(changed)


def counts_sentence(numbers: dict[str, Any]) -> str:
    """The sentence the paragraph must print for the pairs' counted answers, worked out here
    from the verdict rows: most answers first, "1 pair", "32 pairs"."""
    counts = Counter(row["n_annotations"] for row in numbers["audit"]["verdicts"])
    parts = ", ".join(
        f"{pairs} pair{'s' if pairs != 1 else ''} {answers}"
        for answers, pairs in sorted(counts.items(), reverse=True)
    )
    return f"pairs have {min(counts)} to {max(counts)} counted answers ({parts})"


def test_counts_come_from_the_answers_not_the_setting(numbers: dict[str, Any]) -> None:
    # The simulated answers may give a split vote more answers than k = 3; whatever they gave,
    # the sentence says how many pairs have how many (or "each pair has 3" when all do).
    counts = {row["n_annotations"] for row in numbers["audit"]["verdicts"]}
    expected = counts_sentence(numbers) if len(counts) > 1 else "each pair has 3 counted answers;"
    assert expected in text_of(numbers)
    changed = copy.deepcopy(numbers)
    for row in changed["audit"]["verdicts"]:
        row["n_annotations"] = 3
    assert "each pair has 3 counted answers;" in text_of(changed)
    for row in changed["audit"]["verdicts"][:3]:
        row["n_annotations"] = 2
    text = text_of(changed)
    assert "pairs have 2 to 3 counted answers (30 pairs 3, 3 pairs 2)" in text
    assert "each pair has" not in text
    study = {table.key: table for table in all_tables(changed)}["study"]
    assert ("Pairs with fewer counted answers than k", "3") in study.rows


def test_imported_answers_are_named_as_imported(
    finished: Campaign, manager: User, tmp_path: Path
) -> None:
    """An external copy of the demo with three of one annotator's answers dropped: the pool is
    the imported one, the counts are the answers', and without resamples no interval is
    promised."""
    export_split(finished, tmp_path / "e", subset="all", fmt="jsonl")
    lines = (tmp_path / "e" / "annotations.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    # An answer the audit counts: the first row's annotator may be one left out of the audit
    # (which one comes first depends on the database's row order).
    first = next(row for row in rows if row["counted"] is True)
    dropped = [row for row in rows if row["annotator"] == first["annotator"] and row["counted"]][:3]
    kept = [line for line, row in zip(lines, rows, strict=True) if row not in dropped]
    (tmp_path / "e" / "annotations.jsonl").write_text("\n".join(kept) + "\n")
    imported = external_copy(finished, "imported copy", manager)
    import_answer_path(imported, tmp_path / "e" / "annotations.jsonl")
    numbers = paper_numbers(imported, campaign_audit(imported, resamples=0))
    text = text_of(numbers)
    assert "invited or added by a manager" not in text
    assert "whose answers were imported from files collected elsewhere" in text
    assert "collected outside this tool and imported" in text
    assert "counterbalanced" not in text
    # Three answers dropped: fewer counted answers than the campaign they came from (how many
    # each pair keeps depends on the simulated split votes, which vary with the database).
    original = campaign_audit(finished, resamples=0)["verdicts"]
    counted = sum(row["n_annotations"] for row in numbers["audit"]["verdicts"])
    assert counted < sum(row["n_annotations"] for row in original)
    assert counts_sentence(numbers).startswith("pairs have ")
    assert counts_sentence(numbers) in text
    assert "No agreement interval was computed (no resamples were drawn)" in text
    assert set(named_in(text)) == set(printed_methods(numbers))
    assert not any(words(m).phrase in text for m in ("bayesian_prior", "percentile"))
