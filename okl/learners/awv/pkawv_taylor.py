"""PKAWV with the Taylor basis of the Gaussian kernel (pkawv_jezequel2019, §3.1, Theorem 4).

PKAWV (eq. (4)) with the fixed subspace H = Span(G_M) of eq. (6) is linear AWV on the r = C(d+M, M)
Taylor features (Appendix H.1, Algorithm 1):

    ŷ_t = φ(x_t)ᵀ A_t⁻¹ b_{t-1},   A_t = λI + Σ_{s<=t} φ(x_s)φ(x_s)ᵀ,   b_{t-1} = Σ_{s<t} y_s φ(x_s).

Blocks run through :class:`~okl.linalg.online_ridge.OnlineRidge` (LDLᵀ innovations, BLAS-3).

Example: The Taylor features approach the exact Kernel-AWV as the degree M grows:

>>> import numpy as np
>>> from okl.learners import LEARNERS
>>> X = np.random.default_rng(0).uniform(-1, 1, (400, 2)); y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
>>> mse = lambda y_hat: round(float(np.mean((y - y_hat) ** 2)), 4)
>>> exact = LEARNERS.get("kernel_awv")(2, sigma=1.0, lam=1.0).predict_learn_block(X, y)
>>> for M in (1, 3, 6):
...     y_hat = LEARNERS.get("pkawv_taylor")(2, M=M, sigma=1.0, lam=1.0).predict_learn_block(X, y)
...     print(M, f"{np.max(np.abs(y_hat - exact)):.1e}")
1 4.2e-01
3 3.7e-02
6 2.3e-03
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from okl import system
from okl.features.taylor import TaylorFeatures, taylor_dim
from okl.learners.base import Learner, register
from okl.linalg.online_ridge import OnlineRidge
from okl.params import KernelParams
from okl.validation import integer_at_least


@dataclass(frozen=True)
class TaylorParams(KernelParams):
    """M: maximal degree |k|, with the kernel's sigma (bandwidth σ) and lam (regularisation λ)."""

    M: int = 2

    def __post_init__(self) -> None:
        integer_at_least("M", self.M, 1)
        super().__post_init__()


@register("pkawv_taylor")
class PKAWVTaylor(Learner):
    """PKAWV on the Taylor features of eq. (6); the forecaster divides ridge by 1 + h_t."""

    Params = TaylorParams
    awv: ClassVar[bool] = True

    def __init__(self, d: int, *, horizon: int | None = None, **params) -> None:
        super().__init__(d, horizon=horizon, **params)
        p = self.params
        self.features = TaylorFeatures(d, p.M, p.sigma)
        self.ridge = OnlineRidge(self.features.dim, p.lam, awv=self.awv)

    def footprint(self, rounds: int) -> tuple[int, str]:
        """The r×r state of the r = C(d+M, M) Taylor features (it does not grow with the rounds)."""
        r = taylor_dim(self.d, self.params.M)
        return OnlineRidge.state_bytes(
            r
        ), f"d={self.d}, M={self.params.M} gives {r:,} Taylor features (C(d+M, M)) and an {r:,}×{r:,} state"

    def memory_advice(self, budget: int, rounds: int) -> str:
        fitting = _largest_fitting_degree(self.d, self.params.M, budget)
        if not fitting:
            return "no degree fits: reduce the input dimension"
        size = OnlineRidge.state_bytes(taylor_dim(self.d, fitting)) / system.GIB
        return f"lower M (M={fitting} gives a {size:,.2f} GiB state)"

    def predict_one(self, x: np.ndarray) -> float:
        return self.ridge.predict(self.features.transform(x)[0])

    def learn_one(self, x: np.ndarray, y: float) -> None:
        self.ridge.update(self.features.transform(x)[0], y)

    def predict_learn_block(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.ridge.predict_update_block(self.features.transform(X), y)

    @property
    def model_size(self) -> int:
        return self.features.dim


def _largest_fitting_degree(d: int, M: int, budget: int) -> int:
    """The largest degree below M whose state fits ``budget`` bytes; 0 when none does."""
    return next((m for m in range(M - 1, 0, -1) if OnlineRidge.state_bytes(taylor_dim(d, m)) <= budget), 0)
