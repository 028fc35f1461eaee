"""Sketched-KONS (sketched_kons_calandriello2017 §5, Algorithm 3, Lemma 4, Theorem 3).

KONS (:mod:`okl.learners.kons`) whose preconditioner keeps only sampled gradients, unweighted:

    Ã_t = Ã_{t-1} + η_t z_t g_t g_tᵀ,     z_t ~ Bernoulli(p̃_t),   p̃_t = max{min{β τ̃_t, 1}, γ},

with τ̃_t from an independent KORS run on the rescaled points φ̄_t = ġ_t √η_t φ_t (regularisation α,
accuracy ε, oversampling β; Algorithm 3, lines 8-10). The predictor still uses every past input
(O(t d) per round); the sketch costs O(|Ḡ|²) with |Ḡ| ≈ d_eff + γt. γ = 1 keeps every gradient
(exact KONS). KORS's coins and Sketched-KONS's coins are separate seeded streams.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from okl.dictionary.kors import KORS, WEIGHTS
from okl.dictionary.uniforms import Uniforms
from okl.errors import ConfigError
from okl.learners.base import KORSLearner, register
from okl.learners.kons import KONS, KONSParams
from okl.seeding import rng
from okl.validation import non_negative, one_of, positive


@dataclass(frozen=True)
class SketchedKONSParams(KONSParams):
    """KONS's keys plus gamma (γ, the least sampling probability), eps (ε), beta (β), kors (KORS's
    weights), seed."""

    gamma: float = 0.0
    eps: float = 0.5
    beta: float = 1.0
    kors: str = "eq4"
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        non_negative("gamma", self.gamma)
        if self.gamma > 1:
            raise ConfigError(f"gamma is a probability: it must be in [0, 1] (got {self.gamma!r})")
        positive("eps", self.eps)
        positive("beta", self.beta)
        one_of("kors", self.kors, WEIGHTS)


@register("sketched_kons")
class SketchedKONS(KORSLearner, KONS):
    """KONS with a KORS-sampled, unweighted sketch of A_t."""

    Params = SketchedKONSParams

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        self.kors = KORS(d, self.kernel, p.alpha, p.eps, p.beta, p.seed, stream="sketched_kons/kors", weights=p.kors)
        self.coins = Uniforms(rng(p.seed, "sketched_kons/coins"))

    def _keep(self, x: np.ndarray, g: float, eta: float) -> bool:
        _, tau, _ = self.kors.run(x[None, :], np.array([math.sqrt(eta) * g]))
        p = max(min(self.params.beta * tau[0], 1.0), self.params.gamma)
        return bool(self.coins.take(self.t, 1)[0] < p) and g != 0.0

    @property
    def model_size(self) -> int:
        return self.t
