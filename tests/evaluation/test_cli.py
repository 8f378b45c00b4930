"""``python -m evaluation score`` and ``correlate`` end to end, and their error messages."""

import csv
import json

import pytest

from evaluation.cli import main
from tests.support import tiny

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
    args = ["score", "--data", str(split_file), "--model", str(feature_model_dir), "--name", "fm"]
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
    assert summary["settings"]["name"] == "fm"
    assert summary["inputs"] == {
        "length_limit": 1024,
        "length_limit_source": "the model's max_position_embeddings",
        "mode": "profile",
        "pairs_with_posts_dropped": 0,
        "posts_dropped": 0,
        "paper_length_limit": 8192,
        "model_max_positions": 1024,
    }
    assert summary["run"]["pairs"] == 12
    assert summary["run"]["prefix_reuse"] is True
    overall = summary["accuracy"]["overall"]
    assert overall["correct"] == sum(row["outcome"] == "correct" for row in rows)
    assert overall["ci_low"] <= overall["accuracy"] <= overall["ci_high"]
    assert (
        overall["accuracy_ties_as_wrong_ci_low"]
        <= overall["accuracy_ties_as_wrong"]
        <= overall["accuracy_ties_as_wrong_ci_high"]
    )
    assert set(summary["accuracy"]["by_category"]) == {"Art", "Lifestyle", "Society"}

    printed = capsys.readouterr().out.splitlines()
    assert printed[0].split() == [
        "pairs", "n", "acc%", "95%", "CI", "paper%", "95%", "CI", "ties", "tie%", "unparsed"
    ]  # fmt: skip
    assert "by category:" in printed
    assert "acc%: ties left out; paper%: ties count as wrong, the figure the paper reports" in (
        printed
    )
    assert (
        "length limit: 1,024 tokens (the model's max_position_embeddings; the paper's is 8,192: "
        "--paper-settings)"
    ) in printed
    assert "profile posts dropped to fit: 0 from 0 of 12 pairs" in printed


def test_it_prints_both_accuracies_with_their_intervals(split_file, reward_model_dir, capsys):
    """The row of all pairs gives the ties-excluded accuracy and the paper's figure, each with
    the interval summary.json holds."""
    out = split_file.parent / "run"
    args = ["score", "--data", str(split_file), "--model", str(reward_model_dir)]
    assert main([*args, "--out", str(out), "--no-progress"]) == 0
    overall = json.loads((out / "summary.json").read_text(encoding="utf-8"))["accuracy"]["overall"]

    def percent(value):
        return f"{100 * value:.1f}"

    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("all "))
    assert row.split() == [
        "all",
        "12",
        percent(overall["accuracy"]),
        f"[{percent(overall['ci_low'])},",
        f"{percent(overall['ci_high'])}]",
        percent(overall["accuracy_ties_as_wrong"]),
        f"[{percent(overall['accuracy_ties_as_wrong_ci_low'])},",
        f"{percent(overall['accuracy_ties_as_wrong_ci_high'])}]",
        "0",
        "0.0",
        "0",
    ]


def test_it_counts_the_profile_posts_dropped_to_fit(split_file, reward_model_dir, capsys):
    """With a limit that long profiles exceed, pairs keep fewer posts; the summary and the table
    count them, and they agree with the posts each row reports."""
    out = split_file.parent / "run"
    args = ["score", "--data", str(split_file), "--model", str(reward_model_dir)]
    assert main([*args, "--mode", "profile", "--max-length", "70", "--out", str(out)]) == 0
    rows = read_jsonl(out / "scores.jsonl")
    dropped = [
        min(10, len(record["profile"])) - row["profile_posts"]
        for record, row in zip(RECORDS, rows, strict=True)
    ]
    assert sum(dropped) > 0
    assert all(max(row["chosen_tokens"], row["rejected_tokens"]) <= 70 for row in rows)
    inputs = json.loads((out / "summary.json").read_text(encoding="utf-8"))["inputs"]
    assert inputs["length_limit"] == 70
    assert inputs["length_limit_source"] == "--max-length"
    assert inputs["posts_dropped"] == sum(dropped)
    assert inputs["pairs_with_posts_dropped"] == sum(1 for count in dropped if count)
    printed = capsys.readouterr().out
    assert (
        f"profile posts dropped to fit: {sum(dropped)} from "
        f"{inputs['pairs_with_posts_dropped']} of 12 pairs"
    ) in printed
    assert "length limit: 70 tokens (--max-length; the paper's is 8,192: --paper-settings)" in (
        printed
    )


def test_it_scores_with_the_papers_settings(split_file, reward_model_dir, tmp_path, capsys):
    """--paper-settings: question mode, 8,192 tokens whatever the model's limit, exact ties,
    the paper's reading of a head; an option that contradicts it is an error."""
    out = tmp_path / "paper"
    args = ["score", "--data", str(split_file), "--model", str(reward_model_dir)]
    assert main([*args, "--paper-settings", "--out", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["paper_settings"] is True
    assert summary["settings"]["mode"] == "question"
    assert summary["inputs"]["length_limit"] == 8192
    assert summary["inputs"]["length_limit_source"] == "--paper-settings"
    assert summary["card"]["reward"] == "the single logit"
    assert summary["accuracy_paper"] is None  # a classifier has no unparsed replies
    assert (
        "length limit: 8,192 tokens (--paper-settings; more than the model's 1,024 positions)"
    ) in capsys.readouterr().out
    for option in (
        ["--mode", "profile"],
        ["--max-length", "512"],
        ["--tie-tolerance", "0.1"],
        ["--label-index", "0"],
    ):
        code = main([*args, "--paper-settings", *option, "--out", str(tmp_path / "x")])
        error = capsys.readouterr().err
        assert code == 2
        assert error == (
            "error: --paper-settings means question mode, a length limit of 8,192 tokens, exact "
            "ties and softmax(logits)[-1] for several labels: leave out "
            f"{' '.join(option)}\n"
        )


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
    """Each row keeps the judge's verdicts and counts the tokens of its two answers."""
    out = tmp_path / "judge"
    args = ["score", "--data", str(split_file), "--model", str(judge_a_dir), "--out", str(out)]
    assert main([*args, "--judge", "--both-orders", "--max-new-tokens", "2"]) == 0
    rows = read_jsonl(out / "scores.jsonl")
    tokenizer = tiny.make_tokenizer()
    for record, row in zip(RECORDS, rows, strict=True):
        assert row["chosen_tokens"] == len(
            tokenizer(record["chosen"], add_special_tokens=False)["input_ids"]
        )
        assert row["rejected_tokens"] == len(
            tokenizer(record["rejected"], add_special_tokens=False)["input_ids"]
        )
        assert row["chosen_tokens"] > 0
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


@pytest.mark.parametrize(
    "command",
    [
        ["score", "--data", "split.jsonl", "--model", "builtin:length", "--out", "run"],
        ["correlate", "--bench", "bench.csv", "--downstream", "downstream.csv"],
        ["compare", "run"],
    ],
)
@pytest.mark.parametrize("level", ["1.5", "0", "nan", "high"])
def test_it_refuses_a_confidence_level_outside_0_and_1(command, level, capsys):
    """Before any file is read: at 1.5 a score run printed [0.0, 100.0] as its interval."""
    with pytest.raises(SystemExit) as refused:
        main([*command, "--confidence", level])
    assert refused.value.code == 2
    error = capsys.readouterr().err
    assert f"argument --confidence: must be a number between 0 and 1, not '{level}'" in error
    assert "Traceback" not in error


@pytest.mark.parametrize("command", ["score", "compare"])
def test_it_leaves_the_retired_options_out_of_the_help(command, capsys):
    """``--resamples`` (and compare's ``--seed``) change no figure since the intervals became
    exact: still accepted from older command lines, no longer offered."""
    with pytest.raises(SystemExit) as shown:
        main([command, "--help"])
    assert shown.value.code == 0
    text = capsys.readouterr().out
    assert "--confidence" in text
    assert "--resamples" not in text


def test_it_takes_a_chat_template_from_a_file(tmp_path, split_file, no_template_model_dir):
    template = tmp_path / "template.jinja"
    template.write_text(tiny.TEMPLATE, encoding="utf-8")
    args = ["score", "--data", str(split_file), "--model", str(no_template_model_dir)]
    assert main([*args, "--chat-template", str(template), "--out", str(tmp_path / "run")]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["chat_template"] == "(given)"


def test_correlate_refuses_an_out_file_in_no_folder_before_printing_anything(
    tmp_path, capsys
) -> None:
    """It once printed every result, then a traceback, and exited 1 with nothing written."""
    out = tmp_path / "no such folder" / "corr.json"
    args = ["correlate", "--bench", "bench.csv", "--downstream", "downstream.csv"]
    assert main([*args, "--out", str(out)]) == 2
    printed = capsys.readouterr()
    assert printed.out == ""
    assert f"cannot write {out}: no folder {out.parent}" in printed.err
    assert "Traceback" not in printed.err


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
    assert [c["method"] for c in report["bon"]["correlations"]] == [
        "pearson",
        "spearman",
        "kendall",
        "ndcg",
        "rbo",
        "weighted_tau",
    ]
    by_method = {c["method"]: c for c in report["ppo"]["correlations"]}
    assert by_method["ndcg"]["coefficient"] == pytest.approx(1.0)
    assert by_method["rbo"]["coefficient"] == pytest.approx(1.0)
    assert by_method["weighted_tau"]["coefficient"] == pytest.approx(1.0)
    # Five models: exact permutation p-values (a perfect rank order of 5 is 2 of 120 orders,
    # never p = 0) and no interval over models, each absence with its reason.
    assert by_method["spearman"]["p_value"] == pytest.approx(2 / 120)
    assert by_method["spearman"]["p_method"] == "exact permutation"
    for method in ("spearman", "kendall", "ndcg", "rbo", "weighted_tau"):
        assert by_method[method]["interval"] is None
        assert by_method[method]["ci_low"] is None
        assert "5 models" in by_method[method]["reason"]
    assert "NaN" not in out.read_text()
    printed = capsys.readouterr().out
    assert "spearman" in printed
    assert "0.0167 (exact)" in printed
    assert "note (spearman, kendall): no interval with 5 models" in printed
    assert "left out (in one file only): m6" in printed


def write_summary(path, model, name, accuracy, ties_as_wrong):
    """A summary.json as score writes it (the parts correlate reads)."""
    overall = {"accuracy": accuracy, "accuracy_ties_as_wrong": ties_as_wrong}
    summary = {
        "settings": {"model": model, "name": name},
        "accuracy": {"overall": overall, "by_group": {}},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary), encoding="utf-8")
    return str(path)


def test_it_correlates_summaries_on_the_asked_column_and_run_names(tmp_path, capsys):
    """Runs named with --name match a downstream table of short names, whatever the model
    path; --bench-column picks the figure: ties left out, accuracy rises with the downstream
    score (Spearman 1.0); ties as wrong, the ranks are 2, 3, 1 (Spearman 1 - 6*6/24 = -0.5)."""
    paths = [
        write_summary(tmp_path / name / "summary.json", f"/models/org/{name}-8b", name, acc, tw)
        for name, acc, tw in [("rm-a", 0.6, 0.50), ("rm-b", 0.7, 0.55), ("rm-c", 0.8, 0.40)]
    ]
    downstream = tmp_path / "downstream.json"
    downstream.write_text(
        json.dumps(
            [{"model": "rm-a", "bon": 1}, {"model": "rm-b", "bon": 2}, {"model": "rm-c", "bon": 3}]
        )
    )
    spearman = {}
    for column in ("accuracy", "accuracy_ties_as_wrong"):
        out = tmp_path / f"{column}.json"
        args = ["correlate", "--bench", *paths, "--downstream", str(downstream)]
        assert main([*args, "--bench-column", column, "--out", str(out)]) == 0
        report = json.loads(out.read_text())["bon"]
        assert report["models"] == ["rm-a", "rm-b", "rm-c"]
        assert report["bench_column"] == column
        spearman[column] = next(
            c["coefficient"] for c in report["correlations"] if c["method"] == "spearman"
        )
    assert spearman["accuracy"] == pytest.approx(1.0)
    assert spearman["accuracy_ties_as_wrong"] == pytest.approx(-0.5)
    assert "bon              spearman       3  -0.500" in capsys.readouterr().out


def test_it_matches_unnamed_runs_on_their_model_and_names_what_is_missing(tmp_path, capsys):
    """Runs without a name are matched on the model given to score; a downstream table that
    names none of them is one line saying so, and an unknown column lists the known ones."""
    paths = [
        write_summary(tmp_path / f"{name}.json", name, None, acc, acc)
        for name, acc in [("rm-a", 0.6), ("rm-b", 0.7), ("rm-c", 0.8)]
    ]
    downstream = tmp_path / "downstream.csv"
    downstream.write_text("model,bon\nrm-a,1\nrm-b,3\nrm-c,2\n", encoding="utf-8")
    assert main(["correlate", "--bench", *paths, "--downstream", str(downstream)]) == 0
    assert "spearman       3   0.500" in capsys.readouterr().out

    downstream.write_text("model,bon\nA,1\nB,3\nC,2\n", encoding="utf-8")
    assert main(["correlate", "--bench", *paths, "--downstream", str(downstream)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: only 0 models have both a benchmark and a 'bon' value")
    assert "rm-a, rm-b, rm-c" in error
    args = ["correlate", "--bench", *paths, "--downstream", str(downstream)]
    assert main([*args, "--bench-column", "acc"]) == 2
    assert "no 'acc' (it has accuracy, accuracy_ties_as_wrong)" in capsys.readouterr().err


def refuse(constant):
    raise AssertionError(f"bare {constant} in JSON")


def test_every_file_it_writes_is_strict_json(tmp_path, split_file):
    """A constant benchmark column leaves every correlation undefined and an all-tie baseline
    leaves accuracy undefined: the files say null with a reason, never NaN."""
    bench, downstream = tmp_path / "bench.csv", tmp_path / "downstream.csv"
    bench.write_text("model,accuracy\nm1,0.7\nm2,0.7\nm3,0.7\nm4,0.7\n")
    downstream.write_text("model,bon\nm1,1\nm2,2\nm3,3\nm4,0\n")
    out = tmp_path / "corr.json"
    args = ["correlate", "--bench", str(bench), "--downstream", str(downstream)]
    assert main([*args, "--out", str(out)]) == 0
    report = json.loads(out.read_text(), parse_constant=refuse)
    by_method = {c["method"]: c for c in report["bon"]["correlations"]}
    for method in ("pearson", "spearman", "kendall"):
        assert by_method[method]["coefficient"] is None
        assert by_method[method]["p_value"] is None
        assert by_method[method]["reason"].startswith("undefined")
    runs = tmp_path / "runs"
    args = ["score", "--data", str(split_file), "--model", "builtin:random", "--out", str(runs)]
    assert main(args) == 0
    json.loads((runs / "summary.json").read_text(), parse_constant=refuse)
    for line in (runs / "scores.jsonl").read_text().splitlines():
        json.loads(line, parse_constant=refuse)
