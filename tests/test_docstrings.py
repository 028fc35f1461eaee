"""The runnable examples in the learners' docstrings (doctest): an example that no longer runs, or
whose printed numbers changed, fails here."""

import doctest
import importlib
import pkgutil

import pytest

import okl.learners

MODULES = sorted(
    {
        *(m.name for m in pkgutil.walk_packages(okl.learners.__path__, prefix="okl.learners.")),
        "okl.jit",
        "okl.params",
        "okl.riverlib",
        "okl.warmup",
        "okl.river.estimators",
    }
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_every_learner_has_an_example():
    from okl.learners import LEARNERS

    missing = [
        key for key in LEARNERS.names() if ">>>" not in importlib.import_module(LEARNERS.get(key).__module__).__doc__
    ]
    assert not missing
