"""Judge prompts from files, replies that reason first, and the paper's protocol for a judge.

The templates here are written for the tests in the benchmark's format (a system prompt asking
for ``**Reasoning:**`` then ``**Result:**``, a user template with its fields); the project ships
no copy of the benchmark's own prompts.
"""

import json
import random

import pytest

from evaluation.cli import main
from evaluation.config import ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.judge import judge_chat, parse_verdict
from evaluation.judge_templates import (
    REASONING_NEW_TOKENS,
    VERDICT_NEW_TOKENS,
    load_judge_template,
)
from evaluation.paper_protocol import RULE
from evaluation.records import to_pair_record
from tests.support import tiny

RECORDS = tiny.records(10)
SYSTEM = (
    "You judge two answers to a user's question. Pick the one this user expects.\n"
    "Reply in this format:\n**Reasoning:** <why, in a few words>\n**Result:** <A or B>\n"
)
USER = "Question:\n```\n{question}\n```\n\nA:\n```\n{Response_A}\n```\n\nB:\n```\n{Response_B}\n```"


@pytest.fixture
def template_dir(tmp_path):
    """A prompts folder laid out as the benchmark's: pairwise_system.txt, pairwise_user.txt."""
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "pairwise_system.txt").write_text(SYSTEM, encoding="utf-8")
    (folder / "pairwise_user.txt").write_text(USER + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def split_file(tmp_path):
    path = tmp_path / "split.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in RECORDS), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("**Reasoning:** A rambles. **Result:** B", "B"),
        ("<think>A seems better... no.</think>\n**Reasoning:** B fits.\n**Result:** B", "B"),
        ("<think>Result: A</think><think>again</think>**Result:** B", "B"),
        ("Reasoning: fine.\nRESULT: A", "A"),
        ("result: **B**", "B"),
        ("**Result**: A", "A"),
        ("The result: A. On reflection, Result: B", "B"),
        ("**Reasoning:** Response B is better.\n**Result:**", None),
        ("**Reasoning:** both fine. **Result:** tie", None),
        ("<think>**Result:** A</think>", None),
        ("B, and the rest is reasoning", "B"),
    ],
)
def test_it_reads_the_verdict_after_the_reasoning(reply, verdict):
    """Everything up to the last </think> is dropped, the verdict follows the last "result:"
    (any case, Markdown emphasis allowed), then the usual rules read the letter."""
    assert parse_verdict(reply) == verdict


def test_it_reads_a_template_folder_in_the_benchmarks_layout(template_dir):
    template = load_judge_template([template_dir])
    assert template.system == SYSTEM.strip()
    assert template.user == USER  # stripped, as the benchmark strips its files
    assert template.fields == {"question", "Response_A", "Response_B"}
    assert template.asks_for_reasoning
    assert template.default_max_new_tokens == REASONING_NEW_TOKENS
    record = to_pair_record(RECORDS[0])
    config = ScoreConfig(model="m", judge=True, judge_template=template)
    chat = judge_chat(record, "first {Response_B}", "second", config, posts=0)
    assert chat == [
        {"role": "system", "content": SYSTEM.strip()},
        {
            "role": "user",
            # One pass: an answer holding a field's name is shown as written.
            "content": f"Question:\n```\n{record.question}\n```\n\n"
            "A:\n```\nfirst {Response_B}\n```\n\nB:\n```\nsecond\n```",
        },
    ]


def test_it_refuses_an_unknown_field_naming_the_file(
    tmp_path, split_file, causal_judge_dir, capsys
):
    user = tmp_path / "user.txt"
    user.write_text("{question}\n{Response_A}\n{Response_B}\n{answer}", encoding="utf-8")
    with pytest.raises(EvaluationError) as raised:
        load_judge_template([user])
    assert str(raised.value) == (
        f"judge template {user}: unknown field {{answer}} "
        "(the fields are {question}, {profile}, {Response_A}, {Response_B})"
    )
    code = main(
        [
            "score",
            "--data",
            str(split_file),
            "--model",
            str(causal_judge_dir),
            "--judge",
            "--judge-template",
            str(user),
            "--out",
            str(tmp_path / "run"),
        ]
    )
    assert code == 2
    assert capsys.readouterr().err == f"error: {raised.value}\n"
    assert not (tmp_path / "run").exists()


def test_it_refuses_a_template_without_both_answers(tmp_path):
    user = tmp_path / "user.txt"
    user.write_text("{question} {Response_A}", encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"no \{Response_B\} field"):
        load_judge_template([user])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EvaluationError, match=r"no user\.txt or pairwise_user\.txt"):
        load_judge_template([empty])
    (empty / "user.txt").write_text("{Response_A} {Response_B}", encoding="utf-8")
    assert load_judge_template([empty]).system is None  # a folder's system prompt may be left out


def test_the_reply_length_follows_the_template(tmp_path, template_dir):
    plain = tmp_path / "plain.txt"
    plain.write_text('{question} {Response_A} {Response_B} Reply "A" or "B".', encoding="utf-8")
    assert ScoreConfig(model="m").new_tokens == VERDICT_NEW_TOKENS
    short = ScoreConfig(model="m", judge_template=load_judge_template([plain]))
    assert short.new_tokens == VERDICT_NEW_TOKENS
    reasoning = load_judge_template(
        [template_dir / "pairwise_system.txt", template_dir / "pairwise_user.txt"]
    )
    assert ScoreConfig(model="m", judge_template=reasoning).new_tokens == REASONING_NEW_TOKENS
    given = ScoreConfig(model="m", judge_template=reasoning, max_new_tokens=40)
    assert given.new_tokens == 40


def test_a_template_shows_the_profile_as_the_benchmark_writes_it(tmp_path):
    user = tmp_path / "user.txt"
    user.write_text("{profile}\n\n{question}\n{Response_A}\n{Response_B}", encoding="utf-8")
    record = to_pair_record(RECORDS[1])
    config = ScoreConfig(
        model="m",
        judge=True,
        judge_template=load_judge_template([user]),
        profile_format="benchmark",
    )
    [turn] = judge_chat(record, "x", "y", config, posts=2)
    posts = record.profile[:2]
    expected = "\n".join(
        f"Post {n} (Category: {post.category}):\n{post.text}" for n, post in enumerate(posts, 1)
    )
    assert turn["content"] == f"{expected}\n\n{record.question}\nx\ny"


@pytest.mark.parametrize("fixture", ["causal_judge_dir", "causal_judge_plain_dir"])
def test_it_judges_with_the_papers_protocol(
    fixture, request, template_dir, split_file, tmp_path, capsys
):
    """A tiny causal LM replying in the benchmark's format, with and without a </think> block,
    is read as naming B; the order is the benchmark's (one generator seeded with 42, one draw per
    pair in file order), so it is right exactly where the chosen answer was shown second."""
    model = request.getfixturevalue(fixture)
    out = tmp_path / "run"
    code = main(
        [
            "score",
            "--data",
            str(split_file),
            "--model",
            str(model),
            "--judge",
            "--paper-settings",
            "--judge-template",
            str(template_dir),
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    generator = random.Random(42)
    expected = ["A" if generator.random() < 0.5 else "B" for _ in RECORDS]
    assert [row["verdicts"][0]["chosen_position"] for row in rows] == expected
    assert {row["verdicts"][0]["named"] for row in rows} == {"B"}
    assert [row["outcome"] for row in rows] == [
        "correct" if where == "B" else "wrong" for where in expected
    ]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["settings"]["max_new_tokens"] == REASONING_NEW_TOKENS
    assert summary["settings"]["seed"] == 42
    assert summary["card"]["judge_order"] == "the benchmark's"
    assert summary["card"]["judge_template"]["user"] == str(template_dir / "pairwise_user.txt")
    assert summary["card"]["judge_template"]["asks_for_reasoning"] is True
    # Nothing unparsed: the benchmark's count and ours agree.
    assert summary["accuracy_paper"]["overall"]["correct"] == expected.count("B")
    assert summary["accuracy"]["overall"]["unparsed"] == 0


def test_unparsed_replies_are_reported_apart_and_as_a(
    judge_babble_dir, split_file, tmp_path, capsys
):
    """A judge that never names an answer: ours has every pair unparsed and no accuracy; the
    benchmark's reads each reply as "A", right exactly where the chosen answer was shown first."""
    out = tmp_path / "run"
    code = main(
        [
            "score",
            "--data",
            str(split_file),
            "--model",
            str(judge_babble_dir),
            "--judge",
            "--paper-settings",
            "--max-new-tokens",
            "2",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    ours, paper = summary["accuracy"]["overall"], summary["accuracy_paper"]["overall"]
    assert (ours["unparsed"], ours["correct"], ours["accuracy"]) == (len(RECORDS), 0, None)
    generator = random.Random(42)
    first = sum(generator.random() < 0.5 for _ in RECORDS)
    assert (paper["correct"], paper["wrong"], paper["unparsed"]) == (first, len(RECORDS) - first, 0)
    assert paper["accuracy_ties_as_wrong"] == pytest.approx(first / len(RECORDS))
    assert summary["accuracy_paper"]["unparsed_read_as"] == "A"
    printed = capsys.readouterr().out
    assert f"{RULE}:" in printed
    paper_row = printed.split(f"{RULE}:\n", 1)[1].splitlines()[0]
    assert paper_row.split()[:3] == ["all", str(len(RECORDS)), f"{100 * first / len(RECORDS):.1f}"]


def test_make_tiny_model_causal_writes_a_judge_to_try(tmp_path, split_file, capsys):
    folder = tmp_path / "tiny-causal"
    assert main(["make-tiny-model", "--causal", str(folder)]) == 0
    assert "causal LM with a chat template" in capsys.readouterr().out
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["architectures"] == ["LlamaForCausalLM"]
    assert "always replies the same" in config["prb_note"]
    assert (
        "chat_template" in (folder / "tokenizer_config.json").read_text(encoding="utf-8")
        or (folder / "chat_template.jinja").is_file()
    )
    out = tmp_path / "run"
    assert (
        main(
            [
                "score",
                "--data",
                str(split_file),
                "--model",
                str(folder),
                "--judge",
                "--out",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert {row["verdicts"][0]["named"] for row in rows} == {"B"}


def test_compare_carries_the_benchmarks_count_of_a_judge(
    judge_babble_dir, split_file, tmp_path, capsys
):
    """The leaderboard's runs say what summary.json says: a judge's figures with unparsed
    replies read as "A" beside the run card."""
    folders = []
    for name in ("babble-1", "babble-2"):
        out = tmp_path / name
        args = ["score", "--data", str(split_file), "--model", str(judge_babble_dir), "--judge"]
        assert main([*args, "--max-new-tokens", "2", "--name", name, "--out", str(out)]) == 0
        folders.append(out)
    board = tmp_path / "board.json"
    assert main(["compare", *map(str, folders), "--format", "json", "--out", str(board)]) == 0
    runs = json.loads(board.read_text(encoding="utf-8"))["runs"]
    summary = json.loads((folders[0] / "summary.json").read_text(encoding="utf-8"))
    assert runs[0]["accuracy_paper"] == summary["accuracy_paper"]
    assert runs[0]["accuracy_paper"]["overall"]["unparsed"] == 0
