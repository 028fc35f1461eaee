"""The runnable examples in the learners' docstrings (doctest): an example that no longer runs, or
whose printed numbers changed, fails here."""

import doctest
import importlib
import pkgutil

import pytest

import okl.learners

MODULES = sorted(f"okl.learners.{m.name}" for m in pkgutil.iter_modules(okl.learners.__path__))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
