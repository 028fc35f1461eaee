"""BATCH: the best batch solution in the final KORS space, a best-in-hindsight comparator
(pros_n_kons_calandriello2017 §5, the BATCH rows of Tables 1-2).

Not an online learner: it sees the whole stream first (``beforehand = "stream"``), runs KORS (γ, ε,
β, seed: the same coins as ``pros_n_kons`` with the same seed, hence the same final dictionary),
embeds every input with the final Nyström map φ̃ and fits

    w = argmin_w Σ_t ℓ(φ̃(x_t)ᵀw, y_t) + α ||w||²,

then "predicts" φ̃(x_t)ᵀw at each round; its average loss is the tables' BATCH figure.

Choices: square loss by the normal equations; the smooth classification losses (squared_hinge,
logistic) by L-BFGS to a gradient norm of 1e-10. The hinge loss is not offered (non-smooth; the
paper does not say how its BATCH was solved).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from okl.dictionary.kors import KORS
from okl.dictionary.nystrom import NystromMap
from okl.kernels import Kernel
from okl.learners.base import Learner, register
from okl.validation import one_of, positive

LOSSES = {
    "square": (lambda z, y: (z - y) ** 2, lambda z, y: 2.0 * (z - y)),
    "squared_hinge": (
        lambda z, y: np.maximum(0.0, 1.0 - y * z) ** 2,
        lambda z, y: -2.0 * y * np.maximum(0.0, 1.0 - y * z),
    ),
    "logistic": (lambda z, y: np.logaddexp(0.0, -y * z), lambda z, y: -y / (1.0 + np.exp(y * z))),
}


@dataclass(frozen=True)
class BatchParams:
    """sigma: bandwidth; alpha: regularisation α; gamma, eps, beta: KORS's γ, ε, β; loss; seed."""

    sigma: float = 8.0
    alpha: float = 1.0
    gamma: float = 1.0
    eps: float = 0.5
    beta: float = 1.0
    loss: str = "square"
    seed: int = 0

    def __post_init__(self) -> None:
        for key in ("sigma", "alpha", "gamma", "eps", "beta"):
            positive(key, getattr(self, key))
        one_of("loss", self.loss, LOSSES)


@register("batch")
class Batch(Learner):
    """Regularised empirical risk minimiser in the final KORS embedding (a comparator)."""

    Params = BatchParams
    beforehand = "stream"

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        kernel = Kernel("gaussian", p.sigma)
        self.kors = KORS(d, kernel, p.gamma, p.eps, p.beta, p.seed)
        self.map = NystromMap(d, kernel)
        self._chunks: list[tuple[np.ndarray, np.ndarray]] = []
        self.w = np.zeros(0)

    def prepare(self, X: np.ndarray, y: np.ndarray | None) -> None:
        self.kors.run(X)
        self._chunks.append((X, y))

    def prepared(self) -> None:
        self.map.extend(self.kors.X)
        m, alpha = self.map.dim, self.params.alpha
        G, b = np.zeros((m, m)), np.zeros(m)
        for X, y in self._chunks:
            F = self.map.transform(X)
            G += F.T @ F
            b += F.T @ y
        if self.params.loss == "square":
            self.w = np.linalg.solve(G + alpha * np.eye(m), b)
        else:
            F = np.concatenate([self.map.transform(X) for X, _ in self._chunks])
            y = np.concatenate([y for _, y in self._chunks])
            value, grad = LOSSES[self.params.loss]

            def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
                z = F @ w
                return float(value(z, y).sum() + alpha * w @ w), F.T @ grad(z, y) + 2.0 * alpha * w

            res = minimize(
                objective, np.zeros(m), jac=True, method="L-BFGS-B", options={"gtol": 1e-10, "maxiter": 10_000}
            )
            self.w = res.x
        self._chunks = []

    def predict_one(self, x: np.ndarray) -> float:
        return float(self.map.transform(x)[0] @ self.w)

    def learn_one(self, x: np.ndarray, y: float) -> None:
        """The solution is fixed."""

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.map.transform(X) @ self.w

    @property
    def model_size(self) -> int:
        return self.map.dim
