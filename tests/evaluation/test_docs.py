"""The examples in the package's docstrings run and give what they show."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["batching", "inputs", "judge", "metrics"])
def test_it_keeps_docstring_examples_true(name):
    module = importlib.import_module(f"evaluation.{name}")
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0
