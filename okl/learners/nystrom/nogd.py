"""NOGD: Nyström online gradient descent (Lu, Hoi, Wang, Zhao, Liu, JMLR 2016; the NOGD baseline of
pros_n_kons_calandriello2017 Tables 1-2: "selects the first J points and uses them to construct an
embedding and then perform exact GD in the embedded space").

The first J inputs are the Nyström landmarks; rounds 1..J are kernel (functional) gradient descent,
which is exactly gradient descent in the growing embedding of :mod:`okl.dictionary.nystrom` (x_t
joins before round t is predicted, where the model has no weight on it yet). From round J + 1 on the
embedding is fixed and

    ŷ_t = w_tᵀ φ̃(x_t),     w_{t+1} = w_t − η ℓ'(ŷ_t, y_t) φ̃(x_t),     w_1 = 0.

Choices: landmarks are the first J rounds (no rank truncation of K_JJ); η constant, ``null`` gives
1/√n as FOGD in the PKAWV experiments.

Example: Gradient descent in the embedding of the first J points:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("nogd")(2, J=20, sigma=0.5, eta=0.2)
>>> y_hat = learner.predict_learn_block(X, y)
>>> learner.model_size, mse(y_hat)
(20, 0.0306)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from okl.dictionary.nystrom import NystromMap
from okl.kernels import Kernel
from okl.learners.base import BlockLearner, register
from okl.learners.ogd import ogd_block, warm_ogd
from okl.losses import TRAINING
from okl.params import GaussianParams
from okl.validation import integer_at_least, one_of, positive


@dataclass(frozen=True)
class NOGDParams(GaussianParams):
    """J: landmarks (the first J inputs); sigma: bandwidth; eta: step (None: 1/√n, or 1/√t without n); loss."""

    J: int = 30
    eta: float | None = None
    loss: str = "square"

    def __post_init__(self) -> None:
        super().__post_init__()
        integer_at_least("J", self.J, 1)
        if self.eta is not None:
            positive("eta", self.eta)
        one_of("loss", self.loss, TRAINING)


@register("nogd")
class NOGD(BlockLearner):
    """Gradient descent in the Nyström embedding of the first J inputs."""

    Params = NOGDParams

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        self.eta = self.step_size(p.eta)
        self.map = NystromMap(d, Kernel("gaussian", p.sigma))
        self.w = np.zeros(0)
        self.t = 0
        self._loss = TRAINING[p.loss]
        warm_ogd(self._loss)

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        out, dims = np.empty(len(y)), np.empty(len(y), dtype=np.int64)
        a = 0
        while a < len(y):
            if self.t < self.params.J:  # a landmark round: the embedding grows by x_t first
                if self.map.add(X[a]) is not None:
                    self.w = np.append(self.w, 0.0)
                b = a + 1
            else:
                b = len(y)
            ogd_block(self.map.transform(X[a:b]), y[a:b], self.w, self.eta.next(b - a), 0.0, self._loss, out[a:b])
            dims[a:b] = self.map.dim
            self.t += b - a
            a = b
        self.recorded = {"model_size": dims}
        return out

    def predict_one(self, x: np.ndarray) -> float:
        phi = self.map.transform(x)[0]
        return float(phi @ self.w)  # a landmark's own coordinate has weight 0 when it is predicted

    @property
    def model_size(self) -> int:
        return self.map.dim
