"""A river dataset as an okl stream, so that okl's learners and river's models play the same rounds::

    okl-run dataset=river dataset.stream=datasets.TrumpApproval learner=pkawv_taylor

``stream`` is a dotted path under ``river.`` (``datasets.Phishing``, ``datasets.synth.Friedman``), ``params``
its keyword arguments and ``length`` the rounds to take (default: the dataset's ``n_samples``; required for
river's endless generators). The samples are read in file order, without preprocessing; a sample's dict
becomes x_t in the order of the first sample's keys, sorted (:func:`okl.riverlib.vector`, the order
:class:`okl.river.Regressor` uses too). Regression targets are read as floats; binary labels ``True``/``False``
(or 1/0) become okl's +1/−1; multi-class labels (``datasets.ImageSegments``' names) become 0..C−1 in the
order they first come (as :class:`okl.river.MultiClassifier` numbers them, so that both give the same
predictions), so that okl's multi-class learners (fsgd, polk, bsgd) play them. river's multi-output
datasets are not offered.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from okl import riverlib
from okl.datasets.base import InMemory, register
from okl.errors import ConfigError, DataError
from okl.validation import integer_at_least, seed

TASKS = {  # river.datasets.base's task names
    "Regression": "regression",
    "Binary classification": "binary",
    "Multi-class classification": "multiclass",
}


@dataclass(frozen=True)
class RiverStreamParams:
    """stream: a river dataset by its dotted path under ``river.``; params: its keyword arguments (None: none); length:
    rounds to take (None: all of them); seed: the stream's seed, where it takes one (river's generators, such as
    ``datasets.synth.Friedman``) and params does not set it, so that the same config and seed give the same
    rounds (river's default, None, draws a new stream each time)."""

    stream: str = "datasets.TrumpApproval"
    params: dict[str, Any] | None = None
    length: int | None = None
    seed: int = field(default=0, metadata={"added": True})  # in a run's identity only when set (okl.registry)

    def __post_init__(self) -> None:
        if self.length is not None:
            integer_at_least("length", self.length, 1)
        seed("seed", self.seed)
        if self.params is not None and not isinstance(self.params, dict):
            raise ConfigError(f"params must be a mapping of {self.stream}'s arguments, e.g. {{seed: 0}}")


@register("river")
class RiverStream(InMemory):
    """The rounds of ``river.<stream>(**params)``, held in memory."""

    Params = RiverStreamParams

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        stream = riverlib.resolve(p.stream, "stream")
        arguments = dict(p.params or {})
        if "seed" in inspect.signature(stream).parameters:
            arguments.setdefault("seed", p.seed)
        try:
            source = stream(**arguments)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"dataset.params: river.{p.stream} rejects {p.params}: {exc}") from None
        task = TASKS.get(getattr(source, "task", None))
        if task is None:
            raise ConfigError(
                f"dataset.stream {p.stream!r} is a {getattr(source, 'task', 'non-dataset')!r} task; okl reads river's "
                f"regression, binary and multi-class classification datasets"
            )
        length = p.length or getattr(source, "n_samples", None)
        if length is None:
            raise ConfigError(f"dataset.stream {p.stream!r} has no end: set dataset.length")
        try:
            samples = list(islice(source, length))
        except Exception as exc:  # noqa: BLE001 (a download that failed, a missing file: say which)
            raise DataError(f"cannot read river.{p.stream}: {type(exc).__name__}: {exc}") from None
        if not samples:
            raise DataError(f"river.{p.stream} gave no samples")
        self.order = riverlib.feature_order(samples[0][0])
        X = np.array([riverlib.vector(x, self.order) for x, _ in samples]).reshape(len(samples), -1)
        self.classes = tuple(dict.fromkeys(y for _, y in samples)) if task == "multiclass" else ()
        self.hold(X, np.array([self._label(y, task) for _, y in samples], dtype=np.float64), task)

    @property
    def label(self) -> str:
        """The stream's name (``TrumpApproval``), which tells runs of different streams apart in reports."""
        return self.params.stream.rsplit(".", 1)[-1]

    def _label(self, y: object, task: str) -> float:
        if task == "regression":
            return float(y)  # type: ignore[arg-type]
        if task == "multiclass":
            return float(self.classes.index(y))
        if y in (True, False):
            return 1.0 if y else -1.0
        raise DataError(f"river.{self.params.stream} has the label {y!r}; okl reads binary labels True/False or 1/0")
