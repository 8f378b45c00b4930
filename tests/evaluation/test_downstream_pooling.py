"""The pooled best-of-N column holds only models whose file has every subset, as the pooled PPO
column does: a mean over fewer subsets is another figure, so such a model is left out of ``bon``
with a line naming it and what it lacks, and keeps its per-subset values."""

import json

import pytest

from evaluation.cli import main
from evaluation.downstream import Downstream, read_bon
from tests.evaluation.test_downstream import ACCURACY, BON, COUNTS, write_bon


def write_partial(root, model, subsets):
    """A best-of-N summary for ``model`` holding only ``subsets`` (k = 4, mean 3.4)."""
    path = root / "bon" / model / "evaluation_summary.json"
    path.parent.mkdir(parents=True)
    figures = {"4": {"k": 4, "num_examples": 10, "mean_score": 3.4}}
    path.write_text(json.dumps(dict.fromkeys(subsets, figures)), encoding="utf-8")
    return path


def test_a_model_lacking_a_subset_is_left_out_of_the_pooled_column(tmp_path):
    paths = write_bon(tmp_path)
    partial = write_partial(tmp_path, "rm-e", ["Art_and_Entertainment"])
    found = Downstream()
    read_bon([*paths, partial], None, found)
    assert "rm-e" not in found.columns["bon"]
    assert sorted(found.columns["bon"]) == sorted(BON)
    assert found.columns["bon/Art_and_Entertainment"]["rm-e"] == 3.4
    assert "rm-e" not in found.columns["bon/Society_and_Culture"]
    assert found.notes == [
        "bon: best-of-4",
        "bon: rm-e left out of the pooled column (no Society_and_Culture)",
    ]
    art, society = (BON["rm-a"][subset][4] for subset in COUNTS)
    expected = COUNTS["Art_and_Entertainment"] * art + COUNTS["Society_and_Culture"] * society
    assert found.columns["bon"]["rm-a"] == pytest.approx(expected / sum(COUNTS.values()))


def test_correlate_prints_the_model_left_out_of_the_pooled_column(tmp_path, capsys):
    bench = tmp_path / "bench.csv"
    rows = {**ACCURACY, "rm-e": 0.66}
    bench.write_text("model,accuracy\n" + "".join(f"{m},{a}\n" for m, a in rows.items()))
    partial = write_partial(tmp_path, "rm-e", ["Art_and_Entertainment"])
    out = tmp_path / "table.json"
    downstream = [*map(str, write_bon(tmp_path)), str(partial)]
    args = ["correlate", "--bench", str(bench), "--downstream", *downstream]
    assert main([*args, "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert "rm-e" not in report["bon"]["models"]
    assert "rm-e" in report["bon/Art_and_Entertainment"]["models"]
    printed = capsys.readouterr().out
    assert "bon: rm-e left out of the pooled column (no Society_and_Culture)" in printed
