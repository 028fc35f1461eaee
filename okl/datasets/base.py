"""The stream protocol and the dataset registry.

A dataset is a finite stream of rounds (x_t, y_t) read in chunks, so that memory stays bounded
whatever its length. It declares its task, which fixes the evaluation loss (:mod:`okl.losses`):
``regression`` (square loss), ``binary`` (labels ±1, 0-1 error) or ``multiclass`` (labels are
class indices 0..C−1, 0-1 error of the predicted index).
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np

from okl.registry import Registry, build_params

DATASETS = Registry("dataset")
register = DATASETS.register

TASKS = ("regression", "binary", "multiclass")


class Dataset(ABC):
    """Base class. Subclasses define ``Params`` and register with ``@register(key)``."""

    name: ClassVar[str] = ""
    Params: ClassVar[type]
    adaptive: ClassVar[bool] = False  # rounds that depend on the learner (:class:`Environment`)

    def __init__(self, **params: Any) -> None:
        self.params = build_params("dataset", self.name or type(self).__name__, self.Params, params)

    @property
    def label(self) -> str:
        """How reports name the stream: its key, or what tells apart streams of one key (river's datasets)."""
        return self.name

    @property
    @abstractmethod
    def task(self) -> str:
        """``regression``, ``binary`` or ``multiclass``."""

    @property
    @abstractmethod
    def d(self) -> int:
        """Input dimension."""

    @property
    @abstractmethod
    def n(self) -> int:
        """Number of rounds in the stream."""

    def open(self) -> None:  # noqa: B027 (optional hook)
        """Obtain and check what the stream reads (files, a download), once; the runner calls it before it
        writes anything, so that planning (the run id, a sweep's expansion) never reads data. Streams whose
        parameters are all they need (generated ones) have nothing to open."""

    @property
    def provenance(self) -> list[dict]:
        """The files the stream comes from, with their content sha256 (empty for generated streams)."""
        return []

    @property
    def content_sha256(self) -> str | None:
        """One sha256 of the content of the files the stream reads (their parts and content sha256, in
        order), which a run records to resume on that content only; None for generated streams."""
        files = [[f.get("part"), f["content_sha256"]] for f in self.provenance]
        return hashlib.sha256(json.dumps(files).encode()).hexdigest() if files else None

    @abstractmethod
    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Consecutive chunks (X, y) of the stream: X float64 C-ordered (m×d), y float64 (m)."""

    def test_set(self) -> tuple[np.ndarray, np.ndarray] | None:
        """A held-out (X, y) the runner scores the learner on at checkpoints, or None."""
        return None

    def head(self, n: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The chunks of the first n rounds (the last one cut short)."""
        seen = 0
        for X, y in self.chunks():
            take = min(len(y), n - seen)
            if take <= 0:
                return
            yield X[:take], y[:take]
            seen += take


class Generated(Dataset):
    """A stream generated from its parameters: ``d`` and ``length`` are Params fields, and the task is
    the ``task`` field when there is one, else regression."""

    @property
    def task(self) -> str:
        return getattr(self.params, "task", "regression")

    @property
    def d(self) -> int:
        return self.params.d

    @property
    def n(self) -> int:
        return self.params.length


class InMemory(Dataset):
    """A stream held in memory as two arrays (a replayed run, a river dataset): the constructor calls
    :meth:`hold` with the rounds and their task."""

    def hold(self, X: np.ndarray, y: np.ndarray, task: str) -> None:
        self.X, self.y, self._task = X, y, task

    @property
    def task(self) -> str:
        return self._task

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def n(self) -> int:
        return len(self.y)

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        yield self.X, self.y


class Environment(Dataset):
    """An adaptive stream: before fixing round t it may query the learner's predictions at candidate
    points (``query(X) -> ŷ``, a pure call: :meth:`okl.learners.base.Learner.predict_many`), then
    chooses (x_t, y_t). Static datasets are the special case that never queries.

    The runner plays the rounds one at a time, in the order :meth:`play` yields them, and records
    the inputs with the rounds (columns ``x_0 .. x_{d-1}``), so that any learner can be replayed on
    the sequence later (``dataset=replay``). :meth:`chunks` gives the rounds chosen so far.
    """

    adaptive: ClassVar[bool] = True

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._X: list[np.ndarray] = []
        self._y: list[float] = []

    @abstractmethod
    def choose(self, query: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, float]:
        """The next round (x_t, y_t), given the rounds chosen so far (:attr:`sequence`)."""

    def play(self, query: Callable[[np.ndarray], np.ndarray], n: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """n rounds, each as a block (1×d inputs, 1 label), chosen when the learner has learned the last."""
        for _ in range(n):
            x, y = self.choose(query)
            self._X.append(np.asarray(x, dtype=np.float64))
            self._y.append(float(y))
            yield self._X[-1][None, :], np.array([self._y[-1]])

    @property
    def sequence(self) -> tuple[np.ndarray, np.ndarray]:
        """The rounds chosen so far: (X, y)."""
        X = np.array(self._X).reshape(len(self._X), self.d)
        return X, np.array(self._y)

    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        yield self.sequence
