"""Profile posts ranked against the question by a local dense retriever (mean pooling, as
Contriever is used), with a tiny BERT-style encoder built in the test."""

import json

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

from evaluation.cli import main
from evaluation.errors import EvaluationError
from evaluation.records import to_pair_record
from evaluation.retrieval import Retriever, rank_profiles
from tests.support import tiny

RECORDS = tiny.records(6, posts=5)


@pytest.fixture(scope="module")
def retriever_dir(tmp_path_factory):
    model = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    model.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    trainer = trainers.WordLevelTrainer(vocab_size=1000, special_tokens=specials)
    model.train_from_iterator(tiny.corpus(), trainer)
    cls, sep = model.token_to_id("[CLS]"), model.token_to_id("[SEP]")
    model.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=model, pad_token="[PAD]", unk_token="[UNK]", model_max_length=128
    )
    torch.manual_seed(3)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    folder = tmp_path_factory.mktemp("retriever") / "tiny-bert"
    BertModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def naive_order(folder, question: str, posts: list[str]) -> list[int]:
    """Each text encoded alone (no padding), mean of its hidden states, dot with the question's."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder).eval()
    with torch.no_grad():
        vectors = [
            model(**tokenizer(text, return_tensors="pt")).last_hidden_state[0].mean(dim=0)
            for text in [question, *posts]
        ]
    scores = [float(vector @ vectors[0]) for vector in vectors[1:]]
    return sorted(range(len(posts)), key=lambda i: -scores[i])


def test_it_ranks_posts_by_their_mean_pooled_similarity_to_the_question(retriever_dir):
    pairs = [to_pair_record(record) for record in RECORDS]
    ranked = rank_profiles(pairs, str(retriever_dir))
    for pair, result in zip(pairs, ranked, strict=True):
        texts = [post.text for post in pair.profile]
        order = naive_order(retriever_dir, pair.question, texts)
        assert [post.text for post in result.profile] == [texts[i] for i in order]
        assert sorted(result.profile, key=lambda p: p.id) == sorted(
            pair.profile, key=lambda p: p.id
        )
    assert any(r.profile != p.profile for r, p in zip(ranked, pairs, strict=True))


def test_a_pair_is_ranked_once(retriever_dir):
    pair = to_pair_record(RECORDS[0])
    retriever = Retriever(str(retriever_dir))
    first = retriever.rank(pair)
    again = retriever.rank(pair)
    assert first == again
    assert len(retriever.rankings) == 1


def test_a_run_records_its_retriever_and_profile_format(retriever_dir, reward_model_dir, tmp_path):
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in RECORDS), encoding="utf-8")
    out = tmp_path / "run"
    args = ["score", "--data", str(data), "--model", str(reward_model_dir), "--mode", "profile"]
    extra = ["--rank-profile", str(retriever_dir), "--profile-format", "benchmark"]
    assert main([*args, *extra, "--top-k", "2", "--out", str(out), "--no-progress"]) == 0
    card = json.loads((out / "summary.json").read_text(encoding="utf-8"))["card"]
    assert card["profile_format"] == "benchmark"
    assert card["rank_profile"]["model"] == str(retriever_dir)
    assert len(card["rank_profile"]["model_files_sha256"]) == 64
    assert card["rank_profile"]["pooling"].startswith("mean over the real tokens")


def test_a_retriever_that_is_not_a_model_folder_is_refused(tmp_path):
    with pytest.raises(EvaluationError, match="not a model folder"):
        Retriever(str(tmp_path))


def test_a_built_in_baseline_refuses_a_retriever(retriever_dir, tmp_path, capsys):
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in RECORDS), encoding="utf-8")
    args = ["score", "--data", str(data), "--model", "builtin:profile-overlap"]
    code = main([*args, "--rank-profile", str(retriever_dir), "--out", str(tmp_path / "r")])
    assert code == 2
    assert "--rank-profile ranks posts with a retriever model" in capsys.readouterr().err
