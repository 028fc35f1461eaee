"""OMKL: online multiple kernel regression (Sahoo, Hoi & Li 2014), the baseline of raker_shen2018 §4.

Kernel experts with growing support vectors (:mod:`okl.learners.multikernel.rbf_ogd`, one per σ² of ``sigma2``)
combined by Hedge weights: Raker's Algorithm 1 with exact kernels in place of random features, in the
same units (ℓ = ½(ŷ − y)²: expert step η/2 with ridge 2λ, weight rate η/2; §4's η = 0.5, λ = 0.01).
A round costs O(P m d) for m support vectors per kernel (m = t); ``budget`` keeps the m most recent
vectors per kernel so that long streams finish.

Example: Kernel experts with growing support-vector expansions (at most ``budget`` each):

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> learner = LEARNERS.get("omkl")(2, sigma2=(0.1, 1.0), budget=50)
>>> y_hat = learner.predict_learn_block(X, y)
>>> learner.model_size, mse(y_hat)
(100, 0.0944)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from okl.learners.base import register
from okl.learners.multikernel.raker import EnsembleParams, Raker
from okl.validation import integer_at_least


@dataclass(frozen=True)
class OMKLParams(EnsembleParams):
    """sigma2, eta, lam as Raker; budget: support vectors kept per kernel (None: all)."""

    budget: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.budget is not None:
            integer_at_least("budget", self.budget, 1)


@register("omkl")
class OMKL(Raker):
    """Hedge over Gaussian-kernel OGD experts with support vectors."""

    Params = OMKLParams
    lighter = "set learner.budget (the most support vectors kept per kernel)"

    def expert_configs(self) -> list[Mapping]:
        p = self.params
        return [
            {"name": "rbf_ogd", "sigma": math.sqrt(s2), "eta": p.eta / 2, "lam": 2 * p.lam, "budget": p.budget}
            for s2 in p.sigma2
        ]
