"""river, okl's optional bridge to online learning in Python (``pip install 'okl[river]'``): importing it with a
one-line error, river objects by their dotted path, and river's dict inputs as vectors.

river's models take a sample as a dict ``{feature: value}``; okl's learners take a vector. A dict becomes a
vector in a fixed feature order, by default its keys sorted (so that the order a dict lists them in does not
matter); a feature absent from a sample is 0 (sparse samples), one outside the order is ignored.

>>> order = feature_order({"b": 2.0, "a": 1.0})
>>> order
('a', 'b')
>>> vector({"b": 5, "c": 7}, order)
array([0., 5.])
"""

from __future__ import annotations

import importlib
from collections.abc import Hashable, Mapping, Sequence
from itertools import repeat
from types import ModuleType

import numpy as np

from okl.errors import ConfigError

INSTALL = "pip install 'okl[river]'"


def require() -> ModuleType:
    """The ``river`` package, or a ConfigError saying how to install it."""
    try:
        import river
        import river.base  # noqa: F401 (the estimator base classes: river.base)
    except ImportError:
        raise ConfigError(f"river is not installed: {INSTALL} (or pip install 'river>=0.26,<0.27')") from None
    return river


OKL = "okl.river."  # okl's own river estimators, the one path outside river's that resolve() takes


EXAMPLES = {"model": "neighbors.KNNRegressor", "stream": "datasets.TrumpApproval"}  # what each key takes


def full_name(path: str) -> str:
    """``path`` as Python names it: ``river.neighbors.KNNRegressor``, or okl's own ``okl.river.Regressor``."""
    return str(path) if str(path).startswith(OKL) else f"river.{path}"


def resolve(path: str, what: str) -> object:
    """The object ``river.<path>`` (``neighbors.KNNRegressor``, ``datasets.TrumpApproval``), or one of okl's
    river estimators (``okl.river.Regressor``: okl's learners in river's pipelines); ``what`` names the config
    key in errors."""
    require()
    if str(path).startswith(OKL):
        found = importlib.import_module(OKL.rstrip("."))  # imported here: okl.river sits above the learners
        name = str(path)[len(OKL) :]
        if name not in found.__all__:
            raise ConfigError(f"{what} {path!r}: okl.river has {', '.join(found.__all__)}")
        return getattr(found, name)
    module, _, name = str(path).rpartition(".")
    if not module or not name:
        raise ConfigError(
            f"{what} {path!r} is not a dotted path under river.: e.g. {EXAMPLES.get(what, 'datasets.Phishing')}"
        )
    try:
        found = importlib.import_module(f"river.{module}")
    except ModuleNotFoundError:
        raise ConfigError(f"{what} {path!r}: river has no module {module!r} (river.{module})") from None
    if not hasattr(found, name):
        public = sorted(n for n in getattr(found, "__all__", dir(found)) if not n.startswith("_"))
        raise ConfigError(f"{what} {path!r}: river.{module} has no {name!r}; it has: {', '.join(public)}")
    return getattr(found, name)


def feature_order(x: Mapping) -> tuple[Hashable, ...]:
    """The keys of ``x`` sorted (by type name, then value, so that mixed key types sort too; keys whose values do not
    compare, tuples of mixed types, by their repr)."""
    try:
        return tuple(sorted(x, key=lambda k: (type(k).__name__, k)))
    except TypeError:  # (1, "a") against (1, 2): a TypeError at the first sample
        return tuple(sorted(x, key=lambda k: (type(k).__name__, repr(k))))


def vector(x: Mapping, order: Sequence[Hashable]) -> np.ndarray:
    """``x`` as a float64 vector in ``order``: absent features are 0, features outside ``order`` ignored; a value
    None (river's missing value) is an error naming its feature (numpy made it NaN, which the learner then refused as
    "nan at index 0")."""
    values = list(map(x.get, order, repeat(0.0)))
    if (missing := next((i for i, v in enumerate(values) if v is None), None)) is not None:  # "in": == on an array
        bad = order[missing]
        raise ConfigError(
            f"feature {bad!r} is None (a missing value): impute it first (e.g. river's preprocessing.StatImputer) or "
            "drop the key"
        )
    try:
        return np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        bad = next(k for k in order if not _is_number(x.get(k, 0.0)))
        raise ConfigError(
            f"feature {bad!r} is {x[bad]!r}, not a number: encode it first (e.g. river's preprocessing.OneHotEncoder)"
        ) from None


def _is_number(value: object) -> bool:
    """One number (an array of one, which float() reads, is not a feature's value)."""
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return np.ndim(value) == 0
