"""Tiny models saved once per test session, loaded by the tests through ``from_pretrained``."""

from pathlib import Path

import pytest
import torch

from tests.support import tiny


@pytest.fixture(scope="session", autouse=True)
def one_cpu_thread():
    """Tiny models gain nothing from threads, and on a busy machine OpenMP threads waiting
    for each other make every matmul many times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def models_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tiny-models")


@pytest.fixture(scope="session")
def reward_model_dir(models_dir) -> Path:
    """A randomly initialised Llama classifier; its tokenizer pads on the right."""
    tokenizer = tiny.make_tokenizer()
    return tiny.save(tiny.random_reward_model(tokenizer), tokenizer, models_dir / "random-rm")


@pytest.fixture(scope="session")
def left_padded_model_dir(models_dir) -> Path:
    """The same weights as ``reward_model_dir``, with a tokenizer that pads on the left."""
    tokenizer = tiny.make_tokenizer(padding_side="left")
    return tiny.save(tiny.random_reward_model(tokenizer), tokenizer, models_dir / "random-rm-left")


@pytest.fixture(scope="session")
def feature_model_dir(models_dir) -> Path:
    """The feature reward model, with pad == EOS and turns that end with EOS."""
    tokenizer = tiny.make_tokenizer(pad_is_eos=True, template=tiny.EOS_TEMPLATE)
    return tiny.save(tiny.feature_reward_model(tokenizer), tokenizer, models_dir / "feature-rm")


@pytest.fixture(scope="session")
def no_template_model_dir(models_dir) -> Path:
    tokenizer = tiny.make_tokenizer(template=None)
    return tiny.save(tiny.random_reward_model(tokenizer), tokenizer, models_dir / "no-template-rm")


@pytest.fixture(scope="session")
def judge_a_dir(models_dir) -> Path:
    """A causal LM that always answers "A"."""
    tokenizer = tiny.make_tokenizer()
    return tiny.save(tiny.scripted_judge(tokenizer, "A"), tokenizer, models_dir / "judge-a")


@pytest.fixture(scope="session")
def judge_babble_dir(models_dir) -> Path:
    """A causal LM that never names an answer."""
    tokenizer = tiny.make_tokenizer()
    return tiny.save(tiny.scripted_judge(tokenizer, "bake"), tokenizer, models_dir / "judge-babble")


@pytest.fixture(scope="session")
def causal_judge_dir(models_dir) -> Path:
    """``make-tiny-model --causal``: replies in the benchmark's format, with a ``</think>``
    block, always naming B."""
    return tiny.write_causal(models_dir / "causal-judge")


@pytest.fixture(scope="session")
def causal_judge_plain_dir(models_dir) -> Path:
    """The same reply without the ``<think>`` block: ``**Reasoning:** ... **Result:** B``."""
    return tiny.write_causal(models_dir / "causal-judge-plain", think=False)
