"""``correlate`` says what each measure is: its own reason for a missing interval, notes printed
with the measures they apply to, the series that leaves a figure undefined, the column read from
each benchmark file, and the paper's reproduction steps in docs/evaluation.md run as written."""

import glob
import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest

from evaluation.cli import main
from evaluation.correlation import (
    BOOTSTRAP_RELIABLE,
    FEW_MODELS,
    KENDALL_RELIABLE,
    correlations,
    fisher_interval,
    ranking_agreement,
)
from tests.evaluation.test_cli import write_summary

DOCS = Path(__file__).resolve().parents[2] / "docs" / "evaluation.md"
RANK_CORRELATIONS = ("spearman", "kendall")
RANKING = ("ndcg", "rbo", "weighted_tau")


def by_method(results):
    return {result.method: result for result in results}


def test_each_measure_without_an_interval_says_why_in_its_own_terms():
    """Five models: Spearman and Kendall keep their exact p-value as the test; NDCG, RBO and
    weighted tau have no p-value, so their reason must not send the reader to one."""
    x, y = [0.61, 0.64, 0.70, 0.72, 0.76], [5.1, 5.0, 6.2, 6.0, 7.3]
    found = by_method([*correlations(x, y), *ranking_agreement(x, y)])
    for method in RANK_CORRELATIONS:
        assert found[method].p_value is not None
        assert found[method].reason is not None
        assert "exact permutation p-value is the test" in found[method].reason
    for method in RANKING:
        assert found[method].p_value is None
        assert found[method].ci_low is None
        reason = found[method].reason
        assert reason is not None
        assert "p-value is the test" not in reason
        assert "no p-value" in reason
        assert "5 models" in reason
    assert found["pearson"].ci_low is not None
    assert found["pearson"].reason is None


def write_table(path, header, rows):
    path.write_text(
        ",".join(header) + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows),
        encoding="utf-8",
    )
    return str(path)


def test_it_prints_each_note_with_the_measures_it_applies_to(tmp_path, capsys):
    """Four models: Pearson's interval is printed, and the reason Spearman and Kendall have
    none is printed naming them, never as a bare note under Pearson's interval."""
    bench = write_table(
        tmp_path / "bench.csv",
        ["model", "accuracy"],
        [["a", 0.6], ["b", 0.7], ["c", 0.8], ["d", 0.9]],
    )
    downstream = write_table(
        tmp_path / "downstream.csv", ["model", "bon"], [["a", 1], ["b", 2], ["c", 3], ["d", 4]]
    )
    assert main(["correlate", "--bench", bench, "--downstream", downstream]) == 0
    lines = capsys.readouterr().out.splitlines()
    pearson = next(line for line in lines if line.split()[1] == "pearson")
    assert re.search(r"\[\d\.\d{3}, 1\.000\]", pearson)
    notes = [line for line in lines if " note" in line]
    assert notes
    assert all(re.match(r"bon +note \([a-z_, ]+\): ", line) for line in notes)
    no_interval = [line for line in notes if "no interval with 4 models" in line]
    assert [line.split(": ", 1)[0].split("note ")[1] for line in no_interval] == [
        "(spearman, kendall)",
        "(ndcg, rbo, weighted_tau)",
    ]
    assert not any("(pearson" in line for line in no_interval)


@pytest.mark.parametrize(
    ("x", "y", "method", "reason"),
    [
        (
            [0.6, 0.7, 0.8, 0.9],
            [0.5] * 4,
            "weighted_tau",
            "undefined: all 4 downstream values are 0.5",
        ),
        ([0.7] * 4, [1, 2, 3, 4], "weighted_tau", "undefined: all 4 benchmark values are 0.7"),
        (
            [0.7] * 4,
            [0.5] * 4,
            "weighted_tau",
            "undefined: all 4 benchmark values are 0.7 and all 4 downstream values are 0.5",
        ),
        (
            [0.6, 0.7, 0.8, 0.9],
            [0] * 4,
            "ndcg",
            "undefined: all 4 downstream values are 0, and NDCG has no gain to rank by",
        ),
        ([0.6, 0.7, 0.8, 0.9], [0] * 4, "weighted_tau", "undefined: all 4 downstream values are 0"),
    ],
)
def test_an_undefined_ranking_measure_names_the_constant_series(x, y, method, reason):
    """scipy's weighted tau is NaN whenever either series is constant, not only when every
    downstream value is 0; NDCG only when every gain is 0."""
    found = by_method(ranking_agreement(x, y, resamples=0))[method]
    assert found.coefficient is None
    assert found.reason == reason


def test_an_undefined_correlation_names_the_constant_series():
    for result in correlations([0.6, 0.7, 0.8, 0.9], [2, 2, 2, 2]):
        assert result.coefficient is None
        assert result.reason == "undefined: all 4 downstream values are 2"


def test_each_bench_file_is_read_for_its_own_column(tmp_path, capsys):
    """A ``{model: value}`` JSON file is read for "value", and the CSV after it still for
    ``--bench-column``; ``--out`` records the column read from each file."""
    first = tmp_path / "b1.json"
    first.write_text(json.dumps({"a": 0.6, "b": 0.7}), encoding="utf-8")
    second = write_table(tmp_path / "b2.csv", ["model", "accuracy"], [["c", 0.8], ["d", 0.9]])
    downstream = write_table(
        tmp_path / "downstream.csv", ["model", "bon"], [["a", 1], ["b", 3], ["c", 2], ["d", 4]]
    )
    out = tmp_path / "table.json"
    args = ["correlate", "--bench", str(first), second, "--downstream", downstream]
    assert main([*args, "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))["bon"]
    assert report["models"] == ["a", "b", "c", "d"]
    assert report["bench_files"] == [
        {"path": str(first), "column": "value", "group": None},
        {"path": second, "column": "accuracy", "group": None},
    ]
    assert report["bench_column"] is None  # the files gave different columns
    assert f"{first}: read column 'value' (it has no 'accuracy')" in capsys.readouterr().out


def test_out_records_the_column_read_not_the_one_asked(tmp_path):
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"a": 0.6, "b": 0.7, "c": 0.8}), encoding="utf-8")
    downstream = write_table(
        tmp_path / "downstream.csv", ["model", "bon"], [["a", 1], ["b", 3], ["c", 2]]
    )
    out = tmp_path / "table.json"
    assert (
        main(["correlate", "--bench", str(bench), "--downstream", downstream, "--out", str(out)])
        == 0
    )
    report = json.loads(out.read_text(encoding="utf-8"))["bon"]
    assert report["bench_column"] == "value"
    assert [entry["column"] for entry in report["bench_files"]] == ["value"]


def test_model_column_names_the_model_in_every_table(tmp_path):
    """``--model-column`` applies to the CSV and JSON tables alike, and a ``{model: value}``
    file's keys are read as that column."""
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"a": 0.6, "b": 0.7, "c": 0.8}), encoding="utf-8")
    downstream = tmp_path / "downstream.json"
    downstream.write_text(
        json.dumps([{"rm": "a", "ppo": 1}, {"rm": "b", "ppo": 2}, {"rm": "c", "ppo": 3}]),
        encoding="utf-8",
    )
    out = tmp_path / "table.json"
    args = ["correlate", "--bench", str(bench), "--downstream", str(downstream)]
    assert main([*args, "--model-column", "rm", "--out", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))["ppo"]
    assert report["models"] == ["a", "b", "c"]


def test_a_table_of_other_things_than_rows_is_refused_naming_the_row(tmp_path, capsys):
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps([{"model": "a", "accuracy": 0.6}, 0.7]), encoding="utf-8")
    downstream = write_table(tmp_path / "d.csv", ["model", "bon"], [["a", 1]])
    assert main(["correlate", "--bench", str(bench), "--downstream", downstream]) == 2
    assert f"{bench} row 1: expected an object with named columns" in capsys.readouterr().err


def test_pearsons_fisher_interval_keeps_near_its_level_with_few_models():
    """The Fisher interval Pearson keeps at 4 to 9 models is an approximation resting on
    bivariate normal values; with such values it covers 0.94 to 0.97 (docs/evaluation.md).
    The coverage is counted on ``fisher_interval``'s closed form, checked against it first."""
    z = 1.959963984540054
    for r, n in ((0.3, 4), (0.9, 6), (-0.5, 9)):
        half = z / np.sqrt(n - 3)
        expected = (np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half))
        assert fisher_interval(r, n, "pearson") == pytest.approx(expected, abs=1e-12)
    rng = np.random.default_rng(2026)
    replicates = 4000
    coverage = []
    for rho in (0.0, 0.3, 0.6, 0.9, 0.95):
        for n in range(4, FEW_MODELS + 1):
            draws = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=(replicates, n))
            centred = draws - draws.mean(axis=1, keepdims=True)
            x, y = centred[..., 0], centred[..., 1]
            r = (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
            half = z / np.sqrt(n - 3)
            low, high = np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half)
            coverage.append(float(np.mean((low <= rho) & (rho <= high))))
    assert min(coverage) >= 0.94, coverage
    assert max(coverage) <= 0.97, coverage


def paper_section() -> str:
    text = DOCS.read_text(encoding="utf-8")
    return text.split("## Reproducing the paper's table", 1)[1].split("\n## ", 1)[0]


def test_the_papers_steps_name_the_thresholds_the_code_uses():
    section = paper_section()
    assert f"`FEW_MODELS` ({FEW_MODELS}) models or fewer" in section
    assert f"with {FEW_MODELS + 1} to `BOOTSTRAP_RELIABLE` ({BOOTSTRAP_RELIABLE}) models" in section
    assert f"above {BOOTSTRAP_RELIABLE} models" in section
    assert f"`KENDALL_RELIABLE`, {KENDALL_RELIABLE}" in section


def test_the_papers_steps_run_as_written_and_print_what_they_say(tmp_path, monkeypatch, capsys):
    """Step 2's downstream.csv and step 3's command, on one run per model as step 1 writes:
    twelve models, so Spearman has its Fisher interval and the ranking measures print
    ``unreliable``, their bounds in table.json marked ``reliable: false``."""
    section = paper_section()
    table = re.search(r"```\n *(model,bon,ppo\n.*?)```", section, re.DOTALL)
    assert table is not None
    csv_text = "\n".join(line.strip() for line in table[1].strip().splitlines()) + "\n"
    command = next(line for line in section.splitlines() if "-m evaluation correlate" in line)
    monkeypatch.chdir(tmp_path)
    Path("downstream.csv").write_text(csv_text, encoding="utf-8")
    models = [line.split(",")[0] for line in csv_text.splitlines()[1:]]
    assert FEW_MODELS < len(models) <= BOOTSTRAP_RELIABLE
    for number, model in enumerate(models):
        ties_as_wrong = 0.50 + 0.37 * ((number * 5) % len(models)) / len(models)
        write_summary(Path("runs") / model / "summary.json", model, model, 0.9, ties_as_wrong)
    args = []
    for word in shlex.split(command.split("-m evaluation", 1)[1]):
        args += sorted(glob.glob(word)) if "*" in word else [word]
    assert main(args) == 0
    printed = capsys.readouterr().out
    report = json.loads(Path("table.json").read_text(encoding="utf-8"))
    for column in ("bon", "ppo"):
        assert report[column]["models"] == models
        assert report[column]["bench_column"] == "accuracy_ties_as_wrong"
        found = {entry["method"]: entry for entry in report[column]["correlations"]}
        assert found["spearman"]["ci_low"] is not None
        assert found["spearman"]["reliable"] is True
        for method in RANKING:
            assert found[method]["ci_low"] is not None
            assert found[method]["reliable"] is False
            row = next(
                line for line in printed.splitlines() if line.split()[:2] == [column, method]
            )
            assert "unreliable" in row
