"""Online gradient descent in a Gaussian RKHS with an explicit support-vector expansion: the
single-kernel baseline of raker_shen2018 §4 ("RBF", η = 1/√T) and the expert of OMKL.

    f_t = Σ_{s<t} α_s k(x_s, ·),   ŷ_t = f_t(x_t),
    f_{t+1} = (1 − ηλ) f_t − η ℓ'(ŷ_t, y_t) k(x_t, ·)     (the functional gradient of ℓ + (λ/2)||f||²),

so every round adds the support vector x_t with α_t = −η ℓ'(ŷ_t, y_t) and shrinks the others by 1 − ηλ.
Step convention: ℓ is the loss as :mod:`okl.losses` defines it, the square loss (ŷ − y)² with
ℓ' = 2(ŷ − y). Raker and OMKL step on raker_shen2018's ½(ŷ − y)² (:mod:`okl.learners.multikernel.raker`), so at one
η this learner's step is twice theirs: give it η/2 to compare equal steps (``learner.eta``). It keeps the
project's loss so that its η means the same as fogd's and nogd's, its first-order neighbours.
A round costs O(m d) for m support vectors (m = t without a budget). Choice for ``budget`` = B: once
B vectors are kept, the new one replaces the oldest (first in, first out, as the Forgetron's removal),
so long streams cost O(B d) per round. Rounds run in a compiled loop; the support vectors sit in a
circular buffer (the prediction does not depend on their order).

Example: At most ``budget`` support vectors are kept:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("rbf_ogd")(2, sigma=0.5, eta=0.3, budget=50)
>>> y_hat = learner.predict_learn_block(X, y)
>>> learner.model_size, mse(y_hat)
(50, 0.0809)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from okl.jit import njit
from okl.kernels import squared_distance
from okl.learners.base import BlockLearner, register
from okl.losses import TRAINING, derivative
from okl.params import GaussianParams
from okl.validation import integer_at_least, non_negative, one_of, positive
from okl.warmup import warm


@dataclass(frozen=True)
class RBFOGDParams(GaussianParams):
    """sigma: bandwidth σ; eta: step η (None: 1/√n, or 1/√t without n); lam: ridge λ; loss; budget: most support
    vectors kept (None: all)."""

    eta: float | None = None
    lam: float = 0.0
    loss: str = "square"
    budget: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.eta is not None:
            positive("eta", self.eta)
        non_negative("lam", self.lam)
        one_of("loss", self.loss, TRAINING)
        if self.budget is not None:
            integer_at_least("budget", self.budget, 1)


@register("rbf_ogd")
class RBFOGD(BlockLearner):
    """Kernel online gradient descent on a Gaussian kernel."""

    Params = RBFOGDParams
    lighter = "set learner.budget (the most support vectors kept)"

    def footprint(self, rounds: int) -> tuple[int, str]:
        """The support vectors and their coefficients, grown by doubling: 16·m·(d + 1) bytes for m vectors."""
        kept = rounds if self.params.budget is None else min(rounds, self.params.budget)
        return 16 * kept * (self.d + 1), f"{kept:,} support vectors of n={rounds:,} rounds"

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        self.eta = self.step_size(p.eta)
        self.S = np.zeros((64 if p.budget is None else min(p.budget, 64), d))  # support vectors
        self.alpha = np.zeros(len(self.S))
        self.count, self.head = 0, 0  # vectors kept; slot the next one replaces when the budget is full
        self._loss = TRAINING[p.loss]
        one = np.zeros((1, d)), np.zeros(1), np.zeros((1, d)), np.zeros(1), 0, 0, 1, 1.0, np.ones(1), 0.0, self._loss
        warm(_play, *one, np.empty(1))  # compile (or load) them now, not inside timed rounds
        warm(_predict, np.zeros((1, d)), np.zeros((1, d)), np.zeros(1), 1.0, np.empty(1))

    def predict_one(self, x: np.ndarray) -> float:
        return float(self.predict_many(x[None, :])[0])

    def predict_many(self, X: np.ndarray) -> np.ndarray:
        out = np.empty(len(X))
        _predict(X, self.S[: self.count], self.alpha[: self.count], self.params.sigma, out)
        return out

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        p = self.params
        cap = self.count + len(y) if p.budget is None else min(self.count + len(y), p.budget)
        if cap > len(self.S):  # grow (by doubling, up to the budget) before the compiled loop: budget=10**10 on a
            size = max(cap, 2 * len(self.S))  # short run was a 596 GiB MemoryError, past footprint's min(n, budget)
            size = size if p.budget is None else min(size, p.budget)
            S, alpha = np.zeros((size, self.d)), np.zeros(size)
            S[: self.count], alpha[: self.count] = self.S[: self.count], self.alpha[: self.count]
            self.S, self.alpha = S, alpha
        out = np.empty(len(y))
        limit = len(self.S) if p.budget is None else p.budget
        n, count = len(y), self.count  # one vector more per round, up to the limit
        if count >= limit:
            sizes = np.full(n, limit)
        else:
            sizes = np.arange(count + 1, count + n + 1)
            if count + n > limit:
                np.minimum(sizes, limit, out=sizes)
        self.recorded = {"model_size": sizes}
        self.count, self.head = _play(
            X, y, self.S, self.alpha, self.count, self.head, limit, p.sigma, self.eta.next(n), p.lam, self._loss, out
        )
        return out

    @property
    def model_size(self) -> int:
        return self.count


@njit
def _value(x, S, alpha, count, inv2s2):
    s = 0.0
    for j in range(count):
        s += alpha[j] * math.exp(-squared_distance(x, S[j]) * inv2s2)
    return s


@njit
def _predict(X, S, alpha, sigma, out):
    inv2s2 = 0.5 / (sigma * sigma)
    for b in range(X.shape[0]):
        out[b] = _value(X[b], S, alpha, len(alpha), inv2s2)


@njit
def _play(X, y, S, alpha, count, head, limit, sigma, eta, lam, loss, out):
    """Rounds in order: predict, shrink by 1 − η_t λ, add x_t with α_t = −η_t ℓ'(ŷ_t, y_t) (η_t = ``eta[b]``;
    replacing the oldest vector once ``limit`` are kept). Returns (count, head)."""
    inv2s2 = 0.5 / (sigma * sigma)
    for b in range(X.shape[0]):
        y_hat = _value(X[b], S, alpha, count, inv2s2)
        out[b] = y_hat
        keep = 1.0 - eta[b] * lam
        if keep != 1.0:
            for j in range(count):
                alpha[j] *= keep
        slot = count if count < limit else head
        S[slot] = X[b]
        alpha[slot] = -eta[b] * derivative(loss, y_hat, y[b])
        if count < limit:
            count += 1
        else:
            head = (head + 1) % limit
    return count, head
