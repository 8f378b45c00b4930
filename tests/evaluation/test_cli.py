"""``python -m evaluation score`` and ``correlate`` end to end, and their error messages."""

import csv
import json

import pytest

from evaluation.cli import main
from tests.evaluation import tiny

RECORDS = tiny.records(12)


@pytest.fixture
def split_file(tmp_path):
    path = tmp_path / "split.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in RECORDS), encoding="utf-8")
    return path


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_it_scores_a_file_and_writes_scores_and_summary(
    split_file, feature_model_dir, tmp_path, capsys
):
    out = tmp_path / "run"
    args = ["score", "--data", str(split_file), "--model", str(feature_model_dir)]
    code = main([*args, "--mode", "profile", "--out", str(out), "--no-progress", "--top-k", "2"])
    assert code == 0
    rows = read_jsonl(out / "scores.jsonl")
    assert [row["id"] for row in rows] == [record["id"] for record in RECORDS]
    first = rows[0]
    assert set(first) == {
        "id",
        "category",
        "outcome",
        "chosen_score",
        "rejected_score",
        "margin",
        "chosen_tokens",
        "rejected_tokens",
        "profile_posts",
    }
    assert first["margin"] == pytest.approx(first["chosen_score"] - first["rejected_score"])
    assert first["profile_posts"] == min(2, len(RECORDS[0]["profile"]))

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["mode"] == "profile"
    assert summary["settings"]["data"] == str(split_file)
    assert summary["run"]["pairs"] == 12
    assert summary["run"]["prefix_reuse"] is True
    overall = summary["accuracy"]["overall"]
    assert overall["correct"] == sum(row["outcome"] == "correct" for row in rows)
    assert set(summary["accuracy"]["by_category"]) == {"Art", "Lifestyle", "Society"}

    printed = capsys.readouterr().out
    assert "acc%" in printed
    assert "tie%" in printed
    assert "by category:" in printed


def test_it_reports_validated_and_excluded_pairs_side_by_side(tmp_path, reward_model_dir, capsys):
    """An exported folder whose records carry validation.verdict is summarised by it."""
    for index, row in enumerate(RECORDS):
        row = dict(row, validation={"verdict": "validated" if index % 3 else "excluded"})
        folder = tmp_path / "export" / row["category"]
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "test.jsonl").open("a", encoding="utf-8") as file:
            file.write(json.dumps(row) + "\n")
    out = tmp_path / "run"
    assert (
        main(
            [
                "score",
                "--data",
                str(tmp_path / "export"),
                "--model",
                str(reward_model_dir),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    accuracy = json.loads((out / "summary.json").read_text(encoding="utf-8"))["accuracy"]
    assert accuracy["group_by"] == "validation.verdict"
    assert accuracy["by_group"]["validated"]["n"] == 8
    assert accuracy["by_group"]["excluded"]["n"] == 4
    assert "by validation.verdict:" in capsys.readouterr().out


def test_it_runs_the_judge_from_the_command_line(split_file, judge_a_dir, tmp_path, capsys):
    out = tmp_path / "judge"
    args = ["score", "--data", str(split_file), "--model", str(judge_a_dir), "--out", str(out)]
    assert main([*args, "--judge", "--both-orders", "--max-new-tokens", "2"]) == 0
    rows = read_jsonl(out / "scores.jsonl")
    assert rows[0]["verdicts"][0] == {
        "chosen_position": "A",
        "reply": "A A",
        "named": "A",
        "picked": "chosen",
    }
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["positions"]["consistency"] == 0.0
    assert "position consistency 0.0%" in capsys.readouterr().out


def test_it_explains_what_is_wrong(
    tmp_path, split_file, reward_model_dir, no_template_model_dir, capsys
):
    """Missing model, model without a chat template, a file in the wrong shape: exit status 2
    and a one-line message naming the problem."""
    wrong_shape = tmp_path / "wrong.jsonl"
    wrong_shape.write_text(
        json.dumps({"id": "q1", "question": "q", "answer": "a"}) + "\n", encoding="utf-8"
    )
    cases = [
        (split_file, tmp_path / "nowhere", "no model at"),
        (split_file, no_template_model_dir, "has no chat template"),
        (wrong_shape, reward_model_dir, "wrong.jsonl:1 (id 'q1'): field 'chosen' is missing"),
        (tmp_path / "none.jsonl", reward_model_dir, "no such file"),
    ]
    for data, model, message in cases:
        code = main(
            ["score", "--data", str(data), "--model", str(model), "--out", str(tmp_path / "x")]
        )
        error = capsys.readouterr().err
        assert code == 2, message
        assert message in error
        assert "Traceback" not in error


def test_it_takes_a_chat_template_from_a_file(tmp_path, split_file, no_template_model_dir):
    template = tmp_path / "template.jinja"
    template.write_text(tiny.TEMPLATE, encoding="utf-8")
    args = ["score", "--data", str(split_file), "--model", str(no_template_model_dir)]
    assert main([*args, "--chat-template", str(template), "--out", str(tmp_path / "run")]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["chat_template"] == "(given)"


def test_it_correlates_benchmark_accuracy_with_downstream_scores(tmp_path, capsys):
    bench = tmp_path / "bench.csv"
    downstream = tmp_path / "downstream.csv"
    with bench.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerows(
            [
                ["model", "accuracy"],
                ["m1", 0.61],
                ["m2", 0.64],
                ["m3", 0.70],
                ["m4", 0.72],
                ["m5", 0.76],
            ]
        )
    with downstream.open("w", newline="") as file:
        writer = csv.writer(file)
        writer.writerows(
            [
                ["model", "bon", "ppo"],
                ["m1", 5.1, 3],
                ["m2", 5.0, 4],
                ["m3", 6.2, 5],
                ["m4", 6.0, 6],
                ["m5", 7.3, 7],
                ["m6", 1, 1],
            ]
        )
    out = tmp_path / "corr.json"
    assert (
        main(
            ["correlate", "--bench", str(bench), "--downstream", str(downstream), "--out", str(out)]
        )
        == 0
    )
    report = json.loads(out.read_text())
    assert report["bon"]["models"] == ["m1", "m2", "m3", "m4", "m5"]
    by_method = {c["method"]: c for c in report["ppo"]["correlations"]}
    assert by_method["spearman"]["coefficient"] == pytest.approx(1.0)
    assert by_method["kendall"]["coefficient"] == pytest.approx(1.0)
    assert {c["method"] for c in report["bon"]["correlations"]} == {
        "pearson",
        "spearman",
        "kendall",
    }
    printed = capsys.readouterr().out
    assert "spearman" in printed
    assert "left out (in one file only): m6" in printed


def test_it_correlates_summaries_written_by_score(tmp_path, capsys):
    """summary.json files of several runs serve as the benchmark table."""
    paths = []
    for name, accuracy in [("rm-a", 0.6), ("rm-b", 0.7), ("rm-c", 0.8)]:
        path = tmp_path / f"{name}.json"
        summary = {
            "settings": {"model": name},
            "accuracy": {"overall": {"accuracy": accuracy}, "by_group": {}},
        }
        path.write_text(json.dumps(summary))
        paths.append(str(path))
    downstream = tmp_path / "downstream.json"
    downstream.write_text(
        json.dumps(
            [{"model": "rm-a", "bon": 1}, {"model": "rm-b", "bon": 3}, {"model": "rm-c", "bon": 2}]
        )
    )
    assert main(["correlate", "--bench", *paths, "--downstream", str(downstream)]) == 0
    assert "spearman    3   0.500" in capsys.readouterr().out
