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

``variant=code`` runs Raker as the authors' released code does instead (its features, step and
kernel-weight rule differ from the text): :mod:`okl.learners.multikernel.raker_code`.

Example:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).random((200, 3)); y = X.sum(axis=1) / 3
>>> for variant in ("paper", "code"):
...     raker = LEARNERS.get("raker")(3, variant=variant)
...     print(variant, round(float(np.mean((raker.predict_learn_block(X, y) - y) ** 2)), 3))
paper 0.011
code 0.01
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from okl.errors import ConfigError
from okl.learners.base import register
from okl.learners.ensembles.ewa import EWA
from okl.learners.multikernel.raker_code import RakerCode
from okl.validation import integer_at_least, non_negative, one_of, positive, seed, squared_bandwidth

# The default step of each variant: §4's η = 0.5 for the text's Raker; for the code's, whose step
# η/10 on the gradient −2(y − f)z with ||z||² = D is a least-mean-squares gain of ηD/5 (5 at D = 50:
# every kernel diverges at η = 0.5), the largest rate the code itself uses, AdaRaker's 0.1/2.
STEPS = {"paper": 0.5, "code": 0.05}
# The top-level σ does not reach a multi-kernel learner: its kernels are the list sigma2.
KERNELS = {"sigma": "learner.sigma2, its list of Gaussian widths σ² (one kernel each, e.g. [0.1, 1, 10])"}


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
            squared_bandwidth("sigma2", s2)
        positive("eta", self.eta)
        non_negative("lam", self.lam)


@dataclass(frozen=True)
class RakerParams(EnsembleParams):
    """sigma2, eta (None: the variant's default), lam; D: random features per kernel; seed; variant:
    ``paper`` (the text) or ``code`` (the authors' code, :mod:`okl.learners.multikernel.raker_code`; each value of
    sigma2 then multiplies the frequencies)."""

    eta: float | None = None  # None: the variant's (STEPS)
    D: int = 50
    seed: int = 0
    variant: str = "paper"

    def __post_init__(self) -> None:
        seed("seed", self.seed)
        one_of("variant", self.variant, STEPS)
        if self.eta is None:
            object.__setattr__(self, "eta", STEPS[self.variant])
        super().__post_init__()
        integer_at_least("D", self.D, 1)


@register("raker")
class Raker(EWA):
    """Exponential weights over P random-feature kernel experts (Algorithm 1)."""

    Params = RakerParams
    tasks = ("regression",)
    instead = KERNELS
    lighter = "lower learner.D"

    def __new__(cls, *args, **params):  # variant=code: the code's learner (copies and pickles pass no args)
        return super().__new__(_RakerCode if cls is Raker and params.get("variant") == "code" else cls)

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


class _RakerCode(RakerCode, Raker):
    """``raker`` with ``variant=code``."""
