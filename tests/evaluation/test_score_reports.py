"""What ``score`` prints and writes says what it did: the profile posts each input showed and
dropped, the level of its intervals as given, the judge's order on the run card, which pairs
"excluded" holds (the same in ``score`` and ``compare``), and advice a user can follow."""

import argparse
import json
from pathlib import Path

import pytest
from transformers import AutoTokenizer

from evaluation.cli import build_parser, main
from evaluation.config import ScoreConfig
from evaluation.inputs import encode_chats
from evaluation.judge import judge_chat, ordered
from evaluation.judge_templates import load_judge_template
from evaluation.levels import level_percent
from evaluation.records import to_pair_record
from tests.support import tiny

RECORDS = tiny.records(12)
NEW_TOKENS = 2
WITH_PROFILE = (
    "Posts:\n{profile}\n\nQuestion: {question}\n\nA: {Response_A}\n\nB: {Response_B}\nA or B?"
)
WITHOUT_PROFILE = "Question: {question}\n\nA: {Response_A}\n\nB: {Response_B}\nA or B?"


def write_split(folder, rows):
    path = folder / "split.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_template(folder, user):
    folder.mkdir()
    (folder / "user.txt").write_text(user, encoding="utf-8")
    return folder


def read_run(out):
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    return rows, json.loads((out / "summary.json").read_text(encoding="utf-8"))


def prompt_length(tokenizer, config, record, posts):
    """The longest of the pair's two judge prompts showing ``posts`` profile posts."""
    return max(
        len(
            encode_chats(
                tokenizer,
                [judge_chat(record, *ordered(record, where), config, posts)],
                add_generation_prompt=True,
            )[0]
        )
        for where in ("A", "B")
    )


def test_a_judge_counts_the_posts_its_template_shows_and_drops_in_question_mode(
    tmp_path, judge_a_dir, capsys
):
    """Question mode with a template that has {profile}: the judge is shown posts and drops
    some to fit the limit. Each row says how many it showed and dropped, the prompt showing one
    post more would not have fitted, and the summary and the table add up the rows."""
    template_dir = write_template(tmp_path / "prompts", WITH_PROFILE)
    config = ScoreConfig(
        model=str(judge_a_dir),
        judge=True,
        judge_template=load_judge_template([template_dir]),
        max_new_tokens=NEW_TOKENS,
    )
    tokenizer = AutoTokenizer.from_pretrained(judge_a_dir)
    records = [to_pair_record(row) for row in RECORDS]
    bare = max(prompt_length(tokenizer, config, record, 0) for record in records)
    # Room for every prompt without posts, not for every prompt with all of them.
    limit = bare + 8 + NEW_TOKENS
    full = [prompt_length(tokenizer, config, r, len(r.profile)) for r in records]
    assert max(full) > limit - NEW_TOKENS

    out = tmp_path / "run"
    args = ["score", "--data", str(write_split(tmp_path, RECORDS)), "--model", str(judge_a_dir)]
    options = ["--judge", "--both-orders", "--judge-template", str(template_dir)]
    options += ["--max-new-tokens", str(NEW_TOKENS), "--max-length", str(limit)]
    assert main([*args, *options, "--out", str(out)]) == 0

    rows, summary = read_run(out)
    dropped = [row.get("profile_posts_dropped", 0) for row in rows]
    assert sum(dropped) > 0
    for record, row, lost in zip(records, rows, dropped, strict=True):
        assert row["profile_posts"] + lost == min(10, len(record.profile))
        assert prompt_length(tokenizer, config, record, row["profile_posts"]) <= limit - NEW_TOKENS
        if lost:
            more = prompt_length(tokenizer, config, record, row["profile_posts"] + 1)
            assert more > limit - NEW_TOKENS
    inputs = summary["inputs"]
    assert inputs["mode"] == "question"
    assert inputs["posts_dropped"] == sum(dropped)
    assert inputs["pairs_with_posts_dropped"] == sum(1 for lost in dropped if lost)
    printed = capsys.readouterr().out
    assert (
        f"profile posts dropped to fit: {sum(dropped)} from "
        f"{inputs['pairs_with_posts_dropped']} of 12 pairs"
    ) in printed


def test_a_judge_whose_template_has_no_profile_drops_no_posts_in_profile_mode(
    tmp_path, judge_a_dir, capsys
):
    """Profile mode with a template without {profile}: no post reaches the judge, so none is
    counted as dropped, and the table says that none was shown."""
    template_dir = write_template(tmp_path / "prompts", WITHOUT_PROFILE)
    out = tmp_path / "run"
    args = ["score", "--data", str(write_split(tmp_path, RECORDS)), "--model", str(judge_a_dir)]
    options = ["--judge", "--mode", "profile", "--judge-template", str(template_dir)]
    assert main([*args, *options, "--max-new-tokens", "2", "--out", str(out)]) == 0

    rows, summary = read_run(out)
    assert {row["profile_posts"] for row in rows} == {0}
    assert not any("profile_posts_dropped" in row for row in rows)
    assert summary["inputs"]["posts_dropped"] == 0
    assert summary["inputs"]["pairs_with_posts_dropped"] == 0
    printed = capsys.readouterr().out
    assert "profile posts dropped to fit" not in printed
    assert "profile posts shown: none" in printed


def test_a_classifier_row_says_how_many_posts_it_dropped(tmp_path, reward_model_dir):
    """In profile mode the rows of a classifier's run carry the posts each pair dropped, and
    they sum to the summary's count."""
    out = tmp_path / "run"
    args = [
        "score",
        "--data",
        str(write_split(tmp_path, RECORDS)),
        "--model",
        str(reward_model_dir),
    ]
    assert main([*args, "--mode", "profile", "--max-length", "70", "--out", str(out)]) == 0
    rows, summary = read_run(out)
    dropped = [row.get("profile_posts_dropped", 0) for row in rows]
    assert sum(dropped) == summary["inputs"]["posts_dropped"] > 0
    for record, row, lost in zip(RECORDS, rows, dropped, strict=True):
        assert row["profile_posts"] + lost == min(10, len(record["profile"]))


@pytest.mark.parametrize(
    ("paper", "order"),
    [([], "both orders"), (["--paper-settings"], "both orders")],
)
def test_the_run_card_names_both_orders_when_both_were_asked(tmp_path, judge_a_dir, paper, order):
    """--both-orders asks every pair in both orders, with the paper's settings too; the card
    says so, from the rule that drew the orders."""
    out = tmp_path / "run"
    args = ["score", "--data", str(write_split(tmp_path, RECORDS[:4])), "--model", str(judge_a_dir)]
    options = ["--judge", "--both-orders", "--max-new-tokens", "2", *paper]
    assert main([*args, *options, "--out", str(out)]) == 0
    rows, summary = read_run(out)
    assert [len(row["verdicts"]) for row in rows] == [2] * 4
    assert {tuple(v["chosen_position"] for v in row["verdicts"]) for row in rows} == {("A", "B")}
    assert summary["card"]["judge_order"] == order


def test_the_run_card_names_the_seeded_order_without_both_orders(tmp_path, judge_a_dir):
    out = tmp_path / "run"
    args = ["score", "--data", str(write_split(tmp_path, RECORDS[:4])), "--model", str(judge_a_dir)]
    assert main([*args, "--judge", "--max-new-tokens", "2", "--out", str(out)]) == 0
    rows, summary = read_run(out)
    assert [len(row["verdicts"]) for row in rows] == [1] * 4
    assert summary["card"]["judge_order"] == "per pair, from the seed"


@pytest.mark.parametrize(
    ("confidence", "words"),
    [(0.95, "95%"), (0.975, "97.5%"), (0.999, "99.9%"), (0.9, "90%"), (0.995, "99.5%")],
)
def test_a_level_is_written_as_it_was_given(confidence, words):
    assert level_percent(confidence) == words


def test_score_and_compare_print_the_level_as_given(tmp_path, capsys):
    """--confidence 0.999 is a 99.9% interval in score's table, and 0.975 a 97.5% one in
    compare's headline and LaTeX captions, never rounded to a whole percent."""
    data = write_split(tmp_path, RECORDS)
    run = tmp_path / "run"
    args = ["score", "--data", str(data), "--model", "builtin:length", "--out", str(run)]
    assert main([*args, "--confidence", "0.999"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.count("99.9% CI") == 2
    assert "100% CI" not in header

    assert main(["compare", str(run), "--confidence", "0.975"]) == 0
    assert "97.5% intervals: Wilson for accuracies" in capsys.readouterr().out
    latex = tmp_path / "board.tex"
    assert (
        main(
            ["compare", str(run), "--confidence", "0.975", "--format", "latex", "--out", str(latex)]
        )
        == 0
    )
    text = latex.read_text(encoding="utf-8")
    assert r"(97.5\% Wilson intervals with continuity correction" in text
    assert r"98\%" not in text


VERDICTS = ["validated", "excluded", "undecided"]


def verdict_rows():
    return [
        dict(row, validation={"verdict": VERDICTS[index % 3]}) for index, row in enumerate(RECORDS)
    ]


@pytest.mark.parametrize("model", ["builtin:length", "reward_model"])
def test_score_and_compare_count_the_same_pairs_as_excluded(tmp_path, capsys, model, request):
    """An undecided pair is excluded in score's table as in compare's leaderboard: the same run
    gives the same excluded pairs and the same excluded accuracy in both, and each says what
    excluded holds."""
    if model == "reward_model":
        model = str(request.getfixturevalue("reward_model_dir"))
    run = tmp_path / "run"
    data = write_split(tmp_path, verdict_rows())
    assert main(["score", "--data", str(data), "--model", model, "--out", str(run)]) == 0
    printed = capsys.readouterr().out
    rows, summary = read_run(run)
    groups = summary["accuracy"]["by_group"]
    assert set(groups) == {"validated", "excluded"}
    assert groups["excluded"]["n"] == 8
    assert {row["group"] for row in rows} == {"validated", "excluded"}
    assert summary["grouping"]["excluded_by_verdict"] == {"excluded": 4, "undecided": 4}
    assert "excluded: every pair that did not pass, failed or still undecided" in printed
    assert "4 with the verdict excluded and 4 with the verdict undecided" in printed

    board = tmp_path / "board.json"
    assert main(["compare", str(run), "--format", "json", "--out", str(board)]) == 0
    leaderboard = json.loads(board.read_text(encoding="utf-8"))
    subsets = {subset["key"]: subset for subset in leaderboard["subsets"]}
    for name in ("validated", "excluded"):
        [entry] = subsets[name]["entries"]
        assert subsets[name]["pairs"] == groups[name]["n"]
        assert entry["accuracy"]["value"] == groups[name]["accuracy"]
        assert entry["accuracy"]["ci_low"] == pytest.approx(groups[name]["ci_low"])
        assert entry["accuracy_ties_as_wrong"]["value"] == groups[name]["accuracy_ties_as_wrong"]
    assert any("failed or still undecided" in note for note in leaderboard["notes"])


def test_a_pair_too_long_for_the_papers_limit_gets_advice_it_can_follow(
    tmp_path, reward_model_dir, capsys
):
    """--paper-settings refuses --max-length, so the error does not ask for one with it."""
    long_row = dict(RECORDS[0], chosen=" ".join(["hike"] * 9000))
    data = write_split(tmp_path, [long_row, *RECORDS[1:3]])
    model = str(reward_model_dir)
    args = ["score", "--data", str(data), "--model", model, "--out", str(tmp_path / "run")]
    assert main([*args, "--paper-settings"]) == 2
    error = capsys.readouterr().err
    assert f"record {RECORDS[0]['id']!r}:" in error
    assert "more than the limit of 8192" in error
    assert "takes no --max-length: leave the pair out of the data" in error
    assert "(set a larger --max-length" not in error

    assert main(args) == 2
    assert "set a larger --max-length if the model allows it" in capsys.readouterr().err


def test_every_score_option_is_documented():
    """Each option of ``score`` is named in docs/evaluation.md, and --seed promises no
    resampling."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "evaluation.md").read_text()
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    assert isinstance(commands, argparse._SubParsersAction)
    score = commands.choices["score"]
    options = [
        option
        for action in score._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    ]
    missing = [option for option in options if f"`{option}" not in text]
    assert missing == []
    seed = next(action for action in score._actions if "--seed" in action.option_strings)
    assert "nothing is resampled" in seed.help
