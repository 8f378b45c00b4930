"""A category annotated whole (a census) prints its share alone in the paper's sample and
prediction-powered tables, with a note that says why, never as "75.0 [75.0, 75.0]" under a
caption that names an interval."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from prb_annotate.paper import numbers as fmt
from prb_annotate.paper import tables
from prb_annotate.paper.method_words import words
from prb_annotate.simulation.model_annotator import simulate_model_annotator
from tests.audit.test_census_estimates import census_campaign
from tests.paper.test_paper import write_paper
from tests.support.sampling import truth

NOTE = f"The share of cooking is {words('census').phrase}."


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_a_census_category_prints_its_share_alone(db: None, tmp_path: Path) -> None:
    campaign = census_campaign()
    simulate_model_annotator(campaign, truth(campaign.dataset), accuracy=0.9, seed=1)
    folder = write_paper(campaign, tmp_path / "paper")
    numbers = json.loads((folder / "numbers.json").read_text())
    found = {table.key: table for table in tables.all_tables(numbers)}

    sample = found["sample-estimate"]
    rows = {row[0]: row for row in sample.rows}
    assert rows["cooking"][1:] == ("4", "4", "4", "75.0")
    assert "[" in rows["fitness"][4]  # the sampled category keeps its interval
    assert NOTE in sample.caption
    # The interval the caption names is the sampled category's, not the census's.
    assert "continuity-corrected Wilson score interval" in sample.caption

    ppi = {row[0]: row for row in found["ppi"].rows}
    assert ppi["cooking"][4] == "75.0"  # humans only
    assert ppi["cooking"][6] == fmt.percent(0.75)  # prediction-powered: the humans' own
    assert NOTE in found["ppi"].caption

    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    assert "75.0 [75.0, 75.0]" not in (folder / "tables.tex").read_text()
