"""The leaderboard of several runs (evaluation/compare.py), worked by hand, its four formats,
and ``python -m evaluation compare`` on run folders that ``score`` wrote."""

import csv
import io
import json
from pathlib import Path

import pytest

from evaluation.cli import main
from evaluation.compare import PairLabel, RunOutcomes, Settings, build_leaderboard
from evaluation.compare_formats import as_csv, as_json, as_latex, as_text
from evaluation.significance import fisher_exact_p, newcombe_difference_interval

C, W, T = "correct", "wrong", "tie"
# Ten pairs: p0-p5 validated, p6-p9 excluded; p0-p4 in category A, p5-p9 in B.
LABELS = {
    f"p{i}": PairLabel("A" if i < 5 else "B", "validated" if i < 6 else "excluded")
    for i in range(10)
}
OUTCOMES = {
    "strong": [C, C, C, C, C, C, C, C, C, W],
    "fan": [C, W, W, W, W, W, C, C, C, C],  # right on excluded pairs, wrong on validated ones
    "weak": [C, C, C, W, W, W, W, W, W, T],
    "flat": [T] * 10,
}


def runs() -> list[RunOutcomes]:
    return [
        RunOutcomes(name, {f"p{i}": outcome for i, outcome in enumerate(column)})
        for name, column in OUTCOMES.items()
    ]


def board(policy: str = "as-wrong", **options):
    return build_leaderboard(runs(), LABELS, Settings(policy=policy, **options))  # type: ignore[arg-type]


def test_it_ranks_and_tests_the_worked_example_with_ties_as_wrong():
    """On all ten pairs: strong 9/10, fan 5/10, weak 3/10, flat 0/10.

    Against strong, the discordant pairs: fan is right alone on p9 and wrong alone on p1-p5
    (1 / 5: p = 2 * 7 / 64 = 0.21875); weak is wrong alone on p3-p8 (0 / 6: p = 2 / 64); flat
    wrong alone on p0-p8 (0 / 9: p = 2 / 512). The other pairs: fan against weak 4 / 2
    (p = 2 * 22 / 64 = 0.6875), fan against flat 5 / 0 (2 / 32), weak against flat 3 / 0
    (2 / 8). Holm over all six: flat 6 * 2/512 = 0.0234, weak 5 * 2/64 = 0.15625, fan-flat
    4 * 0.0625 = 0.25, fan 3 * 0.21875 = 0.65625. So fan and weak are in #1's group at 0.05
    (group 1), and flat is not (it leads group 2 alone)."""
    everything = board().subset("all")
    assert everything is not None
    assert [e.model for e in everything.entries] == ["strong", "fan", "weak", "flat"]
    assert [e.accuracy_ties_as_wrong.value for e in everything.entries] == [0.9, 0.5, 0.3, 0.0]
    versus = {e.model: e.versus_best for e in everything.entries if e.versus_best}
    assert (versus["fan"].better, versus["fan"].worse) == (1, 5)
    assert versus["fan"].p_value == pytest.approx(14 / 64)
    assert versus["weak"].p_value == pytest.approx(2 / 64)
    assert versus["flat"].p_value == pytest.approx(2 / 512)
    assert versus["flat"].p_holm == pytest.approx(6 * 2 / 512)
    assert versus["weak"].p_holm == pytest.approx(5 * 2 / 64)
    assert versus["fan"].p_holm == pytest.approx(3 * 14 / 64)
    assert versus["weak"].difference == pytest.approx(0.3 - 0.9)
    assert versus["weak"].ci_low <= versus["weak"].difference <= versus["weak"].ci_high
    assert {e.model: e.group for e in everything.entries} == {
        "strong": 1,
        "fan": 1,
        "weak": 1,
        "flat": 2,
    }
    assert [
        e.model for e in everything.entries if e.versus_best and e.versus_best.tied_with_best
    ] == [
        "fan",
        "weak",
    ]


def test_it_leaves_ties_out_when_asked_and_says_why_a_figure_is_undefined():
    """Ties left out: weak is 3/9 (its tie on p9 is out), flat has no decided pair, so its
    accuracy is undefined, ranked last, and its comparison with #1 has no pair both decided."""
    everything = board("left-out").subset("all")
    assert everything is not None
    weak = next(e for e in everything.entries if e.model == "weak")
    flat = everything.entries[-1]
    assert weak.accuracy.value == pytest.approx(3 / 9)
    assert weak.accuracy_ties_as_wrong.value == pytest.approx(3 / 10)
    # Against strong on the nine pairs both decided: weak right on 3, strong on all 9.
    assert weak.versus_best.difference == pytest.approx(3 / 9 - 9 / 9)
    assert weak.versus_best.pairs == 9
    assert flat.model == "flat"
    assert flat.accuracy.value is None
    assert flat.accuracy.reason == "no pair decided"
    assert flat.versus_best.difference is None
    assert flat.versus_best.reason == "no pair decided by both"
    assert flat.versus_best.p_value == 1.0


def test_it_builds_a_board_per_subset_and_category():
    built = board()
    assert [(b.key, b.pairs) for b in built.subsets] == [
        ("all", 10),
        ("validated", 6),
        ("excluded", 4),
        ("category:A", 5),
        ("category:B", 5),
    ]
    excluded = built.subset("excluded")
    assert excluded is not None
    # fan is right on every excluded pair, strong on three of the four.
    assert [e.model for e in excluded.entries][:2] == ["fan", "strong"]


def test_it_tests_validated_against_excluded_per_model():
    """strong: 6/6 validated, 3/4 excluded (ties as wrong); fan: 1/6 against 4/4."""
    tests = {test.model: test for test in board().validated_vs_excluded}
    strong, fan = tests["strong"], tests["fan"]
    assert (strong.validated.successes, strong.validated.n) == (6, 6)
    assert (strong.excluded.successes, strong.excluded.n) == (3, 4)
    assert strong.difference == pytest.approx(1 - 0.75)
    assert (strong.ci_low, strong.ci_high) == pytest.approx(
        newcombe_difference_interval(6, 6, 3, 4)
    )
    assert strong.p_value == pytest.approx(fisher_exact_p(6, 6, 3, 4))
    assert fan.difference == pytest.approx(1 / 6 - 1)
    assert fan.p_value == pytest.approx(fisher_exact_p(1, 6, 4, 4))


def test_it_finds_the_models_that_swap_places_on_validated_pairs():
    """All pairs: strong 0.9 > fan 0.5 > weak 0.3 > flat 0. Validated: strong 1 > weak 0.5 >
    fan 1/6 > flat 0. One pair of models reverses: tau = (5 - 1) / 6."""
    ranks = board().ranks
    assert ranks is not None
    assert ranks.tau == pytest.approx(4 / 6)
    assert [(s.above_on_all, s.above_on_validated) for s in ranks.swaps] == [("fan", "weak")]
    swap = ranks.swaps[0]
    assert swap.accuracy_on_all == pytest.approx((0.5, 0.3))
    assert swap.accuracy_on_validated == pytest.approx((1 / 6, 0.5))


def test_it_writes_strict_json_with_reasons_for_undefined_figures():
    """No NaN or Infinity: json.loads refuses them here; every null figure has its reason."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the JSON")

    data = json.loads(as_json(board("left-out")), parse_constant=refuse)
    flat = data["subsets"][0]["entries"][-1]
    assert flat["accuracy"]["value"] is None
    assert flat["accuracy"]["reason"] == "no pair decided"
    assert flat["versus_best"]["difference"] is None
    assert flat["versus_best"]["reason"]
    assert data["settings"]["policy"] == "left-out"
    assert "McNemar" in data["settings"]["tests"]["p_value"]


def test_it_renders_text_csv_and_latex_from_the_same_board():
    built = board()
    text = as_text(built)
    assert "ties counted as wrong" in text
    assert "validated against excluded" in text
    assert "swap: fan above weak" in text
    rows = list(csv.DictReader(io.StringIO(as_csv(built))))
    assert len(rows) == sum(len(b.entries) for b in built.subsets)
    first = rows[0]
    assert (first["subset"], first["model"], first["rank"]) == ("all", "strong", "1")
    assert first["difference_to_best"] == ""  # #1 is not compared with itself
    latex = as_latex(
        build_leaderboard(
            [RunOutcomes("rm_a & b", {"x": C}), RunOutcomes("50%", {"x": W})],
            {"x": PairLabel("")},
            Settings("as-wrong"),
        )
    )
    assert r"\toprule" in latex
    assert r"\bottomrule" in latex
    assert r"\textbf{rm\_a \& b}" in latex
    assert r"50\%$^\dagger$" in latex  # tied with #1: one discordant pair, p = 1


def records(ids: list[str], verdicts: dict[str, str] | None = None) -> list[dict]:
    rows = []
    for number, pair_id in enumerate(ids):
        row: dict[str, object] = {
            "id": pair_id,
            "question": "Which tent for rain in the mountains?",
            "profile": [{"text": "I camp in the mountains when it rains."}],
            "chosen": "A light tent for mountains and rain" + " indeed" * (number % 3),
            "rejected": "Any tent will do" + " fine" * (number % 4),
            "category": "Travel" if number % 2 else "Art",
        }
        if verdicts is not None:
            row["validation"] = {"verdict": verdicts.get(pair_id, "validated")}
        rows.append(row)
    return rows


def score(tmp_path: Path, model: str, rows: list[dict], name: str | None = None) -> Path:
    data = tmp_path / f"{name or model.split(':')[1]}.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "runs" / (name or model.split(":")[1])
    args = ["score", "--data", str(data), "--model", model, "--out", str(out), "--resamples", "0"]
    assert main(args + (["--name", name] if name else [])) == 0
    return out


IDS = [f"q{i:02d}" for i in range(12)]
VERDICTS = dict.fromkeys(IDS[:4], "excluded") | {IDS[4]: "undecided"}


def test_it_compares_runs_score_wrote(tmp_path, capsys):
    """Three built-in baselines scored on the same export: the leaderboard reads each pair's
    verdict from the scores (undecided counts as excluded) and prints every subset."""
    folders = [
        score(tmp_path, model, records(IDS, VERDICTS))
        for model in ("builtin:length", "builtin:profile-overlap", "builtin:random")
    ]
    capsys.readouterr()
    out = tmp_path / "board.json"
    args = ["compare", *map(str, folders), "--format", "json", "--out", str(out)]
    assert main(args) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(data["models"]) == ["builtin:length", "builtin:profile-overlap", "builtin:random"]
    pairs = {subset["key"]: subset["pairs"] for subset in data["subsets"]}
    assert pairs == {
        "all": 12,
        "validated": 7,
        "excluded": 5,
        "category:Art": 6,
        "category:Travel": 6,
    }
    assert len(data["validated_vs_excluded"]) == 3
    assert data["runs"][0]["card"]["kind"] == "built-in baseline"
    # Nothing is resampled: the settings name no resamples, and an older command line that
    # still passes them gets the same leaderboard.
    assert "resamples" not in data["settings"]
    older = tmp_path / "older.json"
    assert main([*args[:-1], str(older), "--resamples", "50", "--seed", "3"]) == 0
    assert json.loads(older.read_text(encoding="utf-8")) == data
    assert main(["compare", *map(str, folders)]) == 0
    assert "validated (7 pairs)" in capsys.readouterr().out


def test_it_refuses_runs_on_different_pairs_unless_asked_to_intersect(tmp_path, capsys):
    first = score(tmp_path, "builtin:length", records(IDS), name="all-pairs")
    second = score(tmp_path, "builtin:random", records(IDS[:10]), name="fewer-pairs")
    capsys.readouterr()
    assert main(["compare", str(first), str(second)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert "score different pairs" in error
    assert "lacks 2" in error
    assert "'q10', 'q11'" in error
    assert "--intersect" in error
    assert main(["compare", str(first), str(second), "--intersect"]) == 0
    printed = capsys.readouterr().out
    assert "compared on the 10 pairs every run scored" in printed
    assert "all-pairs 2, fewer-pairs 0" in printed
    assert "no validated or excluded subset" in printed


def test_it_refuses_runs_that_label_a_pair_differently(tmp_path, capsys):
    first = score(tmp_path, "builtin:length", records(IDS, VERDICTS), name="before")
    second = score(
        tmp_path, "builtin:random", records(IDS, VERDICTS | {IDS[9]: "excluded"}), name="after"
    )
    capsys.readouterr()
    assert main(["compare", str(first), str(second)]) == 2
    error = capsys.readouterr().err
    assert "pair 'q09' is labelled differently" in error
    assert "before: Travel, validated; after: Travel, excluded" in error


def test_it_explains_a_folder_that_is_not_a_run(tmp_path, capsys):
    assert main(["compare", str(tmp_path)]) == 2
    assert "not a run folder (no summary.json" in capsys.readouterr().err
    run = score(tmp_path, "builtin:length", records(IDS[:3]))
    (run / "scores.jsonl").write_text('{"id": "q00", "outcome": "maybe"}\n', encoding="utf-8")
    assert main(["compare", str(run)]) == 2
    assert "scores.jsonl:1: unknown outcome 'maybe'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:
        main(["compare", str(run), "--alpha", "2"])
    assert refused.value.code == 2
    assert "argument --alpha: must be a number between 0 and 1, not '2'" in capsys.readouterr().err
