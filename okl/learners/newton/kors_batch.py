"""BATCH: the best batch solution in the final KORS space, a best-in-hindsight comparator
(pros_n_kons_calandriello2017 §5, the BATCH rows of Tables 1-2).

Not an online learner: it sees the whole stream first (``beforehand = "stream"``), runs KORS (γ, ε,
β, seed: the same coins as ``pros_n_kons`` with the same seed, hence the same final dictionary),
embeds every input with the final Nyström map φ̃ and fits

    w = argmin_w Σ_t ℓ(φ̃(x_t)ᵀw, y_t) + α ||w||²,

then "predicts" φ̃(x_t)ᵀw at each round; its average loss is the tables' BATCH figure.

Choices: square loss by the normal equations; the smooth classification losses (squared_hinge,
logistic) by Newton's method with backtracking (the squared hinge with its generalised Hessian
2 Σ_{y_t z_t < 1} φ̃_t φ̃_tᵀ + 2αI, as in Chapelle's primal SVM), until a step changes no weight by more
than 1e-12 of the largest (each step one O(n j²) Hessian). A run of the tables' squared-hinge BATCH
took 122 s on cod-rna and 228 s on ijcnn1 with L-BFGS to a gradient of 1e-10, 6.5 s and 22 s with
Newton, whose solutions the tests check by their vanishing gradient. The hinge loss is not offered
(non-smooth; the paper does not say how its BATCH was solved).

``truncate`` (default 0: off) embeds with §2's Σ⁻¹Uᵀk_I(x) from the eigendecomposition K_I = UΣ²Uᵀ of the final
dictionary's kernel matrix instead, keeping only the eigen-directions whose eigenvalue exceeds ``truncate`` times
the largest (a numerical rank, as a pseudo-inverse's tolerance; its dimension is the run's model size). With every
direction kept the two maps differ by a rotation and give the same solution; at σ = 4 on [0, 1] inputs K_I's
condition number is about 2·10¹¹, and the directions below 10⁻⁸ of the largest eigenvalue (about half of them)
move Table 2's BATCH error by about 1% of itself (3.575 to 3.604% on cod-rna, 5.538 to 5.604% on ijcnn1:
pros_n_kons_table2's deviation ``batch_rank``).

Example: It sees the whole stream first (``beforehand``), so it is a comparator, not a learner:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> batch = LEARNERS.get("kors_batch")(2, sigma=0.5, alpha=1.0, gamma=0.5, seed=0)
>>> batch.beforehand
'stream'
>>> batch.prepare(X, y); batch.prepared()
>>> online = LEARNERS.get("pros_n_kons")(2, sigma=0.5, alpha=1.0, gamma=0.5, seed=0)
>>> mse(batch.predict_learn_block(X, y)) < mse(online.predict_learn_block(X, y))
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from okl.dictionary.kors import KORS
from okl.dictionary.nystrom import NystromMap
from okl.errors import ConfigError
from okl.kernels import Kernel
from okl.learners.base import KORSLearner, Learner, register
from okl.losses import SMOOTH, smooth_derivatives, training_value
from okl.params import ADDED, GaussianParams, KORSParams
from okl.validation import non_negative, one_of, positive

LOSSES = ("square", *SMOOTH)  # the BATCH losses: the normal equations, or Newton
ROWS = 8192  # rows per chunk of the Hessian's product


@dataclass(frozen=True)
class BatchParams(GaussianParams, KORSParams):
    """sigma: bandwidth; alpha: regularisation α; gamma, eps, beta, kors: KORS's γ, ε, β and weights; loss;
    seed; truncate: the eigen-directions of K_I kept, those above this fraction of its largest eigenvalue (0: the
    Cholesky map, every direction; module docstring)."""

    alpha: float = 1.0
    gamma: float = 1.0
    loss: str = "square"
    truncate: float = field(default=0.0, metadata=ADDED)

    def __post_init__(self) -> None:
        super().__post_init__()
        for key in ("alpha", "gamma"):
            positive(key, getattr(self, key))
        one_of("loss", self.loss, LOSSES)
        non_negative("truncate", self.truncate)
        if self.truncate >= 1:
            raise ConfigError(f"truncate={self.truncate} drops every direction: set 0 <= truncate < 1")


@register("kors_batch")
class KORSBatch(KORSLearner, Learner):
    """Regularised empirical risk minimiser in the final KORS embedding (a comparator)."""

    Params = BatchParams
    beforehand = "stream"

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        kernel = Kernel("gaussian", p.sigma)
        self.kors = KORS(d, kernel, p.gamma, p.eps, p.beta, p.seed, weights=p.kors)
        self.map = NystromMap(d, kernel)
        self._chunks: list[tuple[np.ndarray, np.ndarray]] = []
        self.w = np.zeros(0)
        self.top: np.ndarray | None = None  # with truncate: U_kept Σ_kept⁻¹, so that φ̃(x) = k_I(x)ᵀ top

    def prepare(self, X: np.ndarray, y: np.ndarray | None) -> None:
        self.kors.run(X)
        self._chunks.append((X, y))

    def prepared(self) -> None:
        self.map.extend(self.kors.X)
        if self.params.truncate:
            values, vectors = np.linalg.eigh(self.map.kernel(self.kors.X, self.kors.X))
            kept = values > self.params.truncate * values.max(initial=0.0)  # an empty K_I (KORS kept no point)
            self.top = vectors[:, kept] / np.sqrt(values[kept])
        m, alpha = self.model_size, self.params.alpha
        if self.params.loss == "square":
            G, b = np.zeros((m, m)), np.zeros(m)
            for X, y in self._chunks:
                F = self.embed(X)
                G += F.T @ F
                b += F.T @ y
            self.w = np.linalg.solve(G + alpha * np.eye(m), b)
        else:
            F = np.concatenate([self.embed(X) for X, _ in self._chunks])
            y = np.concatenate([y for _, y in self._chunks])
            self.w = newton(F, y, alpha, self.params.loss)
        self._chunks = []

    def embed(self, X: np.ndarray) -> np.ndarray:
        """φ̃ of the rows of X: the Cholesky map, or with ``truncate`` the kept eigen-directions."""
        if self.top is None:
            return self.map.transform(X)
        return self.map.kernel(np.atleast_2d(X), self.kors.X) @ self.top

    def predict_one(self, x: np.ndarray) -> float:
        return float(self.embed(x)[0] @ self.w)

    def learn_one(self, x: np.ndarray, y: float) -> None:
        """The solution is fixed."""

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.embed(X) @ self.w

    @property
    def model_size(self) -> int:
        return self.map.dim if self.top is None else self.top.shape[1]


def newton(F: np.ndarray, y: np.ndarray, alpha: float, loss: str, steps: int = 100) -> np.ndarray:
    """argmin_w Σ_t ℓ(F_t w, y_t) + α ||w||² for a smooth training loss ℓ (:data:`okl.losses.SMOOTH`) by
    Newton's method with backtracking (Armijo, halving)."""
    m = F.shape[1]
    w, z = np.zeros(m), np.zeros(len(y))
    f = float(training_value(loss, z, y).sum())
    for _ in range(steps):
        d1, c = smooth_derivatives(loss, z, y)
        g = F.T @ d1 + 2.0 * alpha * w
        H = 2.0 * alpha * np.eye(m)
        for a in range(0, len(y), ROWS):
            Fa = F[a : a + ROWS]
            H += Fa.T @ (Fa * c[a : a + ROWS, None])
        step = cho_solve(cho_factor(H), g)
        t, slope = 1.0, float(g @ step)
        while True:
            w_new = w - t * step
            z_new = F @ w_new
            f_new = float(training_value(loss, z_new, y).sum() + alpha * w_new @ w_new)
            if f_new <= f - 1e-4 * t * slope or t < 1e-10:
                break
            t /= 2.0
        w, z, f = w_new, z_new, f_new
        if np.max(np.abs(t * step)) <= 1e-12 * max(np.max(np.abs(w)), 1e-300):
            break
    return w
