"""``python -m evaluation compare --format latex`` fits the page: compiled in a two-column
article of ACL's width and a one-column one of NeurIPS' width, no box overflows by more than
1 pt (pdflatex's log); the difference and Holm columns are on the page."""

import random
from pathlib import Path

import pytest

from evaluation.compare import PairLabel, RunOutcomes, Settings, build_leaderboard
from evaluation.compare_formats import LATEX_PACKAGES, as_latex
from tests.support.latex_pages import compile_page, needs_pdflatex, overfull

MODELS = (
    "builtin:profile-overlap",
    "builtin:length",
    "Skywork-Reward-Llama-3.1-8B-v0.2 (random weights)",
    "org/internlm2-7b-reward",
    "builtin:random",
)


def leaderboard_tex() -> str:
    draw = random.Random(7)
    labels = {
        f"p{number:03d}": PairLabel(
            ("Art_and_Entertainment", "Lifestyle_and_Personal_Development")[number % 2],
            "validated" if number % 3 else "excluded",
        )
        for number in range(60)
    }
    runs = [
        RunOutcomes(
            model,
            {pair: draw.choice(("correct", "correct", "wrong", "tie")) for pair in labels},
        )
        for model in MODELS
    ]
    return as_latex(build_leaderboard(runs, labels, Settings("left-out")))


@pytest.mark.parametrize("page", ["acl", "neurips"])
def test_the_compare_tables_fit_the_page(tmp_path: Path, page: str) -> None:
    needs_pdflatex()
    tex = leaderboard_tex()
    assert r"$p_{\mathrm{Holm}}$" in tex
    assert r"\resizebox" not in tex
    body = tex.replace(r"\end{table*}", r"\end{table*}\clearpage")
    log = compile_page(page, body, tmp_path, ",".join(LATEX_PACKAGES))
    assert overfull(log) == [], f"the compare tables overflow the {page} page"
