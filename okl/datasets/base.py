"""The stream protocol and the dataset registry.

A dataset is a finite stream of rounds (x_t, y_t) read in chunks, so that memory stays bounded
whatever its length. It declares its task, which fixes the evaluation loss (:mod:`okl.losses`):
``regression`` (square loss), ``binary`` (labels ±1, 0-1 error) or ``multiclass`` (labels are
class indices 0..C−1, 0-1 error of the predicted index).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
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

    def __init__(self, **params: Any) -> None:
        self.params = build_params("dataset", self.name or type(self).__name__, self.Params, params)

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

    @property
    def provenance(self) -> list[dict]:
        """The files the stream comes from, with their content sha256 (empty for generated streams)."""
        return []

    @abstractmethod
    def chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Consecutive chunks (X, y) of the stream: X float64 C-ordered (m×d), y float64 (m)."""
