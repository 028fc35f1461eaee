"""FOGD: Fourier online gradient descent (Lu, Hoi, Wang, Zhao, Liu, JMLR 2016; the FOGD baseline of
pkawv_jezequel2019 §4 and pros_n_kons_calandriello2017 Tables 1-2).

Online gradient descent on the random Fourier features z_V of the Gaussian kernel:

    ŷ_t = w_tᵀ z_V(x_t),     w_{t+1} = w_t - η ℓ'(ŷ_t, y_t) z_V(x_t),     w_1 = 0,

with a constant step η (the PKAWV paper uses η = 1/√n; ``eta: null`` selects it from the run's
number of rounds, or the anytime η_t = 1/√t when that is unknown: :class:`okl.learners.base.StepSize`).

Choices (the papers leave them open):
- Feature normalisation: z_V(x) = D^{-1/2}[sin(Vx); cos(Vx)] with D frequencies (raker_shen2018
  eq. (9)), so ||z_V(x)||² = 1 and z_V(x)ᵀz_V(x') is an unbiased estimate of k(x, x'). The map has
  2D coordinates; ``D`` counts frequencies as in Lu et al. Without the D^{-1/2} (their MATLAB
  code), the same η would be D times larger.
- Loss: ``square`` (ℓ = (ŷ - y)², the evaluation loss, also on ±1 labels as in the PKAWV
  experiments), ``hinge`` or ``logistic`` (Lu et al.'s classification losses); see
  :mod:`okl.losses`.
- Dead zone ``epsilon``: no step at a round whose |ŷ − y| ≤ ε (0: none). Lu et al.'s released regression
  code (``regression/FouGD.m``: w ← w + η_L δ z on unnormalised features, δ = y − ŷ, when |δ| > 0.1) is this
  learner with η = η_L D / 2 and ε = 0.1 (a test checks a port of it round by round).

Example: Gradient descent on D random Fourier frequencies (2D features):

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("fogd")(2, D=100, sigma=0.5, eta=0.2, seed=0)
>>> y_hat = learner.predict_learn_block(X, y)
>>> learner.model_size, mse(y_hat)
(200, 0.0414)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from okl.errors import ConfigError
from okl.features.random_fourier import RandomFourierFeatures
from okl.learners.base import Learner, register
from okl.learners.ogd import ogd_block, warm_ogd
from okl.losses import TRAINING
from okl.params import ADDED, GaussianParams, dead_zone
from okl.validation import integer_at_least, non_negative, one_of, positive, seed

EMBEDDED = 64 << 20  # bytes of features a block embeds at once (:meth:`FOGD.predict_learn_block`)


@dataclass(frozen=True)
class FOGDParams(GaussianParams):
    """D: number of frequencies; sigma: bandwidth σ; eta: step η (None: 1/√n, or 1/√t without n); loss; seed;
    orthogonal: orthogonal random features (raker_shen2018 eq. (12)) instead of i.i.d. Gaussian rows;
    lam: ridge λ, each step descends ℓ(θᵀz, y) + (λ/2)||θ||² (θ ← (1 − ηλ)θ − ηℓ'z; 0: none);
    epsilon: no step at a round whose |ŷ − y| ≤ ε (:func:`~okl.params.dead_zone`; with lam = 0 only, since a round
    in the dead zone would skip its decay too)."""

    D: int = 1000
    eta: float | None = None
    loss: str = "square"
    seed: int = 0
    orthogonal: bool = False
    lam: float = 0.0
    epsilon: float = field(default=0.0, metadata=ADDED)

    def __post_init__(self) -> None:
        super().__post_init__()
        seed("seed", self.seed)
        integer_at_least("D", self.D, 1)
        if self.eta is not None:
            positive("eta", self.eta)
        one_of("loss", self.loss, TRAINING)
        non_negative("lam", self.lam)
        dead_zone(self.epsilon, self.loss)
        if self.epsilon and self.lam:
            raise ConfigError("a dead zone (epsilon) skips whole steps, a ridge (lam) decays at each: set one to 0")


@register("fogd")
class FOGD(Learner):
    """Fourier online gradient descent with D random frequencies (2D features)."""

    Params = FOGDParams

    def footprint(self, rounds: int) -> tuple[int, str]:
        """The D×d frequencies, the 2D weights and a round's 2D features (a block's are B×2D more)."""
        D = self.params.D
        return 8 * D * (self.d + 4), f"D={D:,} frequencies in d={self.d} and their {2 * D:,} features"

    def memory_advice(self, budget: int, rounds: int) -> str:
        return f"lower learner.D (at most {budget // (8 * (self.d + 4)):,} fit)"

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        self.eta = self.step_size(p.eta)
        self.features = RandomFourierFeatures(d, p.D, p.sigma, p.seed, orthogonal=p.orthogonal)
        self.w = np.zeros(self.features.dim)
        self._loss = TRAINING[p.loss]
        self._last: tuple[np.ndarray, np.ndarray] | None = None  # the last predict_one's x and features
        warm_ogd(self._loss)

    def predict_one(self, x: np.ndarray) -> float:
        z = self.features.transform(x)
        self._last = (x.copy(), z)  # learn_one(x, y) plays this round on these features
        return float(z[0] @ self.w)

    def learn_one(self, x: np.ndarray, y: float) -> None:
        """One round of :func:`~okl.learners.ogd.ogd_block` (its step, decay and dead zone: one definition), on
        the features the prediction of this x computed (the same bits as embedding it again)."""
        last, self._last = self._last, None
        z = last[1] if last is not None and np.array_equal(last[0], x) else self.features.transform(x)
        self._play(z, np.array([y]), np.empty(1))

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The block's rounds embedded ``EMBEDDED`` bytes of features at a time (all at once below D ≈ 16,000 at 256
        rounds): learner.D=10000000 embedded a 256-round block in one 38 GiB array, an internal MemoryError past the
        memory check of the state."""
        out = np.empty(len(y))
        rows = max(1, EMBEDDED // (8 * self.features.dim))
        for a in range(0, len(y), rows):
            self._play(self.features.transform(X[a : a + rows]), y[a : a + rows], out[a : a + rows])
        return out

    def _play(self, Z: np.ndarray, y: np.ndarray, out: np.ndarray) -> np.ndarray:
        p = self.params
        ogd_block(Z, y, self.w, self.eta.next(len(y)), p.lam, self._loss, p.epsilon, out)
        return out

    @property
    def model_size(self) -> int:
        return self.features.dim
