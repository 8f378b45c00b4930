"""``score --self-check N`` and the run card, with real tiny Llama reward models built here.

The self-check scores N pairs one at a time and compares with the batched run. A model built to
depend on padding (it ignores the attention mask and counts positions from the first column,
so left padding leaks into what the last token reads) must be caught; an honest one must pass.
"""

import hashlib
import json
from pathlib import Path

import pytest
import torch
import transformers
from torch import nn

from evaluation import tiny as package_tiny
from evaluation.cli import main
from evaluation.config import ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.models import LoadedModel, last_token_parts
from evaluation.scoring import score_records
from tests.support import tiny


@pytest.fixture(scope="module", autouse=True)
def one_cpu_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class PaddingBlindBackbone(nn.Module):
    """The real Llama body, called as a careless implementation would: without the attention
    mask and without position ids, so pad tokens are attended like words."""

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, input_ids=None, attention_mask=None, position_ids=None, **options):
        return self.inner(input_ids=input_ids, **options)


def feature_model(*, padding_blind: bool) -> LoadedModel:
    """The feature reward model of tests/evaluation/tiny.py (its reward grows with the share of
    marker words the last token attends to), padding on the left."""
    tokenizer = tiny.make_tokenizer(padding_side="left")
    model = tiny.feature_reward_model(tokenizer)
    backbone, head = last_token_parts(model)
    assert backbone is not None
    if padding_blind:
        backbone = PaddingBlindBackbone(backbone)
    return LoadedModel(
        model, tokenizer, "feature-rm", torch.device("cpu"), torch.float32, backbone, head
    )


def close_pairs(count: int = 6) -> list[dict]:
    """Chosen: ten markers in 20 + i words; rejected: ten markers in 21 + i words. The chosen
    answer has the larger marker share, so an honest feature model is right on every pair; in
    a batch, the shorter chosen sequence gets a pad on the left, and a model that reads pads
    as words sees its share diluted below the rejected one's."""
    markers, plain = tiny.MARKERS[:10], tiny.PLAIN
    return [
        {
            "id": f"close-{i}",
            "question": "bake",
            "chosen": " ".join(markers + plain[: 10 + i]),
            "rejected": " ".join(markers + plain[: 11 + i]),
        }
        for i in range(count)
    ]


def test_it_catches_a_model_whose_scores_depend_on_padding():
    config = ScoreConfig(model="feature-rm", self_check=6, resamples=0)
    with pytest.raises(EvaluationError, match="change decision when scored one at a time") as error:
        score_records(close_pairs(), config, model=feature_model(padding_blind=True))
    assert "--allow-flips" in str(error.value)
    kept = score_records(
        close_pairs(),
        ScoreConfig(model="feature-rm", self_check=6, allow_flips=True, resamples=0),
        model=feature_model(padding_blind=True),
    )
    check = kept.self_check
    assert check is not None
    assert check["flips"] > 0
    assert check["passed"] is False
    assert check["max_abs_delta"] > 1e-3
    assert set(check["flipped_ids"]) <= {f"close-{i}" for i in range(6)}
    # Scored one at a time, nothing is padded and the model is right on every pair: the flips
    # are the pairs the batched run did not get right.
    missed = {pair.id for pair in kept.pairs if pair.outcome != "correct"}
    assert missed
    assert set(check["flipped_ids"]) == missed


@pytest.mark.parametrize(("mode", "prefix"), [("question", "off"), ("profile", "on")])
def test_it_passes_an_honest_model(mode, prefix):
    """The same weights called properly: left padding, and in profile mode the shared prompt
    run once, give the scores of each answer alone."""
    config = ScoreConfig(
        model="feature-rm", mode=mode, prefix_reuse=prefix, self_check=12, resamples=0
    )
    result = score_records(
        close_pairs() + tiny.records(12), config, model=feature_model(padding_blind=False)
    )
    check = result.self_check
    assert check is not None
    assert check["pairs"] == 12
    assert check["flips"] == 0
    assert check["passed"] is True
    assert check["max_abs_delta"] < 1e-4


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory) -> Path:
    tokenizer = tiny.make_tokenizer()
    folder = tmp_path_factory.mktemp("models") / "random-rm"
    return tiny.save(tiny.random_reward_model(tokenizer), tokenizer, folder)


def sha256sum_listing(folder: Path) -> str:
    """What `sha256sum` of every file, sorted by path, then sha256 of that listing, gives."""
    lines = ""
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        lines += f"{digest}  {path.relative_to(folder).as_posix()}\n"
    return hashlib.sha256(lines.encode()).hexdigest()


def test_it_writes_the_self_check_and_the_run_card_into_the_summary(saved_model, tmp_path, capsys):
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in tiny.records(10)), encoding="utf-8")
    out = tmp_path / "run"
    args = ["score", "--data", str(data), "--model", str(saved_model), "--out", str(out)]
    assert main([*args, "--self-check", "4", "--padding-side", "left", "--resamples", "0"]) == 0
    printed = capsys.readouterr().out
    assert "self-check: 4 pairs scored one at a time" in printed
    assert "no decision flips" in printed
    assert "run card: model files" in printed
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["self_check"]["pairs"] == 4
    assert summary["self_check"]["flips"] == 0
    card = summary["card"]
    tokenizer = tiny.make_tokenizer()
    assert card["model"] == str(saved_model)
    assert card["model_files"]["sha256"] == sha256sum_listing(saved_model)
    assert card["model_files"]["files"] == len([p for p in saved_model.iterdir() if p.is_file()])
    assert card["chat_template_sha256"] == hashlib.sha256(tiny.TEMPLATE.encode()).hexdigest()
    assert (card["bos_token_id"], card["eos_token_id"], card["pad_token_id"]) == (
        tokenizer.bos_token_id,
        tokenizer.eos_token_id,
        tokenizer.pad_token_id,
    )
    assert (card["padding_side"], card["padding_side_source"]) == ("left", "--padding-side")
    assert card["dtype"] == "float32"
    assert card["attention"] == "sdpa"
    assert (card["max_length"], card["max_length_source"]) == (
        1024,
        "the model's max_position_embeddings",
    )
    assert (card["mode"], card["top_k"]) == ("question", 10)
    assert card["libraries"]["torch"] == torch.__version__
    assert card["libraries"]["transformers"] == transformers.__version__
    assert card["devices"] == {"device": "cpu", "name": "cpu", "processes": 1}


def test_it_hashes_the_tokenizer_so_a_changed_vocabulary_shows(saved_model, tmp_path):
    """A tokenizer without the test's canary words (so a vocabulary of its own), padding with
    EOS, gets another tokenizer hash and shows its pad id; the same folder twice gets the same
    card."""
    other = package_tiny.make_tokenizer(pad_is_eos=True)
    twin = tiny.save(tiny.random_reward_model(other), other, tmp_path / "twin")
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in tiny.records(3)), encoding="utf-8")
    cards = []
    for index, folder in enumerate([saved_model, saved_model, twin]):
        out = tmp_path / f"run-{index}"
        assert main(["score", "--data", str(data), "--model", str(folder), "--out", str(out)]) == 0
        cards.append(json.loads((out / "summary.json").read_text(encoding="utf-8"))["card"])
    assert cards[0] == cards[1]
    assert cards[0]["tokenizer_sha256"] != cards[2]["tokenizer_sha256"]
    assert cards[2]["pad_token_id"] == cards[2]["eos_token_id"]


def test_it_refuses_a_negative_self_check(capsys, tmp_path):
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps(tiny.records(1)[0]) + "\n", encoding="utf-8")
    args = ["score", "--data", str(data), "--model", "builtin:length", "--out", str(tmp_path)]
    assert main([*args, "--self-check", "-1"]) == 2
    assert "--self-check takes a number of pairs" in capsys.readouterr().err
