"""``correlate`` reads the benchmark's downstream files as they are: best-of-N
``evaluation_summary.json`` (one per reward model, named by its folder) and a folder of PPO
``<subset>_<model>_evaluation.txt`` summaries. The files here are written in those layouts."""

import json

import pytest

from evaluation.cli import main
from evaluation.downstream import Downstream, read_bon, read_ppo
from evaluation.errors import EvaluationError

MODELS = ["rm-a", "rm-b", "rm-c", "rm-d"]
ACCURACY = {"rm-a": 0.61, "rm-b": 0.72, "rm-c": 0.55, "rm-d": 0.80}
# Best-of-N mean scores per model: subset -> k -> mean, over 10 and 30 answers.
BON = {
    "rm-a": {"Art_and_Entertainment": {1: 3.0, 4: 3.2}, "Society_and_Culture": {1: 3.1, 4: 3.6}},
    "rm-b": {"Art_and_Entertainment": {1: 3.0, 4: 3.5}, "Society_and_Culture": {1: 3.1, 4: 3.7}},
    "rm-c": {"Art_and_Entertainment": {1: 3.0, 4: 3.1}, "Society_and_Culture": {1: 3.1, 4: 3.0}},
    "rm-d": {"Art_and_Entertainment": {1: 3.0, 4: 3.9}, "Society_and_Culture": {1: 3.1, 4: 3.8}},
}
COUNTS = {"Art_and_Entertainment": 10, "Society_and_Culture": 30}
PPO = {"rm-a": (2.5, 2.9), "rm-b": (2.8, 3.0), "rm-c": (2.1, 2.4), "rm-d": (3.3, 3.1)}


def write_bon(root):
    paths = []
    for model, subsets in BON.items():
        folder = root / "bon" / model
        folder.mkdir(parents=True)
        summary = {
            subset: {
                str(k): {
                    "k": k,
                    "num_examples": COUNTS[subset],
                    "mean_score": mean,
                    "std_score": 0.5,
                    "min_score": 1.0,
                    "max_score": 5.0,
                }
                for k, mean in by_k.items()
            }
            for subset, by_k in subsets.items()
        }
        (folder / "evaluation_summary.json").write_text(json.dumps(summary, indent=2))
        paths.append(folder / "evaluation_summary.json")
    return paths


def write_ppo(root):
    folder = root / "ppo"
    folder.mkdir()
    for model, (art, society) in PPO.items():
        for short, subset, mean, count in (
            ("Art", "Art_and_Entertainment", art, 10),
            ("Society", "Society_and_Culture", society, 30),
        ):
            (folder / f"{short}_{model}_evaluation.txt").write_text(
                "=== Evaluation Summary ===\n"
                f"Total entries:  {count}\nAverage score:  {mean:.4f}\nStd dev:        0.5000\n"
                f"Min:            1.0000\nMax:            5.0000\njudge: J\nsubset: {subset}\n"
            )
    (folder / "Art_rm-a_inference.jsonl").write_text("{}\n")  # not a summary: left alone
    return folder


def test_it_reads_best_of_n_summaries_at_the_largest_shared_k(tmp_path):
    found = Downstream()
    read_bon(write_bon(tmp_path), None, found)
    assert found.notes == ["bon: best-of-4"]
    for model, subsets in BON.items():
        art, society = subsets["Art_and_Entertainment"][4], subsets["Society_and_Culture"][4]
        assert found.columns["bon/Art_and_Entertainment"][model] == art
        assert found.columns["bon"][model] == pytest.approx((10 * art + 30 * society) / 40)
    at_one = Downstream()
    read_bon(write_bon(tmp_path / "again"), 1, at_one)
    assert at_one.columns["bon"]["rm-a"] == pytest.approx((10 * 3.0 + 30 * 3.1) / 40)


def test_it_reads_a_folder_of_ppo_summaries(tmp_path):
    folder = write_ppo(tmp_path)
    found = Downstream()
    read_ppo(folder, found)
    assert sorted(found.columns) == ["ppo", "ppo/Art_and_Entertainment", "ppo/Society_and_Culture"]
    assert found.columns["ppo/Society_and_Culture"] == {m: v[1] for m, v in PPO.items()}
    assert found.columns["ppo"]["rm-b"] == pytest.approx((10 * 2.8 + 30 * 3.0) / 40)
    (folder / "Art_rm-e_evaluation.txt").write_text(
        "Total entries: 10\nAverage score: 2.0\nsubset: Art_and_Entertainment\n"
    )
    partial = Downstream()
    read_ppo(folder, partial)
    assert "rm-e" not in partial.columns["ppo"]
    assert partial.notes == ["ppo: rm-e left out of the pooled column (no Society_and_Culture)"]


def test_correlate_reads_both_layouts_directly(tmp_path, capsys):
    bench = tmp_path / "bench.csv"
    bench.write_text("model,accuracy\n" + "".join(f"{m},{a}\n" for m, a in ACCURACY.items()))
    out = tmp_path / "table.json"
    args = ["correlate", "--bench", str(bench), "--downstream", *map(str, write_bon(tmp_path))]
    code = main([*args, str(write_ppo(tmp_path)), "--out", str(out)])
    assert code == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert list(report)[:2] == ["bon/Art_and_Entertainment", "bon/Society_and_Culture"]
    assert {"bon", "ppo", "ppo/Art_and_Entertainment"} <= set(report)
    assert report["bon"]["models"] == sorted(MODELS)
    spearman = {row["method"]: row for row in report["ppo"]["correlations"]}["spearman"]
    # Accuracy orders d > b > a > c; pooled PPO: d 3.15, b 2.95, a 2.8, c 2.325: the same order.
    assert spearman["coefficient"] == pytest.approx(1.0)
    assert "bon: best-of-4" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"Art": {"4": {"std_score": 1}}}', "subset 'Art', k '4': no numeric 'mean_score'"),
        ('{"Art": [1, 2]}', "subset 'Art' must map each k to its figures"),
        ("[]", "expected {subset: {k: {mean_score, ...}}}"),
    ],
)
def test_a_best_of_n_file_in_another_shape_is_refused(tmp_path, content, message):
    path = tmp_path / "rm-a" / "evaluation_summary.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(EvaluationError) as raised:
        read_bon([path], None, Downstream())
    assert str(raised.value) == f"{path}: {message}"


def test_a_ppo_folder_without_summaries_or_with_a_bad_one_is_refused(tmp_path):
    with pytest.raises(EvaluationError, match=r"no \*_evaluation\.txt files"):
        read_ppo(tmp_path, Downstream())
    bad = tmp_path / "Art_rm-a_evaluation.txt"
    bad.write_text("Total entries: 3\nsubset: Art_and_Entertainment\n")
    with pytest.raises(EvaluationError) as raised:
        read_ppo(tmp_path, Downstream())
    assert str(raised.value) == f"{bad}: no 'Average score:' line (not a PPO summary)"
    bad.write_text("Average score: 2\nsubset: Society_and_Culture\n")
    with pytest.raises(EvaluationError, match=r"should be Society_<model>_evaluation\.txt"):
        read_ppo(tmp_path, Downstream())
