"""A judge behind an OpenAI-compatible endpoint: ``transformers serve`` (transformers' own
server) runs the tiny causal LM built in the test, on CPU, and the scorer asks it over HTTP.

The verdicts must be those of the same model loaded in process: same prompts, greedy.
"""

import json

import pytest
import torch

from evaluation.cli import main
from evaluation.config import ScoreConfig
from evaluation.endpoint import Endpoint
from evaluation.errors import EvaluationError
from evaluation.judge_templates import load_judge_template
from evaluation.scoring import score_records
from tests.support import tiny
from tests.support.serving import free_port, serve

RECORDS = tiny.records(6)
SYSTEM = "Judge the answers. Reply:\n**Reasoning:** <why>\n**Result:** <A or B>"
USER = "{question}\n\nResponse A:\n{Response_A}\n\nResponse B:\n{Response_B}"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``transformers serve`` on a free port, serving the model folder each request names;
    stopped after the module."""
    with serve(None, tmp_path_factory.mktemp("serve") / "serve.log") as url:
        yield url


@pytest.fixture(scope="module")
def random_judge_dir(models_dir):
    """A causal LM with random weights: its replies depend on every token of the prompt."""
    tokenizer = tiny.make_tokenizer()
    torch.manual_seed(1)
    model = tiny.LlamaForCausalLM(tiny.llama_config(tokenizer))
    return tiny.save(model.eval(), tokenizer, models_dir / "random-causal")


@pytest.fixture
def template(tmp_path):
    (tmp_path / "system.txt").write_text(SYSTEM, encoding="utf-8")
    (tmp_path / "user.txt").write_text(USER, encoding="utf-8")
    return load_judge_template([tmp_path])


def test_an_endpoint_gives_the_verdicts_of_the_model_in_process(
    served, causal_judge_dir, template, monkeypatch
):
    monkeypatch.setenv("PRB_TEST_JUDGE_KEY", "not-a-real-key-4711")
    options = {"judge": True, "judge_template": template, "paper_settings": True, "seed": 42}
    local = score_records(RECORDS, ScoreConfig(model=str(causal_judge_dir), **options))
    endpoint = Endpoint(
        url=served, model=str(causal_judge_dir), api_key_env="PRB_TEST_JUDGE_KEY", concurrency=3
    )
    remote = score_records(RECORDS, ScoreConfig(model="served", endpoint=endpoint, **options))
    assert [pair.verdicts for pair in remote.pairs] == [pair.verdicts for pair in local.pairs]
    assert {verdict.named for pair in remote.pairs for verdict in pair.verdicts} == {"B"}
    assert remote.summary == local.summary
    assert remote.paper_summary == local.paper_summary
    card = remote.card["endpoint"]
    assert card["served_model"] == str(causal_judge_dir)  # the name the server reported
    assert card["api_key_env"] == "PRB_TEST_JUDGE_KEY"
    assert card["api_key_set"] is True
    written = json.dumps(remote.summary_dict())
    assert "not-a-real-key-4711" not in written


def test_the_endpoint_is_sent_the_prompts_of_the_run_in_process(served, random_judge_dir):
    """A random-weight model's greedy replies depend on every prompt token: the same replies
    through the endpoint mean the server was sent the very prompts scored in process."""
    config = ScoreConfig(model=str(random_judge_dir), judge=True, max_new_tokens=8)
    local = score_records(RECORDS, config)
    endpoint = Endpoint(url=served, model=str(random_judge_dir))
    remote = score_records(RECORDS, ScoreConfig(**{**vars(config), "endpoint": endpoint}))
    replies = [verdict.reply for pair in local.pairs for verdict in pair.verdicts]
    assert len(set(replies)) == len(replies)  # each prompt gets a reply of its own
    assert [verdict.reply for pair in remote.pairs for verdict in pair.verdicts] == replies


def test_score_asks_an_endpoint_from_the_command_line(served, causal_judge_dir, tmp_path, capsys):
    data = tmp_path / "split.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in RECORDS), encoding="utf-8")
    out = tmp_path / "run"
    code = main(
        [
            "score",
            "--data",
            str(data),
            "--model",
            "tiny-judge",
            "--judge",
            "--judge-endpoint",
            served,
            "--judge-model",
            str(causal_judge_dir),
            "--max-new-tokens",
            "12",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["card"]["kind"] == "judge behind an endpoint"
    assert summary["settings"]["endpoint"]["url"] == served
    assert summary["accuracy"]["overall"]["n"] == len(RECORDS)
    assert f"at {served}" in capsys.readouterr().out


def test_an_endpoint_out_of_reach_fails_in_one_line_after_its_retries():
    endpoint = Endpoint(url=f"http://127.0.0.1:{free_port()}/v1", model="m", retries=1, timeout=2)
    with pytest.raises(EvaluationError) as raised:
        endpoint.replies([[{"role": "user", "content": "hi"}]], 4)
    assert str(raised.value).startswith(f"{endpoint.completions_url}: no answer (")
    assert str(raised.value).endswith("(after 2 attempts)")


def test_an_endpoint_url_with_credentials_is_refused():
    with pytest.raises(EvaluationError, match="must not hold credentials"):
        Endpoint(url="http://user:secret@127.0.0.1:8000/v1")
    with pytest.raises(EvaluationError, match="not an http"):
        Endpoint(url="file:///etc/passwd")


def test_a_self_check_is_refused_for_a_judge_behind_an_endpoint():
    endpoint = Endpoint(url="http://127.0.0.1:9/v1", model="m")
    config = ScoreConfig(model="m", judge=True, endpoint=endpoint, self_check=2)
    with pytest.raises(EvaluationError, match="leave out --self-check"):
        score_records(RECORDS, config)
