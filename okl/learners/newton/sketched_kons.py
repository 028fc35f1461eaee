"""Sketched-KONS (sketched_kons_calandriello2017 §5, Algorithm 3, Lemma 4, Theorem 3).

KONS (:mod:`okl.learners.newton.kons`) whose preconditioner keeps only sampled gradients, unweighted:

    Ã_t = Ã_{t-1} + η_t z_t g_t g_tᵀ,     z_t ~ Bernoulli(p̃_t),   p̃_t = max{min{β τ̃_t, 1}, γ},

with τ̃_t from an independent KORS run on the rescaled points φ̄_t = ġ_t √η_t φ_t (regularisation α,
accuracy ε, oversampling β; Algorithm 3, lines 8-10). The predictor still uses every past input
(O(t d) per round); the sketch costs O(|Ḡ|²) with |Ḡ| ≈ d_eff + γt. γ = 1 keeps every gradient
(exact KONS). KORS's coins and Sketched-KONS's coins are separate seeded streams.

The step is the online Newton recursion u_{t+1} = ω_t − Ã_t⁻¹ g_t of KONS on the sketched Ã_t (Algorithm 3,
lines 5 and 11). Lemma 4's closed form b̃_i = ġ_i √η_i (ỹ_i − α h(y̌_i)/(k_ii − …) − 1/η_i), read literally, keeps
the ỹ_i term of every gradient, which the recursion has only where z_i = 1 (the term comes from adding η g_i g_iᵀ
to Ã): the two agree when every gradient is kept (γ = 1) and differ otherwise (0.087 in the predictions on a
150-round stream at γ = 0.1, measured); okl follows the recursion, which Algorithm 3 prints, and a test plays it
from scratch (tests/test_paper_formulas.py).

Example: Only the KORS-sampled gradients enter the preconditioner:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("sketched_kons")(2, sigma=0.5, alpha=1.0, gamma=0.5, seed=0)
>>> y_hat = learner.predict_learn_block(X, y)
>>> mse(y_hat), mse(0 * y)
(0.0275, 0.5214)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from okl.dictionary.kors import KORS
from okl.dictionary.uniforms import Uniforms
from okl.errors import ConfigError
from okl.learners.base import KORSLearner, register
from okl.learners.newton.kons import KONS, KONSParams
from okl.params import KORSParams
from okl.seeding import rng
from okl.validation import non_negative


@dataclass(frozen=True)
class SketchedKONSParams(KORSParams, KONSParams):
    """KONS's keys and KORS's (:class:`~okl.params.KORSParams`) plus gamma (γ, the least sampling
    probability)."""

    gamma: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        non_negative("gamma", self.gamma)
        if self.gamma > 1:
            raise ConfigError(f"gamma is a probability: it must be in [0, 1] (got {self.gamma!r})")


@register("sketched_kons")
class SketchedKONS(KORSLearner, KONS):
    """KONS with a KORS-sampled, unweighted sketch of A_t."""

    Params = SketchedKONSParams

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        self.kors = KORS(d, self.kernel, p.alpha, p.eps, p.beta, p.seed, stream="sketched_kons/kors", weights=p.kors)
        self.coins = Uniforms(rng(p.seed, "sketched_kons/coins"))

    def footprint(self, rounds: int) -> tuple[int, str]:
        """The inputs and coefficients of every round (the sketch's size is not known ahead)."""
        return 8 * rounds * (self.d + 1), f"the inputs of n={rounds:,} rounds"

    def _keep(self, x: np.ndarray, g: float, eta: float) -> bool:
        _, tau, _ = self.kors.run(x[None, :], np.array([math.sqrt(eta) * g]))
        p = max(min(self.params.beta * tau[0], 1.0), self.params.gamma)
        return bool(self.coins.take(self.t, 1)[0] < p) and g != 0.0

    @property
    def model_size(self) -> int:
        return self.t

    def diagnostics(self, rounds: int) -> dict[str, np.ndarray]:
        return {"model_size": np.arange(self.t - rounds + 1, self.t + 1, dtype=np.int64)}
