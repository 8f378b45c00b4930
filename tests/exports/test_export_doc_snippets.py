"""docs/export.md's R blocks, run as written on a campaign's long table: irr's nominal alpha on
which answer fits, and irrCAC's AC2 with irr's ordinal alpha on a rating, are the audit's.
Skipped, saying why, where R or its packages are not installed."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from prb_annotate.audit.campaign_audit import campaign_audit
from prb_annotate.datasets.importing import import_path
from prb_annotate.exports.long_table import long_table_csv
from prb_annotate.management.commands.demo_setup import DEMO_FIXTURE, DEMO_FLAWS
from prb_annotate.simulation.demo import create_simulated_campaign
from tests.test_readme import ROOT, runnable

R_PACKAGES = ("irr", "irrCAC", "tidyr")
NUMBER = r"(-?\d+(?:\.\d+)?(?:e-?\d+)?)"


def needs_r() -> None:
    if shutil.which("Rscript") is None:
        pytest.skip("R is not installed (Debian: r-base-core, then irr, irrCAC and tidyr)")
    check = "quit(status = !all(sapply(c({}), requireNamespace, quietly = TRUE)))".format(
        ", ".join(f'"{name}"' for name in R_PACKAGES)
    )
    if subprocess.run(["Rscript", "-e", check], capture_output=True, check=False).returncode:
        pytest.skip(f"R packages {', '.join(R_PACKAGES)} are not all installed")


def coefficient(report: dict, question: str, key: str) -> float:
    found = next(q for q in report["agreement"] if q["question"] == question)
    return float(next(c for c in found["coefficients"] if c["key"] == key)["value"])


def test_the_r_blocks_give_the_audits_figures(db: None, manager: User, tmp_path: Path) -> None:
    needs_r()
    dataset = import_path(DEMO_FIXTURE, "prb-demo").dataset
    campaign = create_simulated_campaign(dataset, manager, DEMO_FLAWS)
    (tmp_path / "long.csv").write_text(long_table_csv(campaign), encoding="utf-8")
    report = campaign_audit(campaign, resamples=0)
    irr_block, irrcac_block = runnable([ROOT / "docs" / "export.md"], "r")
    outputs = []
    for block in (irr_block, irrcac_block):
        (tmp_path / "block.R").write_text(block.code, encoding="utf-8")
        done = subprocess.run(
            ["Rscript", "block.R"], cwd=tmp_path, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{block}: {done.stderr[-2000:]}"
        outputs.append(done.stdout)
    nominal = float(re.search(rf"alpha = {NUMBER}", outputs[0])[1])  # type: ignore[index]
    assert nominal == pytest.approx(coefficient(report, "rubric_fit", "alpha_nominal"), abs=1e-3)
    found = re.search(rf"AC2 {NUMBER} alpha {NUMBER}", outputs[1])
    assert found is not None, outputs[1]
    question = "quality_chosen_correctness"
    # irrCAC rounds its estimates to five decimals.
    assert float(found[1]) == pytest.approx(coefficient(report, question, "ac2_ordinal"), abs=1e-4)
    assert float(found[2]) == pytest.approx(
        coefficient(report, question, "alpha_ordinal"), abs=1e-9
    )
