"""NOGD: Nyström online gradient descent (Lu, Hoi, Wang, Zhao, Liu, JMLR 2016; the NOGD baseline of
pros_n_kons_calandriello2017 Tables 1-2: "selects the first J points and uses them to construct an
embedding and then perform exact GD in the embedded space").

The first J inputs are the Nyström landmarks; rounds 1..J are kernel (functional) gradient descent,
which is exactly gradient descent in the growing embedding of :mod:`okl.dictionary.nystrom` (x_t
joins before round t is predicted, where the model has no weight on it yet). From round J + 1 on the
embedding is fixed and

    ŷ_t = w_tᵀ φ̃(x_t),     w_{t+1} = w_t − η ℓ'(ŷ_t, y_t) φ̃(x_t),     w_1 = 0.

Choices: landmarks are the first J rounds and the embedding keeps every direction of K_JJ; η constant,
``null`` gives 1/√n as FOGD in the PKAWV experiments. With a dead zone ε > 0, the landmarks are the first J
rounds that step instead (below).

Lu et al.'s released regression code (``regression/NysGD.m``, the source of pros_n_kons_calandriello2017
Table 1's NOGD rows) differs in two ways, both options here: a dead zone ``epsilon`` (a round steps only when
|ŷ − y| > ε, ε = 0.1 there), so the landmarks are the first J rounds that step; and ``rank``: at the first round
that steps after the J-th landmark, the embedding becomes the top-k eigen-directions of K_JJ = VΛVᵀ,
ψ(x) = Λ_k^{-1/2} V_kᵀ k_J(x) (k = 0.2 J = 6 there), the model f = αᵀk_J carried over as w = Λ_k^{1/2} V_kᵀ α
(the projection of α on those directions, their ``w = α pinv(MM)``), and that round's step taken in the new
embedding with the residual of the full model's prediction. Their step η_L on δ = y − ŷ is η = η_L / 2 here
(ℓ' = 2(ŷ − y)). A test checks a port of their code round by round.

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

from dataclasses import dataclass, field

import numpy as np

from okl.dictionary.nystrom import NystromMap
from okl.errors import ConfigError
from okl.kernels import Kernel
from okl.learners.base import BlockLearner, register
from okl.learners.ogd import ogd_block, warm_ogd
from okl.losses import TRAINING, derivative
from okl.params import ADDED, GaussianParams, dead_zone
from okl.validation import integer_at_least, one_of, positive


@dataclass(frozen=True)
class NOGDParams(GaussianParams):
    """J: landmarks (the first J rounds that step: the first J rounds without a dead zone); sigma: bandwidth; eta:
    step (None: 1/√n, or 1/√t without n); loss; rank: the top eigen-directions of K_JJ the embedding keeps once the
    landmarks are in (None or J: all; see the module); epsilon: the dead zone (:func:`~okl.params.dead_zone`)."""

    J: int = 30
    eta: float | None = None
    loss: str = "square"
    rank: int | None = field(default=None, metadata=ADDED)
    epsilon: float = field(default=0.0, metadata=ADDED)

    def __post_init__(self) -> None:
        super().__post_init__()
        integer_at_least("J", self.J, 1)
        if self.eta is not None:
            positive("eta", self.eta)
        one_of("loss", self.loss, TRAINING)
        if self.rank is not None:
            integer_at_least("rank", self.rank, 1)
            if self.rank > self.J:
                raise ConfigError(f"rank={self.rank} exceeds the J={self.J} landmarks: set rank <= J (or null: all)")
        dead_zone(self.epsilon, self.loss)


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
        self.stepped = 0  # landmark rounds so far: the rounds that stepped while fewer than J had (all when ε = 0)
        self.top: np.ndarray | None = None  # Λ_k^{-1/2} V_kᵀ once the embedding keeps the top k directions
        self._loss = TRAINING[p.loss]
        warm_ogd(self._loss)

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        p = self.params
        out, dims = np.empty(len(y)), np.empty(len(y), dtype=np.int64)
        a = 0
        while a < len(y):
            b = a + 1
            if self.stepped < p.J:
                self._landmark(X[a], y[a:b], out[a:b])
            elif self.top is None and p.rank is not None and p.rank < self.map.dim:
                self._switch(X[a], y[a], out[a:b])
            else:
                b = len(y)
                ogd_block(self._features(X[a:b]), y[a:b], self.w, self.eta.next(b - a), 0.0, self._loss, p.epsilon,
                          out[a:b])  # fmt: skip
            dims[a:b] = self.map.dim
            a = b
        self.recorded = {"model_size": dims}
        return out

    def _landmark(self, x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        """A round while fewer than J rounds have stepped (``y``, ``out``: the round's one-element slices): if it
        steps, x_t joins the landmarks first (its own coordinate has no weight yet, so the prediction is the same)
        and the step is kernel gradient descent."""
        eps, eta = self.params.epsilon, self.eta.next(1)
        if eps:
            out[0] = self._features(x[None, :])[0] @ self.w
            if abs(out[0] - y[0]) <= eps:
                return
        if self.map.add(x) is not None:
            self.w = np.append(self.w, 0.0)
        ogd_block(self.map.transform(x[None, :]), y, self.w, eta, 0.0, self._loss, 0.0, out)
        self.stepped += 1

    def _switch(self, x: np.ndarray, y: float, out: np.ndarray) -> None:
        """A round after the J-th landmark, before the embedding keeps its top ``rank`` directions: predicted by
        the full model; if it steps, the embedding and the model switch (see the module), then the step."""
        eps, (eta,) = self.params.epsilon, self.eta.next(1)
        out[0] = y_hat = self._features(x[None, :])[0] @ self.w
        if eps and abs(y_hat - y) <= eps:
            return
        values, vectors = np.linalg.eigh(self.map.kernel(self.map.Z, self.map.Z))
        values, vectors = values[::-1][: self.params.rank], vectors[:, ::-1][:, : self.params.rank]
        alpha = self.map.R_inv.T @ self.w  # f = wᵀR⁻¹k_J = αᵀk_J
        self.top = vectors.T / np.sqrt(values)[:, None]
        self.w = np.sqrt(values) * (vectors.T @ alpha)
        self.w -= eta * derivative(self._loss, y_hat, y) * self._features(x[None, :])[0]

    def _features(self, X: np.ndarray) -> np.ndarray:
        """The embedding of the rows of X: φ̃ (:class:`NystromMap`), or ψ once the top directions are kept."""
        return self.map.transform(X) if self.top is None else self.map.kernel(X, self.map.Z) @ self.top.T

    def predict_one(self, x: np.ndarray) -> float:
        return float(self._features(x[None, :])[0] @ self.w)  # a landmark's own coordinate has weight 0 then

    @property
    def model_size(self) -> int:
        return self.map.dim
