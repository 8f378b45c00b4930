"""The examples in the package's docstrings and docs/evaluation.md run and give what they show."""

import doctest
import importlib
import shlex
from pathlib import Path

import pytest

from evaluation.cli import build_parser


@pytest.mark.parametrize(
    "name",
    ["batching", "inputs", "judge", "metrics", "significance", "baselines", "latex"],
)
def test_it_keeps_docstring_examples_true(name):
    module = importlib.import_module(f"evaluation.{name}")
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0


def test_it_documents_commands_that_parse():
    """Every ``python -m evaluation`` command in docs/evaluation.md is one the parser accepts."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "evaluation.md").read_text()
    commands = [
        line.split("-m evaluation", 1)[1]
        for line in text.splitlines()
        if any(f"-m evaluation {name}" in line for name in ("score", "correlate", "compare"))
    ]
    assert len(commands) >= 11
    for command in commands:
        args = build_parser().parse_args(shlex.split(command))
        assert args.command in ("score", "correlate", "compare")
