"""The paper's tables fit the page: the two-column layout in a column of an ACL paper (and on
a NeurIPS page), the one-column layout on a NeurIPS page, with no box overflowing by more than
1 pt (read from pdflatex's log). Every table is there: the demo's, a correlations table, and a
planned sample's estimates with a model annotator's prediction-powered table."""

import json
from pathlib import Path
from typing import Any

import pytest

from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.models import Campaign
from prb_annotate.paper import latex, tables
from prb_annotate.paper.inputs import paper_numbers
from prb_annotate.paper.layout import LAYOUTS, PACKAGES
from prb_annotate.simulation.model_annotator import simulate_model_annotator
from tests.paper.test_paper import simulated  # noqa: F401  (the demo's campaign, a fixture)
from tests.support.latex_pages import compile_page, needs_pdflatex, overfull
from tests.support.sampling import TARGETS, pilot, planned_dataset, truth

CORRELATIONS = {
    "best-of-n win rate": {
        "models": ["a", "b", "c", "d", "e"],
        "correlations": [
            {
                "method": method,
                "n": 5,
                "coefficient": 0.7,
                "p_value": 0.188,
                "ci_low": -0.35,
                "ci_high": 0.97,
                "confidence": 0.95,
                "interval": "fisher",
            }
            for method in ("spearman", "kendall")
        ],
    }
}


@pytest.fixture
def every_table(simulated: Campaign) -> list[tables.Table]:  # noqa: F811
    demo = paper_numbers(simulated, campaign_audit(simulated, resamples=100), CORRELATIONS)
    dataset = planned_dataset()
    planned = create_campaign(dataset, "planned", k=1, sample_targets=TARGETS, seed=2)
    pilot(planned, {"fitness": 12, "cooking": 10})
    simulate_model_annotator(planned, truth(dataset), accuracy=0.9, seed=1)
    sample = paper_numbers(planned, campaign_audit(planned, resamples=0))
    found = tables.all_tables(json.loads(json.dumps(demo))) + [
        table for table in tables.all_tables(sample) if table.key in ("sample-estimate", "ppi")
    ]
    assert {table.key for table in found} >= {"leaderboard", "ppi", "correlations", "agreement"}
    return found


@pytest.mark.parametrize(("columns", "pages"), [("two", ("acl", "neurips")), ("one", ("neurips",))])
def test_the_tables_fit_the_page(
    every_table: list[tables.Table], tmp_path: Path, columns: str, pages: tuple[str, ...]
) -> None:
    needs_pdflatex()
    body = r"\clearpage".join(latex.table(table, columns) for table in every_table)
    for page in pages:
        log = compile_page(page, body, tmp_path / page, ",".join(PACKAGES))
        assert overfull(log) == [], f"{columns}-column tables overflow the {page} page"


def test_without_the_layout_the_tables_would_overflow(
    every_table: list[tables.Table], tmp_path: Path
) -> None:
    """The check can fail: the one-column layout does not fit an ACL column."""
    needs_pdflatex()
    body = "\n".join(latex.table(table, "one") for table in every_table)
    log = compile_page("acl", body, tmp_path, ",".join(PACKAGES))
    assert overfull(log)


def test_a_narrow_layout_abbreviates_with_a_key_and_spans_wide_tables(
    every_table: list[tables.Table],
) -> None:
    by_key: dict[str, Any] = {table.key: table for table in every_table}
    two = latex.table(by_key["verdicts"], "two")
    assert "Val.: Validated; Exc.: Excluded; Und.: Undecided; Val. \\% : Validated \\%" not in two
    assert "Val.: Validated; Exc.: Excluded; Und.: Undecided; Val. \\%: Validated \\%." in two
    assert r"\begin{table}" in two
    assert r"\begin{table*}" in latex.table(by_key["leaderboard"], "two")
    assert r"\begin{table}" in latex.table(by_key["leaderboard"], "one")
    assert "Val.:" not in latex.table(by_key["verdicts"], "one")
    assert r"\resizebox" not in two
    assert set(LAYOUTS) == {"one", "two"}
