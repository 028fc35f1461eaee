"""Raker: random-feature multi-kernel learning (raker_shen2018 §2, Algorithm 1, eqs. (13)–(16)).

P Gaussian kernels κ_p (bandwidths σ_p² ∈ ``sigma2``, default {0.1, 1, 10} as in §4), each an expert
f_{p,t}(x) = θ_{p,t}ᵀ z_p(x) on its own D orthogonal random features (eq. (12)), combined by
exponential weights:

    ŷ_t = Σ_p w̄_{p,t} θ_{p,t}ᵀ z_p(x_t)                                 (13), (15)
    w_{p,t+1} = w_{p,t} exp(−η ℓ(θ_{p,t}ᵀ z_p(x_t), y_t))                  (14)
    θ_{p,t+1} = θ_{p,t} − η ∇[ℓ(θᵀ z_p(x_t), y_t) + (λ/2)||θ||²]_{θ_{p,t}}    (16), with the λ of eq. (2)

Choice: ℓ is the paper's least-squares cost ℓ(ŷ, y) = ½(ŷ − y)², whose gradient is (θᵀz − y)z as §2.3
writes; in the project's square loss (ŷ − y)² (the experts' ``fogd`` and ``ewa``'s weights) this is
rate η/2 on both, and ridge 2λ on the (λ/2)||θ||² term of ``fogd``. Raker is therefore ``ewa`` over
``fogd`` experts (orthogonal features, step η/2, ``lam`` 2λ); expert p draws its features with seed
``seed·P + p``. Defaults: §4's D = 50, η = 0.5, λ = 0.01. Cost per round O(P D d).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from okl.errors import ConfigError
from okl.learners.base import register
from okl.learners.ewa import EWA
from okl.validation import integer_at_least, non_negative, positive


@dataclass(frozen=True)
class EnsembleParams:
    """sigma2: the kernels' σ²; eta: η of eqs. (14) and (16); lam: λ of eq. (2)."""

    sigma2: tuple[float, ...] = (0.1, 1.0, 10.0)
    eta: float = 0.5
    lam: float = 0.01

    def __post_init__(self) -> None:
        if not self.sigma2:
            raise ConfigError("sigma2 must list at least one kernel bandwidth σ² (e.g. [0.1, 1, 10])")
        for s2 in self.sigma2:
            positive("sigma2", s2)
        positive("eta", self.eta)
        non_negative("lam", self.lam)


@dataclass(frozen=True)
class RakerParams(EnsembleParams):
    """sigma2, eta, lam; D: random features per kernel; seed."""

    D: int = 50
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        integer_at_least("D", self.D, 1)


@register("raker")
class Raker(EWA):
    """Exponential weights over P random-feature kernel experts (Algorithm 1)."""

    Params = RakerParams
    tasks = ("regression",)

    @property
    def rate(self) -> float:
        return self.params.eta / 2  # η on ½(ŷ − y)²

    @property
    def loss(self) -> str:
        return "square"

    def expert_configs(self) -> list[Mapping]:
        p, P = self.params, len(self.params.sigma2)
        return [
            {
                "name": "fogd",
                "D": p.D,
                "sigma": math.sqrt(s2),
                "eta": p.eta / 2,
                "lam": 2 * p.lam,
                "orthogonal": True,
                "seed": p.seed * P + i,
            }
            for i, s2 in enumerate(p.sigma2)
        ]
