"""Kernel expansions with one or several class functions, shared by FSGD/POLK
(:mod:`okl.learners.budgeted.fsgd`, :mod:`okl.learners.budgeted.polk`) and BSGD (:mod:`okl.learners.budgeted.bsgd`).

f_c = Σ_m W[m, c] κ(X_m, ·) on points X (M×d) with a Gaussian kernel. With a multi-class loss there is
one column per class seen so far (labels 0..C−1; a new label adds zero columns) and the prediction is
argmax_c f_c(x) (the first maximiser; class 0 before any label); otherwise one column and ŷ = f(x).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from okl.errors import ConfigError
from okl.kernels import Kernel
from okl.learners.base import BlockLearner


class KernelExpansion(BlockLearner):
    """Base class: ``self.X``, ``self.W`` and the predictions; subclasses learn them."""

    tasks = ("regression", "binary", "multiclass")
    losses_by_task: ClassVar[dict[str, str]] = {  # for the error when the loss does not fit the task
        "multiclass": "multi_hinge or multi_logistic",
        "regression": "square",
        "binary": "square, hinge or logistic",
    }

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        self.kernel = Kernel("gaussian", self.params.sigma)
        self.multiclass = self.labels == "class"  # a multi-class loss (Learner.labels, from the loss)
        self.X = np.zeros((0, d))
        self.W = np.zeros((0, 0 if self.multiclass else 1))

    def check_task(self, task: str) -> None:
        if self.multiclass != (task == "multiclass"):
            fits = self.losses_by_task[task]
            raise ConfigError(
                f"{self.name}: loss={self.params.loss} does not fit {task} datasets; set learner.loss={fits}"
            )
        super().check_task(task)

    def add_classes(self, y: np.ndarray) -> None:
        """Zero columns for labels beyond the classes seen (multi-class losses)."""
        if self.multiclass and len(y) and y.max() >= self.W.shape[1]:
            self.W = np.hstack([self.W, np.zeros((len(self.W), int(y.max()) + 1 - self.W.shape[1]))])

    def activations(self, X: np.ndarray) -> np.ndarray:
        """f_c(x) for every row and class: B×C."""
        return self.support_kernel(X) @ self.W if len(self.X) else np.zeros((len(X), self.W.shape[1]))

    def support_kernel(self, X: np.ndarray) -> np.ndarray:
        """κ(x, X_m) for every row of X and support vector (B×M): a learner that keeps more of its points than X
        computes it from what it keeps (BSGD)."""
        return self.kernel(X, self.X)

    def predictions(self, A: np.ndarray) -> np.ndarray:
        """ŷ from activations: argmax_c (multi-class) or f(x)."""
        if not self.multiclass:
            return A[:, 0]
        return np.argmax(A, axis=1).astype(np.float64) if A.shape[1] else np.zeros(len(A))

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        return self.predictions(self.activations(X))

    def predict_one(self, x: np.ndarray) -> float:
        return float(self.predict_many(x[None, :])[0])

    @property
    def model_size(self) -> int:
        return len(self.X)
